"""An OTLP endpoint that does not take a signal: said once, in words, and nothing more sent there.

Not every OTLP endpoint takes every signal: Jaeger takes traces only, and answers logs and metrics
with gRPC `UNIMPLEMENTED` (HTTP 404). That answer will not change on a retry, so instead of
failing every batch (an SDK error line each, and at shutdown a count of events "not sent by the
deadline" that were in fact refused), the first refusal of a signal is logged once, naming the
setting that turns the signal off, and from then on that signal is not sent and what would have
gone is counted as refused. `SignalRefusal` holds that state for one signal; `guard_grpc` and
`guard_http` put it on the SDK's exporters (the gRPC stub, the HTTP transport), where the
refusal is seen before the SDK logs it; `refused_signals` asks the endpoint up front with an
empty request per signal, which an endpoint that takes the signal accepts.
"""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

logger = logging.getLogger("otel_scorers")

#: HTTP statuses that mean "no such signal here": the Collector's OTLP receiver (and so Jaeger)
#: answers 404 for a signal it has no pipeline for; 405 and 501 say the same in other servers.
REFUSING_HTTP_STATUSES = frozenset({404, 405, 501})
_SERVICES = {"logs": "LogsService", "metrics": "MetricsService", "traces": "TraceService"}
PROBE_TIMEOUT_S = 2.0


class SignalRefusal:
    """Whether the endpoint refused one signal (`reason` once it did), and how many items were
    not sent because of it. `mark` logs the notice the first time, unless `quiet` (a process that
    another has already spoken for)."""

    def __init__(self, signal: str, endpoint: str, what: str, turn_off: str, quiet: bool = False) -> None:
        self.signal = signal
        self.endpoint = endpoint
        self.what = what
        self.turn_off = turn_off
        self.quiet = quiet
        self.reason: str | None = None
        self.refused = 0
        self._lock = threading.Lock()

    def mark(self, reason: str) -> None:
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
        if not self.quiet:
            logger.warning(refusal_notice([self], self.endpoint))

    def count(self, items: int) -> None:
        with self._lock:
            self.refused += items


def refusal_notice(refusals: Sequence[SignalRefusal], endpoint: str) -> str:
    """The one line that says an endpoint refuses these signals, what is not sent, and the
    settings that turn them off."""
    signals = " or ".join(refusal.signal for refusal in refusals)
    reasons = ", ".join(sorted({refusal.reason or "" for refusal in refusals}))
    what = " and ".join(refusal.what for refusal in refusals)
    settings = " and ".join(refusal.turn_off for refusal in refusals)
    return (
        f"otel_scorers: the OTLP endpoint {endpoint} does not take {signals} ({reasons}): "
        f"{what} are not sent there (counted as refused); to turn that off, set {settings}"
    )


class _GuardedStub:
    """A gRPC stub whose `Export` takes an `UNIMPLEMENTED` answer as a refusal: marked, and
    returned from as if sent, so the SDK neither retries nor logs it (the caller counts it)."""

    def __init__(self, stub: Any, refusal: SignalRefusal) -> None:
        self.inner = stub
        self._export = stub.Export
        self._refusal = refusal

    def Export(self, *args: Any, **kwargs: Any) -> Any:  # the stub's method name
        import grpc

        try:
            return self._export(*args, **kwargs)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:  # type: ignore[attr-defined]
                raise
            self._refusal.mark("gRPC UNIMPLEMENTED")
            return None


def guarded_stub(factory: Callable[[Any], Any], refusal: SignalRefusal) -> Callable[[Any], Any]:
    """A stub factory (as the SDK's gRPC exporters keep in `_stub`) whose stubs are guarded."""
    return lambda channel: _GuardedStub(factory(channel), refusal)


def guard_grpc(exporter: Any, refusal: SignalRefusal) -> Any:
    """Guard an SDK gRPC exporter's stub (and the one it makes again when it reconnects)."""
    exporter._stub = guarded_stub(exporter._stub, refusal)
    exporter._client = exporter._stub(exporter._channel)
    return exporter


def guard_http(exporter: Any, refusal: SignalRefusal) -> Any:
    """Guard an SDK HTTP exporter's transport: a refusing status is marked and answered as
    accepted, so the SDK's client neither retries nor logs it (the caller counts it)."""
    from opentelemetry.exporter.http.transport._base import BaseHTTPResult

    class _Accepted(BaseHTTPResult):
        def content(self) -> bytes:
            return b""

        def headers(self) -> Mapping[str, str]:
            return {}

    transport = exporter._client._transport
    request = transport.request

    def guarded(*args: Any, **kwargs: Any) -> Any:
        result = request(*args, **kwargs)
        if result.status_code in REFUSING_HTTP_STATUSES:
            refusal.mark(f"HTTP {result.status_code}")
            return _Accepted(status_code=204, reason="refused")
        return result

    transport.request = guarded
    return exporter


def refused_signals(
    endpoint: str,
    protocol: str,
    signals: Sequence[str],
    headers: Mapping[str, str] | None = None,
    insecure: bool | None = None,
) -> dict[str, str]:
    """Which of `signals` the endpoint refuses, with its answer, asked with one empty request
    each (an endpoint that takes a signal accepts an empty request for it). Anything other than
    a refusal (accepted, unreachable, another error) says nothing: the exporters deal with it."""
    if protocol == "grpc":
        return _refused_over_grpc(endpoint, signals, headers or {}, insecure)
    return _refused_over_http(endpoint, signals, headers or {})


def _refused_over_grpc(
    endpoint: str, signals: Sequence[str], headers: Mapping[str, str], insecure: bool | None
) -> dict[str, str]:
    import grpc

    target = endpoint.split("://", 1)[-1].rstrip("/")
    secure = insecure is False or (insecure is None and endpoint.startswith("https://"))
    channel = (
        grpc.secure_channel(target, grpc.ssl_channel_credentials())
        if secure
        else grpc.insecure_channel(target)
    )
    refused: dict[str, str] = {}
    metadata = tuple((key.lower(), value) for key, value in headers.items())
    with channel:
        for signal in signals:
            service = f"/opentelemetry.proto.collector.{signal}.v1.{_SERVICES[signal]}/Export"
            export = channel.unary_unary(service)
            try:
                export(b"", metadata=metadata, timeout=PROBE_TIMEOUT_S)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNIMPLEMENTED:  # type: ignore[attr-defined]
                    refused[signal] = "gRPC UNIMPLEMENTED"
    return refused


def _refused_over_http(endpoint: str, signals: Sequence[str], headers: Mapping[str, str]) -> dict[str, str]:
    base = (endpoint if "://" in endpoint else f"http://{endpoint}").rstrip("/")
    refused: dict[str, str] = {}
    for signal in signals:
        request = urllib.request.Request(
            f"{base}/v1/{signal}",
            data=b"",
            headers={**headers, "Content-Type": "application/x-protobuf"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
                pass
        except urllib.error.HTTPError as error:
            if error.code in REFUSING_HTTP_STATUSES:
                refused[signal] = f"HTTP {error.code}"
        except (OSError, ValueError):
            pass
    return refused
