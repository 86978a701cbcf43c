"""The demo's `--otlp-endpoint`: send what the demo produced, once, and say what happened.

The demo keeps its spans, events and metrics in memory. With an endpoint it first checks that
something listens there, so that an unreachable endpoint costs a second rather than the
exporters' retries; then it exports each signal in one call with a bounded timeout and reports
what each call came back with.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.metrics.export import MetricsData
from opentelemetry.sdk.trace import ReadableSpan

CONNECT_TIMEOUT_S = 1.0
EXPORT_TIMEOUT_S = 3.0  # per signal, retries included: the demo waits at most about 3 times this
_DEFAULT_PORTS = {"grpc": 4317, "http/protobuf": 4318}


@dataclass(frozen=True, slots=True)
class Sent:
    """One signal's export: how many items, and whether the endpoint accepted them."""

    signal: str
    count: int
    accepted: bool


def unreachable(endpoint: str, protocol: str) -> str | None:
    """Why nothing can be sent to `endpoint` (it names no host, or refuses connections), or None."""
    parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
    try:
        host, port = parts.hostname, parts.port or _DEFAULT_PORTS[protocol]
    except ValueError as exc:
        return f"{endpoint!r} is not a valid endpoint: {exc}"
    if not host:
        return f"{endpoint!r} names no host; expected e.g. http://localhost:4317"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as exc:
        return f"cannot connect to {host}:{port} ({exc.strerror or exc})"


def exporters(endpoint: str, protocol: str) -> tuple[Any, Any, Any]:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        insecure = not endpoint.startswith("https://")
        return (
            OTLPSpanExporter(endpoint=endpoint, insecure=insecure, timeout=EXPORT_TIMEOUT_S),
            OTLPLogExporter(endpoint=endpoint, insecure=insecure, timeout=EXPORT_TIMEOUT_S),
            OTLPMetricExporter(endpoint=endpoint, insecure=insecure, timeout=EXPORT_TIMEOUT_S),
        )
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter as HttpMetricExporter,
    )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

    base = (endpoint if "://" in endpoint else f"http://{endpoint}").rstrip("/")
    return (
        HttpSpanExporter(endpoint=f"{base}/v1/traces", timeout=EXPORT_TIMEOUT_S),
        HttpLogExporter(endpoint=f"{base}/v1/logs", timeout=EXPORT_TIMEOUT_S),
        HttpMetricExporter(endpoint=f"{base}/v1/metrics", timeout=EXPORT_TIMEOUT_S),
    )


def send(
    endpoint: str,
    protocol: str,
    spans: Sequence[ReadableSpan],
    events: Sequence[ReadableLogRecord],
    metrics: MetricsData | None,
) -> list[Sent]:
    """Export each signal once; what each export returned."""
    span_exporter, log_exporter, metric_exporter = exporters(endpoint, protocol)
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
