"""Where OTLP goes: the protocols, the endpoint the SDK's variables name (else its default), and
whether something listens there.

The check comes first so that an endpoint given on the command line that nothing listens on costs
a second rather than the exporters' retries; a command's exporters (`exporters.py`) have a bounded
timeout (`EXPORT_TIMEOUT_S`) for the same reason.
"""

from __future__ import annotations

import os
import socket
from typing import Literal, get_args
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
