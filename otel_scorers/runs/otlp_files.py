"""OTLP/JSON trace files: one `ExportTraceServiceRequest` per file, or one per line (the
Collector's file exporter), optionally gzipped. Files are read as a stream: a line at a time
(at most `MAX_LINE_BYTES`), gzip inflated as it is read, and each trace let go once its runs are
built, so memory does not grow with a file's size. Bad lines are reported and skipped; JSON that
is not an OTLP trace request (Jaeger's or Zipkin's export, OTLP logs or metrics) is reported as
what it looks like, with what was expected; a file that is not JSON at all (binary, a protobuf
export) is one problem, not one per line. `write_traces` writes SDK spans in the same format."""

from __future__ import annotations

import gzip
import io
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

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
    #: Spans read after their trace's runs were built (`TRACE_IDLE_SPANS` or more spans later).
    late_spans: int = 0

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


#: Longest line read (bytes), and longest file read as one JSON document: what one line costs in
#: memory while it is parsed, whatever the file's size. An OTLP receiver takes requests of 4 MiB
#: by default (gRPC's limit), and the Collector's file exporter writes one batch of them a line:
#: 32 MiB holds eight. A longer line is refused, and the rest of its file is not read.
MAX_LINE_BYTES = 32 * 1024 * 1024
#: Problems reported per file: after this many, the rest of the file is not read (a text file that
#: is not JSON would otherwise be a problem a line).
MAX_PROBLEMS_PER_FILE = 20
#: A trace that got no span in this many spans read is taken as complete (by file position, as
#: files carry no arrival times): its runs are built and its spans let go.
TRACE_IDLE_SPANS = 50_000
#: Most spans held at once waiting for their traces to complete; beyond, the least recently
#: added-to traces are built as they are. Memory stays bounded whatever the files' size.
MAX_BUFFERED_SPANS = 200_000
#: Traces whose runs were built, remembered (the most recent) to count a span that comes later.
_RELEASED_KEPT = 65_536
_PEEK_BYTES = 4096


#: Blank lines in a row taken between documents: a few end many files; more is no trace file
#: (8 GiB of newlines, gzipped to a few MB, would otherwise be inflated to its end a line at a time).
MAX_BLANK_LINES = 100_000


class _TooLong(Exception):
    pass


class _TooBlank(Exception):
    pass


_Stream = io.BufferedReader | gzip.GzipFile


def _open(path: Path) -> _Stream:
    """The file's bytes, inflated as they are read when it is gzipped (never inflated whole)."""
    raw = path.open("rb")
    if raw.peek(2)[:2] != b"\x1f\x8b":
        return raw
    raw.close()
    return gzip.GzipFile(path, "rb")  # closes the file it opened


def _line(stream: _Stream) -> bytes:
    line = stream.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise _TooLong
    return line


def _binary(head: bytes) -> bool:
    """Bytes that no JSON text holds: a NUL, or what is not UTF-8 (a protobuf file, random data)."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # not a character cut at the end of the peek
    return False


def _first_line(stream: _Stream) -> tuple[int, bytes]:
    """The first line that is not blank and its number; `b""` for a file of blank lines."""
    number, first = 0, b""
    while not first.strip():
        first = _line(stream)
        number += 1
        if not first:
            return number, b""
        if number > MAX_BLANK_LINES:
            raise _TooBlank
    return number, first


def _gave_up(path: Path, problems: list[InputProblem]) -> bool:
    """True, with a last problem saying so, once a file has had its fill of problems."""
    if len(problems) < MAX_PROBLEMS_PER_FILE:
        return False
    problems.append(
        InputProblem(str(path), f"{MAX_PROBLEMS_PER_FILE} problems: the rest of the file is not read")
    )
    return True


def _documents(path: Path, stream: _Stream, problems: list[InputProblem]) -> Iterator[tuple[str, Any]]:
    """The JSON documents of a file, one per line or the whole file as one, as they are read."""
    if _binary(stream.peek(_PEEK_BYTES)[:_PEEK_BYTES]):
        problems.append(InputProblem(str(path), f"binary data, not JSON; {EXPECTED}"))
        return
    number, first = _first_line(stream)
    if not first:
        return
    ahead: list[bytes] = []  # whole lines read ahead, last first
    carry = b""  # the start of a line read ahead
    try:
        document = orjson.loads(first)
    except orjson.JSONDecodeError as line_error:
        # Not JSON Lines: the file may be one document over several lines (pretty-printed).
        whole = first + stream.read(MAX_LINE_BYTES + 1 - len(first))
        if len(whole) <= MAX_LINE_BYTES:
            try:
                yield str(path), orjson.loads(whole)
                return
            except orjson.JSONDecodeError:
                pass
        problems.append(InputProblem(f"{path}:{number}", f"not JSON: {line_error}; {EXPECTED}"))
        # JSON Lines after all, with a bad first line: the lines read ahead come first.
        ahead = whole[len(first) :].split(b"\n")
        carry = ahead.pop()
        ahead.reverse()
    else:
        second = _line(stream)
        if not second:
            yield str(path), document  # a file of one document is named as the file
            return
        yield f"{path}:{number}", document
        ahead = [second]
    blank = 0  # blank lines in a row
    while True:
        if _gave_up(path, problems):
            return
        number += 1
        if ahead:
            line = ahead.pop()
        else:
            line = _line(stream)
            if carry:
                line, carry = carry + line, b""
                if len(line) > MAX_LINE_BYTES:
                    raise _TooLong
            if not line:
                return
        if not line.strip():
            blank += 1
            if blank > MAX_BLANK_LINES:
                raise _TooBlank
            continue
        blank = 0
        try:
            yield f"{path}:{number}", orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            problems.append(InputProblem(f"{path}:{number}", f"not JSON: {exc}"))


def read_spans(path: Path, problems: list[InputProblem]) -> Iterator[SpanRecord]:
    """The spans of one file, a line at a time; what is wrong with it goes to `problems`. After
    `MAX_PROBLEMS_PER_FILE` problems the rest of the file is not read (random text would
    otherwise be a problem a line)."""
    found: list[InputProblem] = []
    try:
        with _open(path) as stream:
            for where, document in _documents(path, stream, found):
                document = _unwrapped(document)
                problem = not_otlp_traces(document)
                if problem is not None:
                    found.append(InputProblem(where, problem))
                    continue
                try:
                    request = parse_json_request(document)
                except OtlpDecodeError as exc:
                    found.append(InputProblem(where, str(exc)))
                    continue
                yield from span_records(request)
    except _TooLong:
        found.append(
            InputProblem(
                str(path),
                f"a line is longer than {MAX_LINE_BYTES} bytes (MAX_LINE_BYTES): refused, "
                "and the rest of the file is not read",
            )
        )
    except _TooBlank:
        found.append(
            InputProblem(
                str(path),
                f"more than {MAX_BLANK_LINES:,} blank lines in a row (MAX_BLANK_LINES): refused, "
                "and the rest of the file is not read",
            )
        )
    except (OSError, EOFError, zlib.error) as exc:
        found.append(InputProblem(str(path), f"cannot read: {exc}"))
    problems.extend(found)


@dataclass(slots=True)
class _Trace:
    """The spans of one trace read so far, and whether its tree has closed: a root seen, and the
    parent of every span among its spans."""

    last_seen: int
    spans: list[SpanRecord] = field(default_factory=list)
    ids: set[int] = field(default_factory=set)
    awaited: set[int] = field(default_factory=set)
    rooted: bool = False

    def add(self, span: SpanRecord) -> None:
        self.spans.append(span)
        self.ids.add(span.span_id)
        self.awaited.discard(span.span_id)
        parent = span.parent_span_id
        if parent is None:
            self.rooted = True
        elif parent not in self.ids:
            self.awaited.add(parent)

    @property
    def complete(self) -> bool:
        return self.rooted and not self.awaited


class _OpenTraces:
    """The traces being read, least recently added-to first, each held until its tree closes or
    it goes idle, and never more than `MAX_BUFFERED_SPANS` spans at once."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.traces: OrderedDict[int, _Trace] = OrderedDict()
        #: Traces seen complete since the last check: checked again then (a late batch may reopen).
        self.closed: list[int] = []
        self.buffered = 0
        #: Traces already built, to count a span that comes after them.
        self.released: OrderedDict[int, None] = OrderedDict()

    def add(self, span: SpanRecord, position: int) -> None:
        trace = self.traces.get(span.trace_id)
        if trace is None:
            trace = self.traces[span.trace_id] = _Trace(position)
            if span.trace_id in self.released:
                self.reading.late_spans += 1  # built again with what comes of it now
            else:
                self.reading.traces += 1
        else:
            self.traces.move_to_end(span.trace_id)
            trace.last_seen = position
        trace.add(span)
        self.buffered += 1
        if trace.complete:
            self.closed.append(span.trace_id)

    def due(self, position: int) -> Iterator[AgentRun]:
        """The runs of the traces complete, idle, or the oldest beyond the buffer's bound.
        Checked every 1024 spans (or when over the bound) so that complete traces wait a
        little for spans written after their root (a late batch)."""
        if not (position % 1024 == 0 or self.buffered > MAX_BUFFERED_SPANS):
            return
        for trace_id in self.closed:
            if trace_id in self.traces and self.traces[trace_id].complete:
                yield from self._release(trace_id)
        self.closed.clear()
        while self.traces and (
            self.buffered > MAX_BUFFERED_SPANS
            or next(iter(self.traces.values())).last_seen <= position - TRACE_IDLE_SPANS
        ):
            yield from self._release(next(iter(self.traces)))

    def rest(self) -> Iterator[AgentRun]:
        """The runs of every trace still held, once all files are read."""
        while self.traces:
            yield from self._release(next(iter(self.traces)))

    def _release(self, trace_id: int) -> Iterator[AgentRun]:
        trace = self.traces.pop(trace_id)
        self.buffered -= len(trace.spans)
        self.released[trace_id] = None
        if len(self.released) > _RELEASED_KEPT:
            self.released.popitem(last=False)
        for run in build_runs(trace.spans):
            self.reading.runs += 1
            yield run


def runs_from_files(
    paths: Iterable[Path],
    problems: list[InputProblem],
    progress: Callable[[str], None] | None = None,
    reading: Reading | None = None,
) -> Iterator[AgentRun]:
    """Every run in the files, trace by trace, as the files are read: a trace's runs are built
    once its tree has closed (a root, and every span's parent) or it got no span in
    `TRACE_IDLE_SPANS` spans read, and its spans are let go then. Spans of one trace may span
    several files. `reading` counts what was read."""
    reading = reading if reading is not None else Reading()
    open_traces = _OpenTraces(reading)
    for path in paths:
        for span in read_spans(path, problems):
            reading.spans += 1
            position = reading.spans
            open_traces.add(span, position)
            if progress is not None and position % 100_000 == 0:
                progress(f"read {counted(position, 'span')} in {counted(reading.traces, 'trace')}")
            yield from open_traces.due(position)
    yield from open_traces.rest()
    if reading.late_spans and progress is not None:
        progress(
            f"{reading.late_spans} spans came {TRACE_IDLE_SPANS} or more spans after the rest of their "
            "trace, whose runs were already built: their runs were built from them alone"
        )
