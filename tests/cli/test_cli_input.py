"""`otel-scorers runs` and `score` read their input as a stream: memory does not grow with a
file's size, an over-long line (a gzip bomb's) is refused with a clear error, and a file that is
not JSON at all is one problem, not one per line. Each run is a subprocess, its peak memory
measured by the operating system."""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from otel_scorers.runs.otlp_files import MAX_LINE_BYTES

#: Each case ends well within this, or fails.
TIME_LIMIT_S = 120

_MEASURED = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stdout[-2000:])\n"
    "sys.stderr.write(done.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(done.returncode)\n"
)


def _cli(*args: str, before: str = "") -> tuple[int, str, int]:
    """Exit code, stderr and peak resident memory (kB) of `otel-scorers <args>`, after running
    the Python code `before` in its process."""
    command = [sys.executable, "-m", "otel_scorers.cli"]
    if before:
        command = [
            sys.executable,
            "-c",
            before + "from otel_scorers.cli.main import main; raise SystemExit(main())",
        ]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command, *args],
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT_S,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    return done.returncode, done.stderr, int(done.stdout.split()[-1])


def _trace(n: int) -> dict[str, object]:
    """One trace of an agent run with a model call and a tool call, as the file exporter writes it."""
    trace_id = f"{n + 1:032x}"
    root, chat, tool = (f"{n * 3 + k + 1:016x}" for k in range(3))
    start = 1_700_000_000_000_000_000 + n * 1_000_000

    def span(span_id: str, parent: str, name: str, operation: str, **extra: str) -> dict[str, object]:
        attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}]
        attributes += [{"key": key, "value": {"stringValue": value}} for key, value in extra.items()]
        return {
            "traceId": trace_id,
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 500_000),
            "attributes": attributes,
        }

    spans = [
        span(tool, chat, "execute_tool get_weather", "execute_tool", **{"gen_ai.tool.name": "get_weather"}),
        span(chat, root, "chat gpt-4o", "chat", **{"gen_ai.request.model": "gpt-4o"}),
        span(root, "", "invoke_agent weather", "invoke_agent", **{"gen_ai.agent.name": "weather"}),
    ]
    return {
        "resourceSpans": [
            {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "agent"}, "spans": spans}]}
        ]
    }


def _write(path: Path, traces: int) -> Path:
    with path.open("wb") as out:
        for n in range(traces):
            out.write(orjson.dumps(_trace(n)) + b"\n")
    return path


@pytest.mark.parametrize("command", ["runs", "score"])
def test_peak_memory_does_not_grow_with_the_files_size(tmp_path: Path, command: str) -> None:
    small = _write(tmp_path / "small.jsonl", 500)
    large = _write(tmp_path / "large.jsonl", 8_000)
    args: tuple[str, ...] = ()
    if command == "score":
        config = tmp_path / "config.yaml"
        config.write_text("scorers:\n  - type: no_tool_errors\n")
        args = ("--config", str(config))
    code, stderr, small_kb = _cli(command, *args, str(small))
    assert code == 0, stderr
    code, stderr, large_kb = _cli(command, *args, str(large))
    assert code == 0, stderr
    # Sixteen times the traces (24,000 spans): the same peak, within the allocator's scatter.
    print(f"peak RSS of {command}: {small_kb} kB for 500 traces, {large_kb} kB for 8,000")
    assert large_kb < small_kb * 1.2, (small_kb, large_kb)


def _remote_rooted(path: Path, traces: int, text_bytes: int) -> Path:
    """Traces whose agent span has a parent in another service (so no trace's tree ever closes
    in the file), each run's messages `text_bytes` long."""
    with path.open("wb") as out:
        for n in range(traces):
            trace = _trace(n)
            spans: Any = trace["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[index]
            text = (f"run {n}: " + "the weather in Lisbon is mild " * (text_bytes // 30))[:text_bytes]
            messages = [{"role": "user", "parts": [{"type": "text", "content": text}]}]
            for span in spans[1:]:
                span["attributes"].append(
                    {
                        "key": "gen_ai.input.messages",
                        "value": {"stringValue": orjson.dumps(messages).decode()},
                    }
                )
            spans[2]["parentSpanId"] = "00000000000000ff"  # the caller's span, not in this file
            out.write(orjson.dumps(trace) + b"\n")
    return path


def test_traces_that_never_close_are_not_held_to_the_end_of_the_file(tmp_path: Path) -> None:
    """Spans wait for their trace's tree to close within a bound of bytes, not only of spans: a
    file whose traces never close (each agent called from another service) is built as it is
    read, not held whole until its end. The bound is lowered to 4 MiB here, so a file of tens of
    megabytes shows it."""
    config = tmp_path / "config.yaml"
    config.write_text("scorers:\n  - type: no_tool_errors\n")
    small = _remote_rooted(tmp_path / "small.jsonl", 150, 20_000)
    large = _remote_rooted(tmp_path / "large.jsonl", 1_500, 20_000)
    lowered = "import otel_scorers.runs.open_traces as held; held.MAX_BUFFERED_BYTES = 4 << 20\n"
    peaks = []
    for path, runs in ((small, "150 runs"), (large, "1500 runs")):
        code, stderr, peak_kb = _cli("score", "--config", str(config), str(path), before=lowered)
        assert code == 0, stderr
        assert f"scored {runs}, {runs.replace('runs', 'scores')}" in stderr, stderr  # every run built
        peaks.append(peak_kb)
    grown_kb = peaks[1] - peaks[0]
    size_kb = large.stat().st_size // 1024
    print(
        f"peak RSS of score: {peaks[0]} kB for {small.stat().st_size // 1024} kB, {peaks[1]} kB for {size_kb} kB"
    )
    # Ten times the file: the held spans stay within the bound (held whole, the peak grew by
    # about the file's size).
    assert grown_kb < size_kb // 4, (peaks, size_kb)


def test_a_gzip_bomb_is_refused_by_its_first_line_without_inflating_the_rest(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    member = gzip.compress(b"0" * (1 << 20))  # a gzip file may be many members, read as one
    bomb.write_bytes(member * 1024)  # 1 GiB inflated, about 1 MB on disk, no line break
    code, stderr, peak_kb = _cli("runs", str(bomb))
    assert code == 1
    assert f"skipped {bomb}: a line is longer than {MAX_LINE_BYTES} bytes" in stderr
    print(f"peak RSS: {peak_kb} kB for a 1 GiB gzip bomb")
    assert peak_kb < 400_000, peak_kb  # the longest line's worth, not the gigabyte


def test_binary_and_random_files_are_one_problem_each(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for n in range(2000):
        with provider.get_tracer("agent").start_as_current_span(f"step {n}", attributes={"n": n}):
            pass
    protobuf = tmp_path / "traces.pb"
    protobuf.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    noise = tmp_path / "random.bin"
    noise.write_bytes(random.Random(4).randbytes(2_000_000))
    packed = tmp_path / "random.bin.gz"
    packed.write_bytes(gzip.compress(noise.read_bytes()))
    code, stderr, _ = _cli("runs", str(protobuf), str(noise), str(packed))
    assert code == 1
    for path in (protobuf, noise, packed):
        said = [line for line in stderr.splitlines() if line.startswith(f"otel-scorers: skipped {path}:")]
        assert len(said) == 1, said[:5]
        assert "not JSON" in said[0] and "expected OTLP/JSON traces" in said[0]


def test_a_text_file_that_is_not_json_stops_after_a_bounded_number_of_problems(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("".join(f"line {n}: not JSON\n" for n in range(100_000)))
    code, stderr, _ = _cli("runs", str(text))
    assert code == 1
    said = [line for line in stderr.splitlines() if line.startswith(f"otel-scorers: skipped {text}:")]
    assert 2 <= len(said) <= 25 and "the rest of the file is not read" in said[-1]


def test_a_gzip_of_blank_lines_stops_at_the_blank_line_bound(tmp_path: Path) -> None:
    from otel_scorers.runs.otlp_files import MAX_BLANK_LINES

    bomb = tmp_path / "newlines.jsonl.gz"
    # Blank lines never reach the line cap: past the bound, the file is refused (a trace after
    # them is not read), instead of being inflated to its end a line at a time.
    blank = gzip.compress(b"\n" * (MAX_BLANK_LINES + 10))
    bomb.write_bytes(blank + gzip.compress(orjson.dumps(_trace(1)) + b"\n"))
    code, stderr, _ = _cli("runs", str(bomb))
    assert code == 1
    assert f"more than {MAX_BLANK_LINES:,} blank lines in a row" in stderr
    leading = tmp_path / "leading.jsonl"  # a few blank lines are nothing
    leading.write_bytes(b"\n" * 5 + orjson.dumps(_trace(1)) + b"\n\n\n" + orjson.dumps(_trace(2)) + b"\n")
    code, stderr, _ = _cli("runs", str(leading))
    assert code == 0, stderr


def test_a_gzip_that_inflates_past_the_ratio_bound_is_refused_naming_the_file(tmp_path: Path) -> None:
    from otel_scorers.runs.otlp_files import MAX_INFLATION_RATIO, MIN_INFLATED_BYTES

    # Lines of an empty request padded with spaces reach neither the line cap nor the blank-line
    # cap: without a bound on inflating, 512 MiB of them are read to the end from under 1 MB.
    line = b'{"resourceSpans": []' + b" " * (1 << 20) + b"}\n"
    bomb = tmp_path / "padded.jsonl.gz"
    bomb.write_bytes(gzip.compress(line) * 512)  # a gzip file may be many members, read as one
    assert max(MIN_INFLATED_BYTES, bomb.stat().st_size * MAX_INFLATION_RATIO) < len(line) * 512
    code, stderr, peak_kb = _cli("runs", str(bomb))
    assert code == 1
    assert f"skipped {bomb}: gzip inflating to more than {MAX_INFLATION_RATIO} times its size" in stderr
    print(f"peak RSS: {peak_kb} kB")
    # A gzipped file of real traces (compressing about 20 times) is read whole.
    real = tmp_path / "traces.jsonl.gz"
    real.write_bytes(gzip.compress(_write(tmp_path / "traces.jsonl", 2_000).read_bytes()))
    code, stderr, _ = _cli("runs", str(real))
    assert code == 0, stderr
