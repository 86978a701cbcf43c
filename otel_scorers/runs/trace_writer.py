"""Spans written as the Collector's file exporter writes them: what `otel-scorers score` and
`runs` read back (`otlp_files`). The encoding is `otlp.trace_file`'s, which `TraceFileExporter`
writes too."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan

from otel_scorers.otlp.trace_file import trace_lines


def write_traces(path: Path, spans: Iterable[ReadableSpan]) -> int:
    """Write `spans` as the Collector's file exporter does: one OTLP/JSON request per line, here
    one per trace, in the order the traces started. The number of traces written."""
    written = 0
    with path.open("wb") as out:
        for line in trace_lines(spans):
            out.write(line)
            written += 1
    return written
