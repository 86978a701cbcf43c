"""The OTLP exporters of each signal, made in one place from one `ExportConfig`, as the SDK's
`_configuration` makes them from its environment: the sidecar's telemetry, a backfill's, the
demo's one-off send, the example traffic and the written scores' senders all get theirs here.
What the settings leave unset falls back to the SDK's `OTEL_EXPORTER_OTLP_*` variables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from otel_scorers.otlp.endpoint import (
    PROTOCOLS,
    OtlpProtocol,
    default_endpoint,
    environment_endpoint,
    environment_protocol,
)
from otel_scorers.setting_bounds import MAX_SECONDS

Signal = Literal["traces", "logs", "metrics"]
_SIGNAL_PATHS: dict[Signal, str] = {"traces": "/v1/traces", "metrics": "/v1/metrics", "logs": "/v1/logs"}


class ExportConfig(BaseModel):
    """Where scores go. Unset fields fall back to the SDK's `OTEL_EXPORTER_OTLP_*` variables;
    `enabled: false` sends nothing over OTLP (the console and `/metrics` still show the scores),
    `logs: false` / `metrics: false` send no log records / metrics."""

    # As the configuration file's other sections: `.inf` and `.nan` are never a valid timeout.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    enabled: bool = True
    endpoint: str | None = None
    protocol: OtlpProtocol | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    insecure: bool | None = None
    #: Send log records (the gen_ai.evaluation.result events, turn records) and metrics over OTLP:
    #: false for an endpoint that does not take them (Jaeger takes traces only).
    logs: bool = True
    metrics: bool = True
    metric_interval_s: float = Field(10.0, gt=0, le=MAX_SECONDS)
    batch_delay_s: float = Field(1.0, gt=0, le=MAX_SECONDS)
    timeout_s: float = Field(10.0, gt=0, le=MAX_SECONDS)


def export_protocol(config: ExportConfig) -> str:
    """The settings' protocol, else `OTEL_EXPORTER_OTLP_PROTOCOL`'s, else the SDK's default."""
    return config.protocol or environment_protocol()


def export_endpoint(config: ExportConfig) -> str:
    """The endpoint the exporters send to: the settings', the environment's, or the SDK's default."""
    if config.endpoint:
        return config.endpoint
    named = environment_endpoint()
    return named[1] if named is not None else default_endpoint(export_protocol(config))


def exporter_class(protocol: str, signal: Signal) -> Any:
    """The SDK's OTLP exporter of `signal` over `protocol` (imported only when asked for)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unsupported OTLP protocol {protocol!r}; use {' or '.join(PROTOCOLS)}")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc import _log_exporter, metric_exporter, trace_exporter

        grpc_classes = {
            "traces": trace_exporter.OTLPSpanExporter,
            "logs": _log_exporter.OTLPLogExporter,
            "metrics": metric_exporter.OTLPMetricExporter,
        }
        return grpc_classes[signal]
    from opentelemetry.exporter.otlp.proto.http import _log_exporter as http_logs
    from opentelemetry.exporter.otlp.proto.http import metric_exporter as http_metrics
    from opentelemetry.exporter.otlp.proto.http import trace_exporter as http_traces

    http_classes = {
        "traces": http_traces.OTLPSpanExporter,
        "logs": http_logs.OTLPLogExporter,
        "metrics": http_metrics.OTLPMetricExporter,
    }
    return http_classes[signal]


def exporter_options(
    signal: Signal,
    protocol: str,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    insecure: bool | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """The SDK exporter's arguments; each left out falls back to the SDK's environment. Over
    gRPC an endpoint is insecure unless it says https (or `insecure` says); over HTTP it is the
    base the signal's path is added to (`http://` when it names no scheme)."""
    options: dict[str, Any] = {}
    if headers:
        options["headers"] = dict(headers)
    if timeout_s is not None:
        options["timeout"] = timeout_s
    if protocol == "grpc":
        if endpoint:
            options["endpoint"] = endpoint
            options["insecure"] = insecure if insecure is not None else not endpoint.startswith("https://")
        elif insecure is not None:
            options["insecure"] = insecure
    elif endpoint:
        base = endpoint if "://" in endpoint else f"http://{endpoint}"
        options["endpoint"] = base.rstrip("/") + _SIGNAL_PATHS[signal]
    return options


def signal_exporter(config: ExportConfig, signal: Signal) -> Any:
    """The SDK's OTLP exporter of `signal`, as the settings say."""
    protocol = export_protocol(config)
    return exporter_class(protocol, signal)(
        **exporter_options(
            signal, protocol, config.endpoint, config.headers, config.insecure, config.timeout_s
        )
    )


def signal_exporters(config: ExportConfig) -> tuple[Any, Any, Any]:
    """The span, log and metric exporters, as the settings say."""
    return (
        signal_exporter(config, "traces"),
        signal_exporter(config, "logs"),
        signal_exporter(config, "metrics"),
    )
