"""OTLP/JSON trace files: one `ExportTraceServiceRequest` per file, or one per line (the
Collector's file exporter), optionally gzipped. Files are read as a stream: a line at a time
(at most `MAX_LINE_BYTES`), gzip inflated as it is read, and each trace let go once its runs are
built, so memory does not grow with a file's size. Bad lines are reported and skipped; JSON that
is not an OTLP trace request (Jaeger's or Zipkin's export, OTLP logs or metrics) is reported as
what it looks like, with what was expected; a file that is not JSON at all (binary, a protobuf
export) is one problem, not one per line. Traces are held until their runs can be built within
bounds of spans and bytes (`open_traces`); `trace_writer` writes SDK spans in this format."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from otel_scorers.human_text import counted
from otel_scorers.model import AgentRun
from otel_scorers.otlp.decode import OtlpDecodeError, loads_replacing, parse_json_request, span_records
from otel_scorers.runs.open_traces import CHECK_EVERY_SPANS, TRACE_IDLE_SPANS, OpenTraces
from otel_scorers.runs.open_traces import Reading as Reading  # where the commands import it from
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
_PEEK_BYTES = 4096


#: Blank lines in a row taken between documents: a few end many files; more is no trace file
#: (8 GiB of newlines, gzipped to a few MB, would otherwise be inflated to its end a line at a time).
MAX_BLANK_LINES = 100_000


class _TooLong(Exception):
    pass


#: Most a gzipped file is inflated, as a multiple of its size on disk (and at least
#: `MIN_INFLATED_BYTES`): OTLP/JSON compresses 2 to 25 times, a gzip bomb about 1,000 times. Past
#: it the file is refused, so reading it costs time and bytes in proportion to its size on disk
#: (lines of `{}` or of spaces reach neither the line nor the blank-line cap). A real file this
#: repetitive can be read unzipped.
MAX_INFLATION_RATIO = 250
MIN_INFLATED_BYTES = 2 * MAX_LINE_BYTES


class _TooBlank(Exception):
    pass


class _TooInflated(Exception):
    pass


class _BoundedGzip(gzip.GzipFile):
    """A gzipped file inflated as it is read, refusing to inflate beyond `limit` bytes."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(path, "rb")  # closes the file it opens
        self.limit = limit

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        if self.tell() > self.limit:
            raise _TooInflated
        return line


_Stream = io.BufferedReader | _BoundedGzip


def _open(path: Path) -> _Stream:
    """The file's bytes, inflated as they are read when it is gzipped (never inflated whole,
    nor beyond `MAX_INFLATION_RATIO` times its size)."""
    raw = path.open("rb")
    if raw.peek(2)[:2] != b"\x1f\x8b":
        return raw
    size = path.stat().st_size
    raw.close()
    return _BoundedGzip(path, max(MIN_INFLATED_BYTES, size * MAX_INFLATION_RATIO))


def _line(stream: _Stream) -> bytes:
    line = stream.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise _TooLong
    return line


def _binary(head: bytes) -> bool:
    """Bytes that no JSON text holds: a NUL, or what is not UTF-8 (a protobuf file, random data)
    in a file that does not start as JSON does (a span's name of such bytes is read, replaced:
    `loads_replacing`)."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # not a character cut at the end of the peek
        return exc.start < len(head) - 4 and head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] not in (b"{", b"[")
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


def _documents(path: Path, stream: _Stream, problems: list[InputProblem]) -> Iterator[tuple[str, Any, int]]:
    """The JSON documents of a file, one per line or the whole file as one, as they are read,
    each with where it is and how many bytes it was read from."""
    if _binary(stream.peek(_PEEK_BYTES)[:_PEEK_BYTES]):
        problems.append(InputProblem(str(path), f"binary data, not JSON; {EXPECTED}"))
        return
    number, first = _first_line(stream)
    if not first:
        return
    ahead: list[bytes] = []  # whole lines read ahead, last first
    carry = b""  # the start of a line read ahead
    try:
        document = loads_replacing(first, f"{path}:{number}")
    except orjson.JSONDecodeError as line_error:
        # Not JSON Lines: the file may be one document over several lines (pretty-printed).
        whole = first + stream.read(MAX_LINE_BYTES + 1 - len(first))
        if len(whole) <= MAX_LINE_BYTES:
            try:
                yield str(path), orjson.loads(whole), len(whole)
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
            yield str(path), document, len(first)  # a file of one document is named as the file
            return
        yield f"{path}:{number}", document, len(first)
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
            yield f"{path}:{number}", loads_replacing(line, f"{path}:{number}"), len(line)
        except orjson.JSONDecodeError as exc:
            problems.append(InputProblem(f"{path}:{number}", f"not JSON: {exc}"))


def read_spans(path: Path, problems: list[InputProblem]) -> Iterator[SpanRecord]:
    """The spans of one file, a line at a time; what is wrong with it goes to `problems`. After
    `MAX_PROBLEMS_PER_FILE` problems the rest of the file is not read (random text would
    otherwise be a problem a line)."""
    return (span for span, _ in _sized_spans(path, problems))


def _sized_spans(path: Path, problems: list[InputProblem]) -> Iterator[tuple[SpanRecord, int]]:
    """`read_spans`, each span with its share of the bytes of the line it was read from."""
    found: list[InputProblem] = []
    try:
        with _open(path) as stream:
            for where, document, size in _documents(path, stream, found):
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
                refused: list[str] = []
                spans = list(span_records(request, refused))
                if refused:
                    first = "the first " if len(refused) > 1 else ""
                    found.append(
                        InputProblem(where, f"{counted(len(refused), 'span')} left out, {first}{refused[0]}")
                    )
                share = size // max(1, len(spans))
                for span in spans:
                    yield span, share
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
    except _TooInflated:
        found.append(
            InputProblem(
                str(path),
                f"gzip inflating to more than {MAX_INFLATION_RATIO} times its size (MAX_INFLATION_RATIO), "
                "as a gzip bomb does: refused, and the rest of the file is not read (a real file "
                "this repetitive can be read unzipped)",
            )
        )
    except (OSError, EOFError, zlib.error) as exc:
        found.append(InputProblem(str(path), f"cannot read: {exc}"))
    problems.extend(found)


def runs_from_files(
    paths: Iterable[Path],
    problems: list[InputProblem],
    progress: Callable[[str], None] | None = None,
    reading: Reading | None = None,
) -> Iterator[AgentRun]:
    """Every run in the files, trace by trace, as the files are read: a trace's runs are built
    once its tree has closed (a root, and every span's parent), it got no span in
    `TRACE_IDLE_SPANS` spans read, or it is the oldest held when the spans held exceed their
    bounds (`open_traces`), and its spans are let go then. Spans of one trace may span
    several files. `reading` counts what was read."""
    reading = reading if reading is not None else Reading()
    open_traces = OpenTraces(reading)
    for path in paths:
        for span, size in _sized_spans(path, problems):
            reading.spans += 1
            position = reading.spans
            open_traces.add(span, position, size)
            if progress is not None and position % 100_000 == 0:
                progress(f"read {counted(position, 'span')} in {counted(reading.traces, 'trace')}")
            yield from open_traces.due(position)
    yield from open_traces.rest()
    if reading.unbuilt:
        problems.append(
            InputProblem(
                counted(reading.unbuilt, "trace"),
                f"could not be read into runs, the first {reading.first_unbuilt}",
            )
        )
    if reading.late_spans and progress is not None:
        progress(
            f"{counted(reading.late_spans, 'span')} came after their trace's runs were built (its tree "
            f"closed and no span of it in {CHECK_EVERY_SPANS} spans read, none at all in "
            f"{TRACE_IDLE_SPANS}, or let go to bound the spans held): their runs were built from them alone"
        )
