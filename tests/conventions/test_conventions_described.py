"""An instrumentation the code does not know, read from a `conventions:` entry alone.

`acme` (tests/conventions/acme_instrumentation.py) writes its spans with attribute names of its
own. Without a description no run is found; with its YAML entry each run is rebuilt exactly as
the agent made it, by `runs`' reading, by the in-process processor and by the sidecar.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor, conventions
from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.span_record import OWN_SCOPE, from_readable_span

from ..conftest import RunRecorder, Telemetry
from ..otlp_capture import OtlpCapture
from ..sidecar_harness import RunningSidecar, encode, send_grpc, sidecar_document
from .acme_instrumentation import (
    CONFIG,
    EXPECTED,
    SCOPE,
    Acme,
    acme_trace,
    docs_example,
    no_descriptions_after,
    view,
    write_acme,
)

__all__ = ["no_descriptions_after"]  # the fixture, used by every test here


def test_an_unknown_instrumentation_gives_no_run_until_it_is_described() -> None:
    spans = [from_readable_span(span) for span in acme_trace()]
    assert build_runs(spans) == []

    config = parse_config(yaml.safe_load(CONFIG))
    conventions.use_descriptions(config.conventions)
    (run,) = build_runs(spans)
    assert view(run) == EXPECTED
    assert run.convention == "acme"
    assert not run.missing


def test_runs_reads_the_described_instrumentation_with_its_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace_file = tmp_path / "acme.jsonl"
    write_traces(trace_file, acme_trace())
    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    assert main(["runs", str(trace_file)]) == 1  # nothing read: the instrumentation is unknown
    capsys.readouterr()
    assert main(["runs", "-c", str(config_file), str(trace_file)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    run = json.loads(line)
    assert (run["agent_name"], run["input"], run["output"]) == (
        "forecaster",
        "Weather in Paris?",
        "Sunny, 21°C.",
    )
    assert [call["name"] for call in run["tool_calls"]] == ["get_weather", "get_alerts"]


def test_the_processor_scores_a_described_instrumentation_live(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    config = parse_config(yaml.safe_load(CONFIG))
    processor = ScoringSpanProcessor([recorder], conventions=config.conventions, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    write_acme(Acme(telemetry.tracer_provider))
    assert processor.force_flush(5000)
    processor.shutdown()
    (run,) = recorder.runs
    assert view(run) == EXPECTED


def test_a_handoff_span_hands_the_run_on() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    acme = Acme(provider)

    def handoff() -> None:
        with acme.tracer.start_as_current_span(
            "hand", attributes={"acme.is": "handoff", "acme.to": "expert"}
        ):
            pass

    with acme.tracer.start_as_current_span("outer"):
        acme.agent("triage", "Weather in Paris?", "", "t", [handoff])
        acme.agent("expert", "Weather in Paris?", "Sunny.", "t", [])
    conventions.use_descriptions(parse_config(yaml.safe_load(CONFIG)).conventions)
    (run,) = build_runs([from_readable_span(span) for span in exporter.get_finished_spans()])
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage", "expert")]
    assert run.final_agent == "expert" and run.output == "Sunny."
    assert run.tool_calls == ()


def test_the_worked_example_of_the_docs_rebuilds_the_run() -> None:
    example = docs_example("conventions.md", "## Describe an instrumentation")
    config = parse_config({"scorers": [{"type": "no_tool_errors"}], **example})
    conventions.use_descriptions(config.conventions)
    (run,) = build_runs([from_readable_span(span) for span in acme_trace()])
    assert view(run) == EXPECTED


@pytest.mark.parametrize("scoring_process", [False, True], ids=["scoring-thread", "scoring-process"])
def test_the_sidecar_scores_a_described_instrumentation(scoring_process: bool) -> None:
    with OtlpCapture() as capture:
        document = sidecar_document(
            capture.endpoint, [{"type": "no_tool_errors"}], scoring_process=scoring_process
        )
        document["conventions"] = yaml.safe_load(CONFIG)["conventions"]
        with RunningSidecar(document) as sidecar:
            send_grpc(sidecar.grpc_endpoint, encode(acme_trace()).SerializeToString())

            def scored() -> list[Any]:
                return [span for _, scope, span in capture.spans() if scope == OWN_SCOPE]

            assert capture.wait_for(lambda: len(scored()) >= 1, 30)
    (evaluation,) = scored()
    attributes = {item.key: item.value for item in evaluation.attributes}
    assert attributes["gen_ai.agent.name"].string_value == "forecaster"
    assert attributes["gen_ai.evaluation.score.value"].double_value == 0.0  # get_alerts failed


def test_a_large_attribute_read_by_many_sources_is_decoded_once_per_span() -> None:
    import gc
    import math
    import time

    from otel_scorers.conventions.described import described
    from otel_scorers.span_record import SpanRecord

    blob = json.dumps({"items": [{"n": n, "text": "x" * 40} for n in range(40_000)], "reply": "done"})

    def cost(paths: int) -> float:
        tried = [{"attribute": "acme.blob", "path": f"missing_{n}"} for n in range(paths - 1)]
        sources = [*tried, {"attribute": "acme.blob", "path": "reply"}]
        (reader,) = described(
            [
                {
                    "name": "blob",
                    "scope": SCOPE,
                    "run": {"when": {"attributes": {"acme.is": "agent"}}, "output": sources},
                }
            ]
        )
        best = math.inf
        for _ in range(3):  # the best of three: a collection or another process may stall one
            span = SpanRecord(1, 2, None, "agent", attributes={"acme.is": "agent", "acme.blob": blob})
            gc.collect()
            started = time.process_time()
            content = reader.run_content(span)
            best = min(best, time.process_time() - started)
            assert content.output_text == "done"
        return best

    # Forty paths tried in the same 2 MB attribute: about the cost of one when it is decoded once,
    # forty times it when each path decodes it again.
    assert cost(40) < 5 * cost(1)
