"""The OTLP/gRPC receiver: `TraceService/Export` on grpc.aio.

The method takes raw bytes and decodes them itself, so a malformed request is answered with
INVALID_ARGUMENT and a message naming what is wrong. gRPC enforces the request size limit (on the
decompressed message) and gzip. Pushback is RESOURCE_EXHAUSTED with a `RetryInfo`, which the
OpenTelemetry exporters and the Collector honour by retrying later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio
from google.protobuf.any_pb2 import Any as AnyProto
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from otel_scorers.config import TlsConfig
from otel_scorers.errors import ListenError
from otel_scorers.sidecar.conversation_intake import ConversationIntake
from otel_scorers.sidecar.intake import Intake, Refused
from otel_scorers.sidecar.offload import OFFLOAD_BYTES, Offload
from otel_scorers.sidecar.payload import PayloadError, decode_salvaging
from otel_scorers.sidecar.request_scan import Scan
from otel_scorers.sidecar.security import TokenCheck, grpc_credentials
from otel_scorers.throttled_log import throttled

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"
_OK_RESPONSE: bytes = ExportTraceServiceResponse().SerializeToString()


def retry_metadata(code: grpc.StatusCode, message: str, retry_after_s: float) -> Sequence[tuple[str, bytes]]:
    """Trailers carrying a `google.rpc.RetryInfo`: as the rich status (`grpc-status-details-bin`)
    and under the key the OpenTelemetry Python exporter reads."""
    seconds = int(retry_after_s)
    delay = Duration(seconds=seconds, nanos=int((retry_after_s - seconds) * 1e9))
    info = RetryInfo(retry_delay=delay)
    detail = AnyProto()
    detail.Pack(info)
    status = Status(code=code.value[0], message=message, details=[detail])
    return (
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", info.SerializeToString()),
    )


class GrpcReceiver:
    def __init__(
        self,
        intake: Intake,
        token: TokenCheck,
        host: str,
        port: int,
        max_request_bytes: int,
        tls: TlsConfig | None = None,
        *,
        read_timeout_s: float,
        max_connections: int,
        logs: ConversationIntake | None = None,
    ) -> None:
        self._intake = intake
        self._logs = logs
        self._token = token
        self._address = f"{host}:{port}"
        self._tls = tls
        # Connections are bounded, idle ones closed; so are the requests being worked on at once.
        self._server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", max_request_bytes),
                ("grpc.so_reuseport", 0),
                ("grpc.max_allowed_incoming_connections", max_connections),
                ("grpc.max_connection_idle_ms", int(read_timeout_s * 1000)),
            ],
            maximum_concurrent_rpcs=max_connections,
        )
        handler = grpc.unary_unary_rpc_method_handler(self._export)  # raw bytes in and out
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),)
        )
        if logs is not None:  # turn records, for the conversation stage
            self._server.add_generic_rpc_handlers(
                (
                    grpc.method_handlers_generic_handler(
                        LOGS_SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(self._export_logs)}
                    ),
                )
            )
        self.port = 0
        self._offload = Offload()

    async def start(self) -> int:
        try:
            if self._tls is not None:
                self.port = self._server.add_secure_port(self._address, grpc_credentials(self._tls))
            else:
                self.port = self._server.add_insecure_port(self._address)
        except RuntimeError:  # gRPC says only "Failed to bind"
            raise ListenError(
                f"cannot listen for OTLP/gRPC on {self._address}: the port is in use or not available"
            ) from None
        await self._server.start()
        return self.port

    async def stop(self, grace_s: float) -> None:
        await self._server.stop(grace_s)
        self._offload.close()

    async def _export_logs(self, body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        assert self._logs is not None
        metadata = context.invocation_metadata() or ()
        authorization = next((str(value) for key, value in metadata if key == "authorization"), None)
        problem = self._token.problem(authorization) if self._token.enabled else None
        if problem is not None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
        try:
            logs = self._logs
            big = len(body) >= OFFLOAD_BYTES  # decoding a large request is slow Python: off the loop
            read = await self._offload.run(lambda: logs.read(body)) if big else logs.read(body)
            response = logs.take(read)
        except PayloadError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
            raise
        encoded: bytes = response.SerializeToString()
        return encoded

    async def _export(self, body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        if self._token.enabled:
            metadata = context.invocation_metadata() or ()
            authorization = next((str(value) for key, value in metadata if key == "authorization"), None)
            problem = self._token.problem(authorization)
            if problem is not None:
                throttled.warning("sidecar_grpc_auth", "otel_scorers: OTLP/gRPC request refused: %s", problem)
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
        intake = self._intake

        def unpack() -> tuple[ExportTraceServiceRequest | Any, int, str, Scan | None]:
            request, unparsed, why = decode_salvaging(body, "protobuf", intake.trace_ids_first, room)
            return request, unparsed, why, (intake.sort_out(request, len(body)) if sort else None)

        big = len(body) >= OFFLOAD_BYTES
        room = intake.has_room()
        sort = big and room
        try:
            request, unparsed, why, sorted_out = await self._offload.run(unpack) if big else unpack()
        except PayloadError as exc:
            throttled.warning("sidecar_grpc_decode", "otel_scorers: OTLP/gRPC request refused: %s", exc)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
            raise  # abort raises; this line only tells the type checker
        try:
            accepted = await intake.export(
                request, None if unparsed else body, len(body), sorted_out, unparsed=(unparsed, why)
            )
        except Refused as refused:
            code = (
                grpc.StatusCode.RESOURCE_EXHAUSTED if refused.kind == "busy" else grpc.StatusCode.UNAVAILABLE
            )
            await context.abort(
                code, refused.message, retry_metadata(code, refused.message, refused.retry_after_s)
            )
            raise
        if not accepted.rejected:
            return _OK_RESPONSE
        response = ExportTraceServiceResponse()
        response.partial_success.rejected_spans = accepted.rejected
        response.partial_success.error_message = accepted.message
        encoded: bytes = response.SerializeToString()
        return encoded
