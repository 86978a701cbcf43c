"""A capturing OTLP/gRPC receiver for tests: traces, logs and metrics, kept as decoded requests.

It can also be told to fail (to play a downstream that is down) or to be slow.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_scorers.otlp.decode import attributes


class OtlpCapture:
    """`signals`: the ones it takes; the others it refuses as a traces-only backend (Jaeger)
    does, with UNIMPLEMENTED."""

    def __init__(
        self, signals: tuple[str, ...] = ("traces", "logs", "metrics"), max_receive_bytes: int | None = None
    ) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.logs: list[ExportLogsServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.fail_with: grpc.StatusCode | None = None
        #: Requests answered with `fail_with`.
        self.failed = 0
        #: With `fail_with`: fail only this many requests, then take them (None: every one).
        self.fail_times: int | None = None
        self.delay_s = 0.0
        self._changed = threading.Condition()
        options: list[tuple[str, Any]] = [("grpc.so_reuseport", 0)]
        if max_receive_bytes is not None:  # a larger request is refused with RESOURCE_EXHAUSTED
            options.append(("grpc.max_receive_message_length", max_receive_bytes))
        self._server = grpc.server(ThreadPoolExecutor(8), options=options)
        handlers = {
            "opentelemetry.proto.collector.trace.v1.TraceService": (
                ExportTraceServiceRequest,
                ExportTraceServiceResponse,
                self.traces,
            ),
            "opentelemetry.proto.collector.logs.v1.LogsService": (
                ExportLogsServiceRequest,
                ExportLogsServiceResponse,
                self.logs,
            ),
            "opentelemetry.proto.collector.metrics.v1.MetricsService": (
                ExportMetricsServiceRequest,
                ExportMetricsServiceResponse,
                self.metrics,
            ),
        }
        for service, (request_type, response_type, sink) in handlers.items():
            if not any(name.startswith(service.split(".")[-3]) for name in signals):  # trace(s)
                continue
            handler = grpc.unary_unary_rpc_method_handler(
                self._receiver(sink, response_type),
                request_deserializer=request_type.FromString,
                response_serializer=response_type.SerializeToString,
            )
            self._server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, {"Export": handler}),)
            )
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    def _receiver(self, sink: list[Any], response_type: Any) -> Callable[[Any, grpc.ServicerContext], Any]:
        def receive(request: Any, context: grpc.ServicerContext) -> Any:
            if self.delay_s:
                time.sleep(self.delay_s)
            if self.fail_with is not None and (self.fail_times is None or self.failed < self.fail_times):
                with self._changed:
                    self.failed += 1
                context.abort(self.fail_with, "capture told to fail")
            with self._changed:
                sink.append(request)
                self._changed.notify_all()
            return response_type()

        return receive

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> OtlpCapture:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=None).wait()

    def wait_for(self, condition: Callable[[], bool], timeout_s: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not condition():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(min(remaining, 0.1))
        return True

    # ---- views ---------------------------------------------------------------------------

    def spans(self) -> list[tuple[dict[str, Any], str, Span]]:
        """Every captured span with its resource attributes and scope name."""
        found = []
        for request in list(self.traces):
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append((resource, scope_spans.scope.name, span))
        return found

    def span_list(self) -> list[Span]:
        return [span for _, _, span in self.spans()]

    def log_records(self) -> Iterator[Any]:
        for request in list(self.logs):
            for resource_logs in request.resource_logs:
                for scope_logs in resource_logs.scope_logs:
                    yield from scope_logs.log_records

    def metric_names(self) -> set[str]:
        return {
            metric.name
            for request in list(self.metrics)
            for resource_metrics in request.resource_metrics
            for scope_metrics in resource_metrics.scope_metrics
            for metric in scope_metrics.metrics
        }

    def latest_total(self, name: str) -> float:
        """A cumulative counter's total over its attribute sets, as of the last export carrying it."""
        for request in reversed(list(self.metrics)):
            points = [
                point
                for resource_metrics in request.resource_metrics
                for scope_metrics in resource_metrics.scope_metrics
                for metric in scope_metrics.metrics
                if metric.name == name
                for point in metric.sum.data_points
            ]
            if points:
                return float(sum(point.as_int or point.as_double for point in points))
        return 0.0

    def data_points(self, name: str) -> list[Any]:
        points: list[Any] = []
        for request in list(self.metrics):
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        if metric.name != name:
                            continue
                        kind = metric.WhichOneof("data")
                        points.extend(getattr(metric, kind).data_points)
        return points


def attrs(kvs: Any) -> dict[str, Any]:
    return attributes(kvs)


def kv(key: str, value: str) -> KeyValue:
    item = KeyValue(key=key)
    item.value.string_value = value
    return item


class HttpTraceCapture:
    """A capturing OTLP/HTTP traces receiver (protobuf bodies) on a thread; with `traces_only`,
    other signals are answered 404, as a traces-only backend (Jaeger) does."""

    def __init__(self, traces_only: bool = False) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        #: Requests answered 404.
        self.refused = 0
        self.headers: list[dict[str, str]] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if traces_only and not self.path.endswith("/v1/traces"):
                    capture.refused += 1
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                capture.traces.append(ExportTraceServiceRequest.FromString(body))
                capture.headers.append(dict(self.headers))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HttpTraceCapture:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def span_list(self) -> list[Span]:
        return [
            span
            for request in list(self.traces)
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]
