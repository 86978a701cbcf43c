"""The demo's `--otlp-endpoint`: send what the demo produced, once, and say what happened.

The demo keeps its spans, events and metrics in memory. With an endpoint (checked first with
`otlp.endpoint.unreachable`) it exports each signal in one call, with the exporters its settings
make (`otlp.exporters`) and a bounded timeout, and reports what each call came back with: the
demo waits at most about 3 times `EXPORT_TIMEOUT_S`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.metrics.export import MetricsData
from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.otlp.endpoint import EXPORT_TIMEOUT_S
from otel_scorers.otlp.exporters import ExportConfig, signal_exporters


@dataclass(frozen=True, slots=True)
class Sent:
    """One signal's export: how many items, and whether the endpoint accepted them."""

    signal: str
    count: int
    accepted: bool


def send(
    endpoint: str,
    protocol: str,
    spans: Sequence[ReadableSpan],
    events: Sequence[ReadableLogRecord],
    metrics: MetricsData | None,
) -> list[Sent]:
    """Export each signal once; what each export returned."""
    span_exporter, log_exporter, metric_exporter = signal_exporters(
        ExportConfig(
            endpoint=endpoint,
            protocol=protocol,  # type: ignore[arg-type]  # the parser's choices are the protocols
            timeout_s=EXPORT_TIMEOUT_S,
        )
    )
    metric_count = sum(
        len(scope.metrics)
        for resource in (metrics.resource_metrics if metrics else ())
        for scope in resource.scope_metrics
    )
    results = [
        Sent("spans", len(spans), not spans or span_exporter.export(spans).name == "SUCCESS"),
        Sent("events", len(events), not events or log_exporter.export(events).name == "SUCCESS"),
        Sent(
            "metrics",
            metric_count,
            metrics is None
            or metric_exporter.export(metrics, timeout_millis=EXPORT_TIMEOUT_S * 1000).name == "SUCCESS",
        ),
    ]
    for exporter in (span_exporter, log_exporter, metric_exporter):
        exporter.shutdown()
    return results


def summary(endpoint: str, protocol: str, results: Sequence[Sent]) -> str:
    """One sentence on what reached the endpoint."""
    what = _listed([f"{result.count} {result.signal}" for result in results])
    refused = [result.signal for result in results if not result.accepted]
    if not refused:
        return f"All of it was sent over OTLP ({protocol}) to {endpoint}: {what}."
    kept = [result.signal for result in results if result.accepted]
    return (
        f"Sending over OTLP ({protocol}) to {endpoint} failed for the {_listed(refused)}"
        + (f" (the {_listed(kept)} went through)" if kept else "")
        + "; the exporter's messages above say why."
    )


def _listed(items: Sequence[str]) -> str:
    return " and ".join(items) if len(items) < 3 else f"{', '.join(items[:-1])} and {items[-1]}"
