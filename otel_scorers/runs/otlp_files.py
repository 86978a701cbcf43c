"""OTLP/JSON trace files: one `ExportTraceServiceRequest` per file, or one per line (the
Collector's file exporter), optionally gzipped. Bad lines are reported and skipped; JSON that
is not an OTLP trace request (Jaeger's or Zipkin's export, OTLP logs or metrics) is reported as
what it looks like, with what was expected. `write_traces` writes SDK spans in the same format."""

from __future__ import annotations

import base64
import gzip
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.human_text import counted
from otel_scorers.model import AgentRun
from otel_scorers.otlp.decode import OtlpDecodeError, parse_json_request, span_records
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord

EXPECTED = (
    'expected OTLP/JSON traces: {"resourceSpans": [...]} per file or per line, '
    "as the Collector's file exporter writes them"
)


@dataclass(frozen=True, slots=True)
class InputProblem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class Reading:
    """What the files held: spans, the traces they make, the agent runs rebuilt from them."""

    spans: int = 0
    traces: int = 0
    runs: int = 0

    def nothing_read(self, paths: Iterable[Path]) -> str | None:
        """Why the files gave nothing to work on, or None when they held runs."""
        names = ", ".join(str(path) for path in paths)
        if self.spans == 0:
            return f"no spans were read from {names}"
        if self.runs == 0:
            return (
                f"read {counted(self.spans, 'span')} in {counted(self.traces, 'trace')} from {names}, none of them an agent "
                "run (what marks one, per instrumentation: docs/conventions.md)"
            )
        return None


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def not_otlp_traces(document: Any) -> str | None:
    """What a parsed JSON document is when it is not an OTLP trace request, or None."""
    if isinstance(document, list):
        first = document[0] if document else None
        if (
            isinstance(first, Mapping)
            and "traceId" in first
            and ("localEndpoint" in first or "kind" in first)
        ):
            return f"this looks like Zipkin's JSON (a list of spans), not OTLP; {EXPECTED}"
        return f"a JSON list, not OTLP; {EXPECTED}"
    if not isinstance(document, Mapping):
        kind = {str: "string", bool: "boolean", type(None): "null"}.get(type(document), "number")
        return f"a JSON {kind}, not OTLP; {EXPECTED}"
    if not document or "resourceSpans" in document:
        return None  # {} is an empty request
    if isinstance(document.get("data"), list):
        return f'this looks like Jaeger\'s JSON export ({{"data": [...]}}), not OTLP; {EXPECTED}'
    if "resourceLogs" in document:
        return f"these are OTLP logs, not traces; {EXPECTED}"
    if "resourceMetrics" in document:
        return f"these are OTLP metrics, not traces; {EXPECTED}"
    keys = ", ".join(sorted(str(key) for key in document)[:5])
    return f"a JSON object with keys {keys}, not OTLP; {EXPECTED}"


def _unwrapped(document: Any) -> Any:
    # Jaeger v2's query API (/api/v3/traces) returns an OTLP request inside "result".
    if isinstance(document, Mapping) and "resourceSpans" not in document:
        inner = document.get("result")
        if isinstance(inner, Mapping) and "resourceSpans" in inner:
            return inner
    return document


def read_spans(path: Path, problems: list[InputProblem]) -> Iterator[SpanRecord]:
    try:
        data = _read(path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        problems.append(InputProblem(str(path), f"cannot read: {exc}"))
        return
    documents: Iterable[tuple[str, Any]]
    try:
        documents = [(str(path), orjson.loads(data))]
    except orjson.JSONDecodeError:
        documents = [
            (f"{path}:{number}", line)
            for number, line in enumerate(data.splitlines(), start=1)
            if line.strip()
        ]
    for where, document in documents:
        try:
            if isinstance(document, bytes):
                document = orjson.loads(document)
        except orjson.JSONDecodeError as exc:
            problems.append(InputProblem(where, f"not JSON: {exc}"))
            continue
        document = _unwrapped(document)
        problem = not_otlp_traces(document)
        if problem is not None:
            problems.append(InputProblem(where, problem))
            continue
        try:
            request = parse_json_request(document)
        except OtlpDecodeError as exc:
            problems.append(InputProblem(where, str(exc)))
            continue
        yield from span_records(request)


def runs_from_files(
    paths: Iterable[Path],
    problems: list[InputProblem],
    progress: Callable[[str], None] | None = None,
    reading: Reading | None = None,
) -> Iterator[AgentRun]:
    """Every run in the files, trace by trace (spans of one trace may span several files);
    `reading` counts what was read."""
    reading = reading if reading is not None else Reading()
    traces: dict[int, list[SpanRecord]] = defaultdict(list)
    for path in paths:
        for span in read_spans(path, problems):
            traces[span.trace_id].append(span)
            reading.spans += 1
            if progress is not None and reading.spans % 100_000 == 0:
                progress(f"read {counted(reading.spans, 'span')} in {counted(len(traces), 'trace')}")
    reading.traces = len(traces)
    for spans in traces.values():
        for run in build_runs(spans):
            reading.runs += 1
            yield run


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
