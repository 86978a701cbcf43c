"""What the sidecar counts against `max_bytes` for buffered spans is what they take: measured as
the resident memory a fresh process grows by, for realistic agent spans and for bare ones (where
per-span overhead is nearly everything)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MEASURE = """
import gc, os, sys
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.otlp.decode import parse_protobuf_request
from otel_scorers.config import SidecarConfig
from otel_scorers.sidecar.batch_assembler import BatchAssembler, Limits
from otel_scorers.sidecar.request_scan import scan

def rss():
    for line in open(f"/proc/{os.getpid()}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024

def bare_request(index):
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for number in range(20_000):
        span = scope.spans.add()
        span.trace_id = index.to_bytes(2, "big") + (number // 10).to_bytes(14, "big")
        span.span_id = os.urandom(8)
        span.name = "chat"
    return request.SerializeToString()

def agent_request(index):
    from otel_scorers.demos.example_agent import DEMO_RUNS
    from tests.sidecar_harness import agent_spans, encode
    request = encode(agent_spans(DEMO_RUNS * 60))
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                span.trace_id = index.to_bytes(2, "big") + span.trace_id[2:]
    return request.SerializeToString()

if sys.argv[1] != "measure":  # written by another process: its garbage is not reused here
    make = bare_request if sys.argv[1] == "bare" else agent_request
    with open(sys.argv[2], "wb") as out:
        for index in range(8):
            body = make(index)
            out.write(len(body).to_bytes(4, "big") + body)
    sys.exit(0)
data = open(sys.argv[2], "rb").read()
bodies = []
while data:
    size = int.from_bytes(data[:4], "big")
    bodies.append(data[4 : 4 + size])
    data = data[4 + size :]
settings = SidecarConfig()
assembler = BatchAssembler(
    PipelineMetrics(MeterProvider()),
    Limits(10**9, 10**9, 10**12),
    settings.decision_wait_s,
    settings.max_wait_s,
    settings.late_trace_memory,
)
gc.collect()
before = rss()
for body in bodies:
    assembler.commit(scan(parse_protobuf_request(body), len(body), 0))
gc.collect()
print(rss() - before, assembler.buffered_bytes)
"""


@pytest.mark.parametrize("spans", ["agent", "bare"])
def test_the_bytes_counted_for_buffered_spans_are_what_they_take(spans: str, tmp_path: Path) -> None:
    bodies = tmp_path / "bodies"
    subprocess.run([sys.executable, "-c", MEASURE, spans, str(bodies)], timeout=120, check=True)
    output = subprocess.run(
        [sys.executable, "-c", MEASURE, "measure", str(bodies)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    grown, counted = (int(value) for value in output.split())
    assert 0.75 < counted / grown < 1.33, f"counted {counted} bytes, the process grew by {grown}"
