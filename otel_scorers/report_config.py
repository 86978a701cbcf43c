"""The `report:` section of the configuration file: how `score --html`'s page links each run to
its trace."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator


class ReportConfig(BaseModel):
    """`trace_url`: a URL with `{trace_id}` (and optionally `{span_id}`), e.g.
    `http://jaeger:16686/trace/{trace_id}` or Grafana's Tempo explore URL; unset, runs are named
    by their trace id, unlinked."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    trace_url: str | None = None

    @field_validator("trace_url")
    @classmethod
    def _a_web_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL, got {value!r}")
        if "{trace_id}" not in value:
            raise ValueError(f"must hold {{trace_id}} where the trace's id goes, got {value!r}")
        return value
