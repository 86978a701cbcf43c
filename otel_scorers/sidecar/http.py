"""The OTLP/HTTP receiver (`POST /v1/traces`, protobuf or JSON, gzip or not) and the operational
endpoints: `/healthz`, `/readyz`, Prometheus `/metrics`.

Errors are answered in the encoding the request used, as the OTLP spec asks: a `google.rpc.Status`
(protobuf or JSON) with a message naming what is wrong. Pushback is 429 (busy) or 503 (shutting
down, downstream unavailable) with `Retry-After`.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import ClientPayloadError, web
from aiohttp.typedefs import Handler
from google.protobuf.json_format import MessageToDict
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from otel_scorers.config import TlsConfig
from otel_scorers.errors import ListenError
from otel_scorers.sidecar.conversation_intake import ConversationIntake
from otel_scorers.sidecar.intake import Intake, Refused
from otel_scorers.sidecar.listener import Listener, bind
from otel_scorers.sidecar.offload import OFFLOAD_BYTES, Offload
from otel_scorers.sidecar.payload import Encoding, PayloadError, body_encoding, decode_salvaging, decompress
from otel_scorers.sidecar.request_scan import Scan
from otel_scorers.sidecar.security import TokenCheck, ssl_context
from otel_scorers.throttled_log import throttled

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_GRPC_CODE_BY_STATUS = {400: 3, 401: 16, 413: 8, 415: 3, 429: 8, 503: 14}


def _reply(
    status: int, encoding: Encoding, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    if status not in (429, 503):  # pushback is counted on the receiver metric instead
        throttled.warning(
            f"sidecar_http_{status}", "otel_scorers: OTLP/HTTP request refused (%d): %s", status, message
        )
    rpc_status = Status(code=_GRPC_CODE_BY_STATUS.get(status, 2), message=message)
    if encoding == "json":
        body = orjson.dumps(MessageToDict(rpc_status))
        return web.Response(status=status, body=body, content_type=_JSON, headers=headers)
    return web.Response(
        status=status, body=rpc_status.SerializeToString(), content_type=_PROTOBUF, headers=headers
    )


class _Refuse(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


@dataclass(slots=True)
class _Reading:
    size: int = 0
    reserved: int = 0


class _BodyRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Connections:
    """The receiver's connections, kept within bounds aiohttp has none for: at most
    `max_connections` open, and none waiting more than `read_timeout_s` for a whole request line
    and headers (of connecting, or of its last request)."""

    def __init__(self, max_connections: int, read_timeout_s: float) -> None:
        self._max_connections = max_connections
        self._read_timeout_s = read_timeout_s
        #: When each connection last started or finished a request (or connected), by handler.
        self._last_seen: dict[object, float] = {}
        self._busy: set[object] = set()

    def open(self, runner: web.AppRunner) -> asyncio.BaseProtocol:
        """A new connection's protocol: aiohttp's, or one that closes it at once when
        `max_connections` are open already."""
        server = runner.server
        assert server is not None
        if len(server.connections) >= self._max_connections:
            throttled.warning(
                "sidecar_http_connections",
                "otel_scorers: refusing OTLP/HTTP connections: %d open (max_connections)",
                self._max_connections,
            )
            return _Refuse()
        handler = server()
        self._last_seen[handler] = asyncio.get_running_loop().time()
        return handler

    @web.middleware
    async def track(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        protocol = request.protocol
        self._busy.add(protocol)
        try:
            return await handler(request)
        finally:
            self._busy.discard(protocol)
            self._last_seen[protocol] = asyncio.get_running_loop().time()

    async def sweep_forever(self, runner: web.AppRunner) -> None:
        """Close connections that have not sent a whole request line and headers within
        `read_timeout_s` (of connecting, or of their last request): aiohttp has no such timeout."""
        interval = min(1.0, self._read_timeout_s / 4)
        server = runner.server
        assert server is not None
        while True:
            await asyncio.sleep(interval)
            now = asyncio.get_running_loop().time()
            open_now = set(server.connections)
            for handler in list(self._last_seen):
                idle = now - self._last_seen[handler]
                if handler not in open_now:
                    if idle > self._read_timeout_s:
                        del self._last_seen[handler]  # closed (or never opened)
                    continue
                if handler in self._busy or idle <= self._read_timeout_s:
                    continue
                transport = getattr(handler, "transport", None)
                if transport is not None:
                    transport.close()
                del self._last_seen[handler]


class HttpReceiver:
    def __init__(
        self,
        intake: Intake,
        token: TokenCheck,
        host: str,
        port: int,
        max_request_bytes: int,
        tls: TlsConfig | None = None,
        *,
        receive_traces: bool,
        ready: Callable[[], str | None] = lambda: None,
        metrics_text: Callable[[], Awaitable[bytes]] | None = None,
        grace_s: float,
        metrics_require_token: bool,
        read_timeout_s: float,
        max_connections: int,
        retry_after_s: float,
        logs: ConversationIntake | None = None,
    ) -> None:
        self._intake = intake
        self._token = token
        self._host = host
        self._port = port
        self._max_bytes = max_request_bytes
        self._ssl = ssl_context(tls) if tls is not None else None
        self._ready = ready
        self._metrics_text = metrics_text
        self._metrics_require_token = metrics_require_token
        self._offload = Offload()
        self._assembler = intake.assembler
        self._read_timeout_s = read_timeout_s
        self._connections = _Connections(max_connections, read_timeout_s)
        self._retry_after = str(max(1, math.ceil(retry_after_s)))
        # The compressed body may not exceed the limit either; the decompressed one is checked
        # while inflating.
        app = web.Application(client_max_size=max_request_bytes, middlewares=[self._connections.track])
        if receive_traces:
            app.router.add_post("/v1/traces", self._traces)
        self._logs = logs
        if logs is not None:  # turn records, for the conversation stage
            app.router.add_post("/v1/logs", self._turn_logs)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        # We inflate bodies ourselves, with a limit, instead of letting aiohttp do it unbounded.
        # Idle keep-alive connections close after read_timeout_s; a sender gone quiet mid-body
        # is not waited for (lingering) beyond a second.
        self._runner = web.AppRunner(
            app,
            auto_decompress=False,
            access_log=None,
            shutdown_timeout=grace_s,
            keepalive_timeout=read_timeout_s,
            lingering_time=1.0,
        )
        self._listener: Listener | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> int:
        await self._runner.setup()
        try:
            sockets = await bind(self._host, self._port)
        except OSError as exc:
            await self._runner.cleanup()
            raise ListenError(
                f"cannot listen for OTLP/HTTP on {self._host}:{self._port}: "
                + (os.strerror(exc.errno).lower() if exc.errno else str(exc))
            ) from None
        self._listener = Listener("OTLP/HTTP", sockets, self._connection, self._ssl)
        self.port = sockets[0].getsockname()[1] if sockets else self._port
        self._sweeper = asyncio.create_task(self._connections.sweep_forever(self._runner))
        return self.port

    @property
    def open_connections(self) -> int:
        """The connections open now (at most `max_connections`): read on the receiver's loop."""
        server = self._runner.server
        return len(server.connections) if server is not None else 0

    async def stop(self) -> None:
        """Close the listener and the connections; requests in progress get `grace_s` to finish."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._listener is not None:
            self._listener.close()
        await self._runner.cleanup()
        self._offload.close()

    def _connection(self) -> asyncio.BaseProtocol:
        return self._connections.open(self._runner)

    async def _traces(self, request: web.Request) -> web.Response:
        try:
            encoding = body_encoding(
                request.content_type if request.can_read_body else request.headers.get("Content-Type")
            )
        except PayloadError as exc:
            return _reply(exc.status, "protobuf", exc.message)
        problem = self._token.problem(request.headers.get("Authorization"))
        if problem is not None:
            return _reply(401, encoding, problem, {"WWW-Authenticate": "Bearer"})
        if request.content_length is not None and request.content_length > self._max_bytes:
            return _reply(
                413,
                encoding,
                f"body of {request.content_length} bytes exceeds the {self._max_bytes}-byte limit",
            )
        reading = _Reading()
        try:
            return await self._take(request, encoding, reading)
        finally:
            self._assembler.reading_bytes -= reading.reserved

    async def _received(
        self, request: web.Request, encoding: Encoding, reading: _Reading
    ) -> bytes | web.Response:
        """The request's body, or the reply to a body refused, late or cut short."""
        try:
            return await asyncio.wait_for(self._read_body(request, reading), self._read_timeout_s)
        except _BodyRefused as refused:
            if refused.status == 429:
                return _reply(429, encoding, refused.message, {"Retry-After": self._retry_after})
            return _reply(refused.status, encoding, refused.message)
        except asyncio.TimeoutError:
            return _reply(
                408,
                encoding,
                f"body not received within {self._read_timeout_s:g} s ({reading.size} bytes came)",
            )
        except (ConnectionError, asyncio.IncompleteReadError, ClientPayloadError) as exc:
            throttled.warning(
                "sidecar_http_aborted",
                "otel_scorers: an OTLP/HTTP sender went away after %d bytes of its body (%s)",
                reading.size,
                type(exc).__name__,
            )
            return web.Response(status=400)  # nobody is there to read it

    async def _take(self, request: web.Request, encoding: Encoding, reading: _Reading) -> web.Response:
        raw = await self._received(request, encoding, reading)
        if isinstance(raw, web.Response):
            return raw
        # The body is decoded now: from here the buffers account for it, at its parsed size.
        self._assembler.reading_bytes -= reading.reserved
        reading.reserved = 0
        intake = self._intake
        try:
            # Inflating is quick C code; decoding and sorting out a large body is slow Python.
            data = decompress(raw, request.headers.get("Content-Encoding"), self._max_bytes)
            big = len(data) >= OFFLOAD_BYTES
            room = intake.has_room()
            sort = big and room

            def unpack() -> tuple[ExportTraceServiceRequest | Any, int, str, Scan | None]:
                otlp_request, unparsed, problem = decode_salvaging(
                    data, encoding, intake.trace_ids_first, room
                )
                sorted_out = intake.sort_out(otlp_request, len(data)) if sort else None
                return otlp_request, unparsed, problem, sorted_out

            otlp_request, unparsed, problem, sorted_out = await self._offload.run(unpack) if big else unpack()
        except PayloadError as exc:
            return _reply(exc.status, encoding, exc.message)
        try:
            accepted = await intake.export(
                otlp_request,
                data if encoding == "protobuf" and not unparsed else None,
                len(data),
                sorted_out,
                unparsed=(unparsed, problem),
            )
        except Refused as refused:
            status = 429 if refused.kind == "busy" else 503
            retry_after = str(max(1, math.ceil(refused.retry_after_s)))
            return _reply(status, encoding, refused.message, {"Retry-After": retry_after})
        response = ExportTraceServiceResponse()
        if accepted.rejected:
            response.partial_success.rejected_spans = accepted.rejected
            response.partial_success.error_message = accepted.message
        if encoding == "json":
            return web.Response(body=orjson.dumps(MessageToDict(response)), content_type=_JSON)
        return web.Response(body=response.SerializeToString(), content_type=_PROTOBUF)

    async def _turn_logs(self, request: web.Request) -> web.Response:
        assert self._logs is not None
        try:
            encoding = body_encoding(request.content_type)
        except PayloadError as exc:
            return _reply(exc.status, "protobuf", exc.message)
        problem = self._token.problem(request.headers.get("Authorization"))
        if problem is not None:
            return _reply(401, encoding, problem, {"WWW-Authenticate": "Bearer"})
        try:
            raw = await asyncio.wait_for(request.read(), self._read_timeout_s)
            data = decompress(raw, request.headers.get("Content-Encoding"), self._max_bytes)
            logs = self._logs
            if len(data) >= OFFLOAD_BYTES:  # decoding a large request is slow Python: off the loop
                read = await self._offload.run(lambda: logs.read(data, encoding))
            else:
                read = logs.read(data, encoding)
            response = logs.take(read)
        except PayloadError as exc:
            return _reply(exc.status, encoding, exc.message)
        except asyncio.TimeoutError:
            return _reply(408, encoding, f"body not received within {self._read_timeout_s:g} s")
        if encoding == "json":
            return web.Response(body=orjson.dumps(MessageToDict(response)), content_type=_JSON)
        return web.Response(body=response.SerializeToString(), content_type=_PROTOBUF)

    async def _read_body(self, request: web.Request, reading: _Reading) -> bytes:
        """The body, each chunk counted against `max_bytes` as it arrives (slow senders cannot hold
        memory beyond it) and against `max_request_bytes`."""
        chunks: list[bytes] = []
        assembler = self._assembler
        async for chunk in request.content.iter_any():
            reading.size += len(chunk)
            if reading.size > self._max_bytes:
                raise _BodyRefused(413, f"body exceeds the {self._max_bytes}-byte limit")
            if not assembler.reserve(len(chunk)):
                raise _BodyRefused(429, f"too busy, retry later: {assembler.over_limit()}")
            reading.reserved += len(chunk)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, _request: web.Request) -> web.Response:
        problem = self._ready()
        if problem is not None:
            return web.Response(status=503, text=f"not ready: {problem}\n")
        return web.Response(text="ready\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        if self._metrics_require_token:
            problem = self._token.problem(request.headers.get("Authorization"))
            if problem is not None:
                throttled.warning("sidecar_metrics_auth", "otel_scorers: /metrics refused: %s", problem)
                return web.Response(status=401, text=f"{problem}\n", headers={"WWW-Authenticate": "Bearer"})
        if self._metrics_text is None:
            return web.Response(status=404, text="metrics are not enabled\n")
        return web.Response(body=await self._metrics_text(), content_type="text/plain", charset="utf-8")
