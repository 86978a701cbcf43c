"""Inline mode's way downstream: encoded OTLP trace requests sent on as they are, gRPC or HTTP.

Requests are forwarded as bytes (re-encoded only when run spans were taken out to be held), and
the upstream request is acknowledged only once downstream has accepted it, so a slow or failing
downstream slows the collector down instead of filling our memory.
"""

from __future__ import annotations

from typing import Protocol

import aiohttp
import grpc
import grpc.aio

from otel_scorers.config import ForwardConfig

EXPORT_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


class ForwardError(Exception):
    """Downstream did not take the request; `retryable` when trying again later may work,
    `unreachable` when downstream did not answer or could not take any request (unavailable,
    timed out): what it refused is not the request's fault."""

    def __init__(self, message: str, retryable: bool = True, unreachable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.unreachable = unreachable


class Forwarder(Protocol):
    async def send(self, body: bytes) -> None: ...

    async def close(self) -> None: ...


_RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.CANCELLED,
}
_UNREACHABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
_UNREACHABLE_HTTP = (502, 503, 504)


class GrpcForwarder:
    def __init__(self, config: ForwardConfig) -> None:
        target = config.endpoint
        secure = target.startswith("https://")
        for prefix in ("http://", "https://"):
            target = target.removeprefix(prefix)
        options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
        self._channel = (
            grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(), options=options)
            if secure
            else grpc.aio.insecure_channel(target, options=options)
        )
        self._export = self._channel.unary_unary(EXPORT_METHOD)
        self._metadata = tuple((key.lower(), value) for key, value in config.headers.items())
        self._timeout_s = config.timeout_s

    async def send(self, body: bytes) -> None:
        try:
            await self._export(body, timeout=self._timeout_s, metadata=self._metadata)
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            raise ForwardError(
                f"downstream {code.name}: {exc.details()}", code in _RETRYABLE, code in _UNREACHABLE
            ) from None

    async def close(self) -> None:
        await self._channel.close()


class HttpForwarder:
    def __init__(self, config: ForwardConfig) -> None:
        url = config.endpoint.rstrip("/")
        self._url = url if url.endswith("/v1/traces") else url + "/v1/traces"
        self._headers = {"Content-Type": "application/x-protobuf", **config.headers}
        self._timeout_s = config.timeout_s
        self._session: aiohttp.ClientSession | None = None

    async def send(self, body: bytes) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self._timeout_s))
        session = self._session
        try:
            async with session.post(self._url, data=body, headers=self._headers) as response:
                if response.status < 300:
                    return
                text = (await response.read())[:200].decode("utf-8", "replace")
                status = response.status
                raise ForwardError(
                    f"downstream HTTP {status}: {text}",
                    status in (408, 429, *_UNREACHABLE_HTTP),
                    status in _UNREACHABLE_HTTP,
                )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ForwardError(f"downstream unreachable: {exc!r}", unreachable=True) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def make_forwarder(config: ForwardConfig) -> Forwarder:
    return GrpcForwarder(config) if config.protocol == "grpc" else HttpForwarder(config)
