"""OTLP/JSON trace files: one `ExportTraceServiceRequest` per file, or one per line (the
Collector's file exporter), optionally gzipped. Bad lines are reported and skipped."""

from __future__ import annotations

import gzip
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from otel_scorers.model import AgentRun
from otel_scorers.otlp import OtlpDecodeError, parse_json_request, span_records
from otel_scorers.run_builder import build_runs
from otel_scorers.span_record import SpanRecord


@dataclass(frozen=True, slots=True)
class InputProblem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def read_spans(path: Path, problems: list[InputProblem]) -> Iterator[SpanRecord]:
    try:
        data = _read(path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        problems.append(InputProblem(str(path), f"cannot read: {exc}"))
        return
    try:
        documents: Iterable[tuple[str, bytes]] = [(str(path), data)]
        orjson.loads(data)
    except orjson.JSONDecodeError:
        documents = [
            (f"{path}:{number}", line)
            for number, line in enumerate(data.splitlines(), start=1)
            if line.strip()
        ]
    for where, document in documents:
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
) -> Iterator[AgentRun]:
    """Every run in the files, trace by trace (spans of one trace may span several files)."""
    traces: dict[int, list[SpanRecord]] = defaultdict(list)
    count = 0
    for path in paths:
        for span in read_spans(path, problems):
            traces[span.trace_id].append(span)
            count += 1
            if progress is not None and count % 100_000 == 0:
                progress(f"read {count} spans in {len(traces)} traces")
    for spans in traces.values():
        yield from build_runs(spans)
