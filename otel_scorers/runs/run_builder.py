"""Spans of one trace to `AgentRun`s: the rules every convention shares, in three phases.

Each tool and model span belongs to its nearest run ancestor, so a sub-agent is its own run and
the outer run sees only the tool call that started it. Input and output come from the run span
when it carries them, else from its first and last model spans. Tool spans are matched to the
tool-call parts of the model's output by call id, or by order and name when ids are absent;
a requested call that no finished tool span answers is `incomplete`. When the run span names no
agent or holds no request or answer, the spans inside it that play no role may
(`Convention.step_content`): the first one's agent and request, the last one's answer.
"""

from __future__ import annotations

from collections.abc import Iterable

from otel_scorers.conventions.formats.parsed_texts import ParsedTexts, parsing_once
from otel_scorers.model import AgentRun
from otel_scorers.runs.run_assembly import assemble_runs
from otel_scorers.runs.run_parts import RunParts
from otel_scorers.runs.run_reading import read_run
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.span_record import SpanRecord


def build_runs(spans: Iterable[SpanRecord], only: Iterable[int] | None = None) -> list[AgentRun]:
    """Every run in `spans` (one trace), or only those whose run span id is in `only`: the role
    of each span (`span_roles`), the spans of each run (`run_assembly`), each run read
    (`run_reading`) when a scorer first reads it."""
    wanted = set(only) if only is not None else None
    # The message texts parsed while the runs are found are remembered for their reading, which
    # happens when a scorer first reads a run (`lazy_run`).
    parsed: ParsedTexts = {}
    found = parsing_once(parsed, _assembled, spans)
    return [read_run(parts, parsed) for parts in found if wanted is None or parts.span.span_id in wanted]


def _assembled(spans: Iterable[SpanRecord]) -> list[RunParts]:
    return assemble_runs(span_roles(spans))
