"""Spans written as the Collector's file exporter writes them: what `otel-scorers score` and
`runs` read back (`otlp_files`)."""

from __future__ import annotations

import base64
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan

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


def write_traces(path: Path, spans: Iterable[ReadableSpan]) -> int:
    """Write `spans` as the Collector's file exporter does: one OTLP/JSON request per line, here
    one per trace, in the order the traces started. The number of traces written."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    traces: dict[int, list[ReadableSpan]] = defaultdict(list)
    for span in sorted(spans, key=lambda span: span.start_time or 0):
        traces[span.context.trace_id].append(span)
    with path.open("wb") as out:
        for trace in traces.values():
            document = _hex_ids(MessageToDict(encode_spans(trace), use_integers_for_enums=True))
            out.write(orjson.dumps(document) + b"\n")
    return len(traces)
