"""The instruction gate's comparison (`bench/instructions.py`) and the receiving process's fixed
workload: counted the same way in every run, a gated workload never recorded fails the gate."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import instructions  # noqa: E402

from otel_scorers.otlp.trace_id_schema import TraceIdRequest  # noqa: E402
from otel_scorers.selection.sampling import threshold_for  # noqa: E402
from otel_scorers.sidecar.request_scan import reads_trace_ids_first, scan  # noqa: E402


def test_a_gated_workload_absent_from_the_baseline_fails_saying_how_to_record_it() -> None:
    failures = instructions.compare(
        {"sidecar_request[1]": 1000.0, "sidecar_inline_request": 5.0},
        {},
        0.03,
        {"sidecar_request[1]": "receive"},
    )
    assert len(failures) == 1  # the workload outside the gate is only printed
    assert "sidecar_request[1]" in failures[0]
    assert "python bench/instructions.py --only receive --update" in failures[0]


def test_a_workload_over_its_baseline_fails_and_one_within_passes() -> None:
    gated = {"a": "receive", "b": "receive"}
    failures = instructions.compare({"a": 1040.0, "b": 1020.0}, {"a": 1000.0, "b": 1000.0}, 0.03, gated)
    assert len(failures) == 1 and failures[0].startswith("a: 1,040 instructions")


def test_the_receiving_workloads_sample_the_same_traces_in_every_run() -> None:
    threshold = threshold_for(instructions.RECEIVE_RATES["sidecar_request[0.01]"])
    assert reads_trace_ids_first(threshold)  # the reduced read, as a sidecar at 0.01 reads

    def sampled(bodies: list[bytes]) -> list[list[bytes]]:
        return [list(scan(TraceIdRequest.FromString(body), len(body), threshold).groups) for body in bodies]

    first, second = instructions.receive_requests(8), instructions.receive_requests(8)
    assert sampled(first) == sampled(second)
    assert sum(map(len, sampled(first))) > 0
