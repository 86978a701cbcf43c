"""A stand-in for the OpenTelemetry Collector's `loadbalancing` exporter, for the tests that run
where the real Collector cannot (no Go toolchain: the plain `make test`).

The real Collector, built by `make collector`, runs the same scenarios in
tests/collector/test_collector_scale_out.py (`make test-collector`, and CI). This router applies
the exporter's rule for logs with `routing_key: attributes` (`collector-config/conversations.yaml`
ships the real configuration): each log record is routed by the value of the routing attribute
(`gen_ai.conversation.id`) on a consistent-hash ring of the backends, so every record with the same
value reaches the same backend, and adding a backend moves only a share of the keys. The ring is
of the exporter's kind (each endpoint at many CRC32 positions, a key at CRC32 of its value, served
by the first endpoint at or after it), not its exact positions: which backend gets which key
differs from the real exporter's, the properties tested do not.

It also receives what the sidecars export besides (evaluation spans and events, metrics) and
keeps the spans and logs, for the test to read.
"""

from __future__ import annotations

import bisect
import threading
import zlib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_POSITIONS_PER_ENDPOINT = 100
_RING_SIZE = 36_000
ROUTING_ATTRIBUTE = "gen_ai.conversation.id"


class HashRing:
    def __init__(self, endpoints: list[str]) -> None:
        points = []
        for endpoint in endpoints:
            for index in range(_POSITIONS_PER_ENDPOINT):
                points.append((zlib.crc32(f"{endpoint}{index}".encode()) % _RING_SIZE, endpoint))
        points.sort()
        self._positions = [position for position, _ in points]
        self._endpoints = [endpoint for _, endpoint in points]

    def endpoint_for(self, key: str) -> str:
        position = zlib.crc32(key.encode()) % _RING_SIZE
        index = bisect.bisect_left(self._positions, position) % len(self._positions)
        return self._endpoints[index]


class LoadBalancingRouter:
    def __init__(self, backends: list[str]) -> None:
        """`backends`: host:port of each sidecar's OTLP/gRPC receiver."""
        self.ring = HashRing(backends)
        self.spans: list[ExportTraceServiceRequest] = []
        self.logs: list[ExportLogsServiceRequest] = []
        #: Which backend each routing key went to (each key must go to exactly one).
        self.routed: dict[str, set[str]] = defaultdict(set)
        self._lock = threading.Lock()
        self._server = grpc.server(ThreadPoolExecutor(8), options=[("grpc.so_reuseport", 0)])
        for service, request_type, response_type, handle in (
            ("trace", ExportTraceServiceRequest, ExportTraceServiceResponse, self._traces),
            ("logs", ExportLogsServiceRequest, ExportLogsServiceResponse, self._logs),
            ("metrics", ExportMetricsServiceRequest, ExportMetricsServiceResponse, lambda request: None),
        ):
            name = {"trace": "TraceService", "logs": "LogsService", "metrics": "MetricsService"}[service]
            handler = grpc.unary_unary_rpc_method_handler(
                self._answer(handle, response_type),
                request_deserializer=request_type.FromString,
                response_serializer=response_type.SerializeToString,
            )
            self._server.add_generic_rpc_handlers(
                (
                    grpc.method_handlers_generic_handler(
                        f"opentelemetry.proto.collector.{service}.v1.{name}", {"Export": handler}
                    ),
                )
            )
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @staticmethod
    def _answer(handle: Any, response_type: Any) -> Any:
        def receive(request: Any, context: grpc.ServicerContext) -> Any:
            handle(request)
            return response_type()

        return receive

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoadBalancingRouter:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=None).wait()

    def _traces(self, request: ExportTraceServiceRequest) -> None:
        with self._lock:
            self.spans.append(request)

    def _logs(self, request: ExportLogsServiceRequest) -> None:
        """Records with the routing attribute go to their backend; the rest are kept here."""
        by_backend: dict[str, ExportLogsServiceRequest] = {}
        kept = ExportLogsServiceRequest()
        for resource_logs in request.resource_logs:
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    key = next(
                        (a.value.string_value for a in record.attributes if a.key == ROUTING_ATTRIBUTE), None
                    )
                    if key is None or record.event_name != "otel_scorers.conversation.turn":
                        target = kept
                    else:
                        backend = self.ring.endpoint_for(key)
                        with self._lock:
                            self.routed[key].add(backend)
                        target = by_backend.setdefault(backend, ExportLogsServiceRequest())
                    out_resource = target.resource_logs.add()
                    out_resource.resource.CopyFrom(resource_logs.resource)
                    out_scope = out_resource.scope_logs.add()
                    out_scope.scope.CopyFrom(scope_logs.scope)
                    out_scope.log_records.add().CopyFrom(record)
        with self._lock:
            self.logs.append(kept)
        for backend, forwarded in by_backend.items():
            with grpc.insecure_channel(backend) as channel:
                export = channel.unary_unary(
                    "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
                    request_serializer=ExportLogsServiceRequest.SerializeToString,
                    response_deserializer=ExportLogsServiceResponse.FromString,
                )
                export(forwarded, timeout=10)

    def evaluation_spans(self) -> list[Any]:
        with self._lock:
            requests = list(self.spans)
        return [
            span
            for request in requests
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
            if span.name.startswith("evaluate ")
        ]
