"""A real collector in front: rotel receives the agent's traces from the OTel SDK and exports them
to the sidecar over OTLP/gRPC; the scores come back to a capturing receiver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import Rotel, RunningSidecar, agent_spans, is_run, sidecar_document
from tests.waiting import wait_until

pytest.importorskip("rotel", reason="rotel (pip install rotel==0.0.1a15) is not installed")


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def test_traces_through_rotel_are_scored(tmp_path: Path, capture: OtlpCapture) -> None:
    spans = agent_spans(DEMO_RUNS)
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        rotel = Rotel(tmp_path, f"http://{sidecar.grpc_endpoint}", "--batch-timeout", "50ms")
        try:
            exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{rotel.grpc_port}", insecure=True)
            half = len(spans) // 2
            assert exporter.export(spans[:half]) == SpanExportResult.SUCCESS
            assert exporter.export(spans[half:]) == SpanExportResult.SUCCESS
            exporter.shutdown()
            assert capture.wait_for(
                lambda: sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE) >= 18
            )
        finally:
            rotel.stop()
    evaluations = [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]
    assert len(evaluations) == 18
    run_ids = {span.context.span_id.to_bytes(8, "big") for span in spans if is_run(span)}
    assert {span.parent_span_id for span in evaluations} == run_ids
    assert {attrs(span.attributes)["gen_ai.evaluation.name"] for span in evaluations} == {
        "no_tool_errors",
        "called_tool",
        "says-sunny",
    }


def test_the_rotel_command_in_docs_sidecar_md_runs_as_written(tmp_path: Path, capture: OtlpCapture) -> None:
    """The lines after `pip install rotel`, with free ports in place of 4317, 4318 and 14317."""
    import os
    import re
    import signal
    import subprocess
    import sys

    from tests.sidecar_harness import free_port

    page = (Path(__file__).resolve().parents[2] / "docs" / "sidecar.md").read_text()
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", page, flags=re.S) if "pip install rotel" in b]
    with RunningSidecar(sidecar_document(capture.endpoint)) as sidecar:
        grpc, http = free_port(), free_port()
        sidecar_port = sidecar.grpc_endpoint.rsplit(":", 1)[1]
        script = (
            block.replace("pip install rotel\n", "")
            .replace(":14317", f":{sidecar_port}")
            .replace(":4317", f":{grpc}")
            .replace(":4318", f":{http}")
        )
        bin_dir = str(Path(sys.executable).parent)
        process = subprocess.Popen(
            ["bash", "-euc", script],
            cwd=tmp_path,
            env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ["PATH"]},
            start_new_session=True,
        )
        try:
            exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{grpc}", insecure=True)

            def taken() -> bool:
                assert process.poll() is None, "rotel exited"
                return exporter.export(agent_spans(DEMO_RUNS[:1])) == SpanExportResult.SUCCESS

            wait_until(taken, 60, "rotel to take an export")
            exporter.shutdown()
            assert capture.wait_for(lambda: any(scope == OWN_SCOPE for _, scope, _ in capture.spans()))
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(10)
