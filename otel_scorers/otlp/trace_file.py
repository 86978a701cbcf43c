"""Spans written as the trace file `otel-scorers score` and `runs` read: OTLP/JSON, one
`ExportTraceServiceRequest` per line (the Collector's `file` exporter format), ids in hex.

`TraceFileExporter` is an OpenTelemetry `SpanExporter` for one's own agent: put it behind a
`BatchSpanProcessor` (or `SimpleSpanProcessor`) and each batch of finished spans is appended to
the file, one line per trace in the batch. Spans of one trace exported in several batches are
several lines; the reader joins them.
"""

from __future__ import annotations

import base64
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON carries trace and span ids as hex, protobuf's JSON mapping as base64."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in _ID_KEYS and isinstance(value, str)
            else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def trace_lines(spans: Iterable[ReadableSpan]) -> Iterator[bytes]:
    """One OTLP/JSON line per trace among `spans`, in the order the traces started."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    traces: dict[int, list[ReadableSpan]] = defaultdict(list)
    for span in sorted(spans, key=lambda span: span.start_time or 0):
        traces[span.context.trace_id].append(span)
    for trace in traces.values():
        document = _hex_ids(MessageToDict(encode_spans(trace), use_integers_for_enums=True))
        yield orjson.dumps(document) + b"\n"


class TraceFileExporter(SpanExporter):
    """Appends every exported batch to `path` as OTLP/JSON lines: the file `otel-scorers score`
    reads. Safe to share between threads; a failed write is reported as a failed export (the
    SDK logs it) and never raised into the application."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._shut_down = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shut_down:
            return SpanExportResult.FAILURE
        try:
            data = b"".join(trace_lines(spans))
            with self._lock, self.path.open("ab") as out:
                out.write(data)
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._shut_down = True

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # each export is written and closed before it returns
