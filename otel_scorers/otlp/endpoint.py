"""An OTLP endpoint given on the command line: whether something listens there, and its exporters.

The check comes first so that an unreachable endpoint costs a second rather than the exporters'
retries; the exporters have a bounded timeout for the same reason.
"""

from __future__ import annotations

import os
import socket
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

CONNECT_TIMEOUT_S = 1.0
EXPORT_TIMEOUT_S = 3.0  # per signal, retries included
#: The protocols an endpoint may speak, and the OpenTelemetry SDK's default among them.
OtlpProtocol = Literal["grpc", "http/protobuf"]
PROTOCOLS: tuple[OtlpProtocol, ...] = get_args(OtlpProtocol)
DEFAULT_PROTOCOL: OtlpProtocol = "grpc"
_DEFAULT_PORTS = {"grpc": 4317, "http/protobuf": 4318}
#: The SDK's variables that name where OTLP traces go.
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def environment_endpoint() -> tuple[str, str] | None:
    """The OTLP endpoint the SDK's variables name, with the variable that names it; None when unset."""
    for variable in ENDPOINT_VARIABLES:
        value = os.environ.get(variable)
        if value:
            return variable, value
    return None


def environment_protocol() -> str:
    """The protocol `OTEL_EXPORTER_OTLP_PROTOCOL` names, else the SDK's default."""
    return os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", DEFAULT_PROTOCOL)


def default_endpoint(protocol: str) -> str:
    """The endpoint the OpenTelemetry SDK's exporters send to when none is configured."""
    return f"http://localhost:{_DEFAULT_PORTS[protocol]}"


def configured_endpoint(protocol: str) -> str:
    """The endpoint the SDK's variables name, else the SDK's default."""
    named = environment_endpoint()
    return named[1] if named is not None else default_endpoint(protocol)


def logs_exporter_wanted() -> bool:
    """False when the SDK's `OTEL_LOGS_EXPORTER` says `none`: no log records are to be exported."""
    return os.environ.get("OTEL_LOGS_EXPORTER", "").strip().lower() != "none"


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
