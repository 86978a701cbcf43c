"""An instrumentation the code does not know, read from a `conventions:` entry alone.

`acme` below is a small instrumentation with attribute names of its own, written through the
real OpenTelemetry SDK: its agent span says what it is in `acme.is` (a key whose name does not
say it holds a kind of span, so no vocabulary is inferred from it: docs/conventions.md), the
request and the reply as JSON, the tool's failure in a span event (its status stays unset), the conversation in
`acme.thread`. Without a description no run is found; with the YAML entry below each run is
rebuilt exactly as the agent made it, by `runs`' reading and by the in-process processor.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor, conventions
from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.conventions.shipped import SHIPPED_DESCRIPTIONS
from otel_scorers.errors import ConfigError
from otel_scorers.runs.otlp_files import runs_from_files
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.span_record import OWN_SCOPE, from_readable_span

from ..conftest import RunRecorder, Telemetry
from ..otlp_capture import OtlpCapture
from ..sidecar_harness import RunningSidecar, encode, send_grpc, sidecar_document

SCOPE = "acme.agents"
CONFIG = """
scorers:
  - type: no_tool_errors
conventions:
  - name: acme
    scope: acme.agents
    run:
      when: {attributes: {acme.is: agent}}
      agent_name: acme.agent
      input: {attribute: acme.request, path: text}
      output: {attribute: acme.reply, path: "parts[-1]"}
      conversation_id: acme.thread
    tool:
      when: {attributes: {acme.is: tool}}
      name: {span: name, strip_prefix: "tool:"}
      call_id: acme.call
      arguments: acme.tool.args
      result: acme.tool.out
      error: {event: acme.failure, attribute: reason}
    model:
      when: {attributes: {acme.is: llm}}
      model: acme.llm
      input_tokens: {attribute: acme.usage, path: in}
      output_tokens: {attribute: acme.usage, path: out}
    handoff:
      when: {attributes: {acme.is: handoff}}
      target: acme.to
"""


class Acme:
    """The instrumentation: what an agent framework of its own would write."""

    def __init__(self, provider: TracerProvider) -> None:
        self.tracer = provider.get_tracer(SCOPE)

    def agent(self, name: str, question: str, answer: str, thread: str, steps: list[Any]) -> None:
        with self.tracer.start_as_current_span(f"agent {name}", attributes={"acme.is": "agent"}) as span:
            span.set_attribute("acme.agent", name)
            span.set_attribute("acme.thread", thread)
            span.set_attribute("acme.request", json.dumps({"text": question, "lang": "en"}))
            for step in steps:
                step()
            span.set_attribute("acme.reply", json.dumps({"parts": ["thinking...", answer]}))

    def llm(self) -> None:
        attributes = {"acme.is": "llm", "acme.llm": "acme-small", "acme.usage": '{"in": 12, "out": 5}'}
        with self.tracer.start_as_current_span("llm", attributes=attributes):
            pass

    def tool(
        self, name: str, call_id: str, arguments: dict[str, Any], result: Any, failure: str | None = None
    ) -> None:
        with self.tracer.start_as_current_span(f"tool:{name}", attributes={"acme.is": "tool"}) as span:
            span.set_attribute("acme.call", call_id)
            span.set_attribute("acme.tool.args", json.dumps(arguments))
            if failure is not None:
                span.add_event("acme.failure", {"reason": failure})
            else:
                span.set_attribute("acme.tool.out", json.dumps(result))


@pytest.fixture(autouse=True)
def no_descriptions_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def acme_trace() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    write_acme(Acme(provider))
    return list(exporter.get_finished_spans())


def write_acme(acme: Acme) -> None:
    acme.agent(
        "forecaster",
        "Weather in Paris?",
        "Sunny, 21°C.",
        "thread-7",
        [
            acme.llm,
            lambda: acme.tool("get_weather", "c1", {"city": "Paris"}, {"temp_c": 21, "sky": "sunny"}),
            lambda: acme.tool("get_alerts", "c2", {"city": "Paris"}, None, failure="alerts service down"),
            acme.llm,
        ],
    )


#: What `write_acme` made, as the run it is.
EXPECTED = {
    "agent_name": "forecaster",
    "input": "Weather in Paris?",
    "output": "Sunny, 21°C.",
    "conversation_id": "thread-7",
    "models": ("acme-small",),
    "tokens": (24, 10),
    "tool_calls": [
        ("get_weather", "c1", {"city": "Paris"}, {"temp_c": 21, "sky": "sunny"}, "ok", None),
        ("get_alerts", "c2", {"city": "Paris"}, None, "error", "alerts service down"),
    ],
}


def view(run: Any) -> dict[str, Any]:
    return {
        "agent_name": run.agent_name,
        "input": run.input,
        "output": run.output,
        "conversation_id": run.conversation_id,
        "models": run.models,
        "tokens": (run.usage.input_tokens, run.usage.output_tokens),
        "tool_calls": [
            (call.name, call.call_id, call.arguments, call.result, call.state, call.error)
            for call in run.tool_calls
        ],
    }


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


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        (
            {"run": {"when": {"atributes": {"k": "v"}}}},
            "conventions[0].run.when.atributes",
            "did you mean 'attributes'",
        ),
        ({"run": {"when": {}, "input": 5}}, "conventions[0].run.input", "an attribute name, a source"),
        (
            {"run": {"when": {}, "input": {"attribute": "a", "path": "a..b"}}},
            "conventions[0].run.input[0].path",
            "not a JSON path",
        ),
        (
            {"run": {"when": {}, "agent_name": {"span": "name", "attribute": "x"}}},
            "conventions[0].run.agent_name[0]",
            "not both",
        ),
        (
            {"run": {"when": {}}, "tool": {"when": {}, "name": {"attr": "x"}}},
            "conventions[0].tool.name[0].attr",
            "did you mean 'attribute'",
        ),
        ({"run": {"when": {}}, "scope": None}, "conventions[0]", "say which spans"),
    ],
)
def test_a_bad_description_is_an_error_naming_its_key(entry: dict[str, Any], path: str, message: str) -> None:
    description = {"name": "x", "scope": "s", **entry}
    if description.get("scope") is None:
        del description["scope"]
    with pytest.raises(ConfigError) as raised:
        parse_config({"scorers": [{"type": "no_tool_errors"}], "conventions": [description]})
    (error,) = raised.value.errors
    assert error.path == path
    assert message in error.message


def test_shipped_descriptions_are_read_before_genai_and_after_the_user_s() -> None:
    names = [convention.name for convention in conventions.CONVENTIONS]
    assert {"langfuse", "mlflow"} <= set(names)
    # Each twice: under their tracer's scope, and under any other by the keys they write;
    # Haystack's tags before MLflow's, which MLflow writes on Haystack's spans too.
    assert [d.name for d in SHIPPED_DESCRIPTIONS] == [
        "langfuse",
        "langfuse",
        "haystack",
        "haystack",
        "mlflow",
        "mlflow",
        "langsmith",
        "langsmith",
        "any_agent",
        "spring_ai",
        "genkit",
        "genkit",
        "griptape",
        "voltagent",
        "voltagent",
        "monocle",
        "monocle",
        "laminar",
        "laminar",
        "fiddler",
        "fiddler",
        "langwatch",
        "langwatch",
        "agentops",
        "agentops",
        "trulens",
        "trulens",
        "promptflow",
        "promptflow",
    ]
    for name in ("langfuse", "haystack", "mlflow", "langsmith"):
        assert len(names) - 1 - names[::-1].index(name) < names.index("genai")
    conventions.use_descriptions(parse_config(yaml.safe_load(CONFIG)).conventions)
    assert conventions.CONVENTIONS[0].name == "acme"
    assert conventions.user_descriptions()[0].name == "acme"
    assert SCOPE in conventions.RUN_START_SCOPES and "acme.is" in conventions.RUN_MARKER_KEYS
    conventions.use_descriptions(())
    assert SCOPE not in conventions.RUN_START_SCOPES and "acme.is" not in conventions.RUN_MARKER_KEYS


def docs_example(path: str, heading: str) -> dict[str, Any]:
    """The first YAML block after `heading` in the docs file."""
    text = (Path(__file__).parent.parent.parent / "docs" / path).read_text()
    section = text.split(heading, 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    document: dict[str, Any] = yaml.safe_load(block)
    return document


def test_the_worked_example_of_the_docs_rebuilds_the_run() -> None:
    example = docs_example("conventions.md", "## Describe an instrumentation")
    config = parse_config({"scorers": [{"type": "no_tool_errors"}], **example})
    conventions.use_descriptions(config.conventions)
    (run,) = build_runs([from_readable_span(span) for span in acme_trace()])
    assert view(run) == EXPECTED


def test_the_configuration_reference_example_validates() -> None:
    example = docs_example("configuration.md", "## The configuration file")
    assert parse_config(example).conventions[0].name == "acme"


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


def test_validate_names_the_bad_key_of_a_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        CONFIG.replace("when: {attributes: {acme.is: tool}}", "wen: {attributes: {acme.is: tool}}")
    )
    assert main(["validate", "-c", str(config_file)]) == 2
    error = capsys.readouterr().err
    assert "conventions[0].tool.wen: unknown key; did you mean 'when'?" in error
    assert "conventions[0].tool.when: Field required" in error


@pytest.mark.parametrize("corpus", ["langfuse", "mlflow"])
def test_shipped_descriptions_leave_nothing_missing_in_their_corpus(corpus: str) -> None:
    traces = Path(__file__).parent.parent / "fixtures" / "traces" / corpus
    problems: list[Any] = []
    runs = list(
        runs_from_files(
            sorted(p for p in traces.glob("*.json") if not p.name.endswith(".truth.json")), problems
        )
    )
    assert not problems
    expected = sum(len(json.loads(path.read_text())["runs"]) for path in traces.glob("*.truth.json"))
    assert len(runs) == expected
    assert all(run.convention == corpus and not run.missing and run.usage.input_tokens for run in runs)


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
