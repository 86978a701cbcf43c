"""Over real OTLP on loopback: a framework's own tracing that no reader knows, its vocabulary
inferred from the trace (`conventions/inferred.py`), is scored by the sidecar as `runs` reads it
from the file. The shipped descriptions are withheld, so each corpus stands for a framework the
project never saw; a trace neither a reader nor the inference reads is counted as no run."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import pytest

from otel_scorers import AgentRun, Score, conventions
from otel_scorers.emission.standard import OutputContext
from otel_scorers.otlp.decode import parse_json_request
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.chain_stream import plain_trace
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, metrics_text, sample, send_grpc, sidecar_document
from tests.waiting import wait_until

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
#: Corpora the inference alone reads with the descriptions withheld (`bench/fidelity.py
#: --without-descriptions all`): a kind key naming agents, tools and generations (Langfuse), flows
#: with keys under a shorter prefix (Genkit), JSON-quoted kinds (MLflow), runs believed by the
#: model calls under them (Spring AI), tools and model calls but no run (MLflow's LangChain).
CORPORA = ("langfuse", "genkit", "mlflow", "spring-ai", "mlflow-langchain", "mlflow-openai-agents")
#: What this module's output was given, in the order the sidecar emitted it.
EMITTED: list[AgentRun] = []


class CollectedRuns:
    """An output that keeps the runs it is given (the sidecar runs its engine in this process)."""

    def emit(self, run: AgentRun, scores: Sequence[Score], conversation: str | None = None) -> None:
        EMITTED.append(run)

    def emit_conversation(self, conversation: object, scores: Sequence[Score]) -> None:
        pass

    def flush(self) -> None:
        pass

    def behind(self) -> bool:
        return False


def collected_runs(context: OutputContext) -> CollectedRuns:
    return CollectedRuns()


@pytest.fixture(autouse=True)
def no_shipped_descriptions() -> Iterator[None]:
    conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    EMITTED.clear()
    yield
    conventions.use_descriptions(())
    EMITTED.clear()


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


def scenarios(corpus: str) -> list[Path]:
    return sorted(path for path in (TRACES / corpus).glob("*.json") if not path.name.endswith(".truth.json"))


def read_from_files(paths: Sequence[Path]) -> list[AgentRun]:
    problems: list[InputProblem] = []
    runs = list(runs_from_files(paths, problems))
    assert not problems, problems
    return runs


def by_run(runs: Sequence[AgentRun]) -> list[AgentRun]:
    return sorted(runs, key=lambda run: (run.trace_id, run.span_id))


def differences(live: Sequence[AgentRun], read: Sequence[AgentRun]) -> list[str]:
    """Where the runs scored live differ from those read from the file, field by field."""
    if len(live) != len(read):
        return [f"{len(live)} runs scored live, {len(read)} read from the file"]
    return [
        f"{run.trace_id:032x}/{run.span_id:016x} {field.name}: {getattr(run, field.name)!r} != {getattr(other, field.name)!r}"
        for run, other in zip(live, read, strict=True)
        for field in fields(run)
        if getattr(run, field.name) != getattr(other, field.name)
    ]


@contextmanager
def sidecar_without_descriptions(endpoint: str, **settings: float) -> Iterator[RunningSidecar]:
    """A sidecar scoring in this process, its runs given to `CollectedRuns`; the shipped
    descriptions are withheld again once it started (it sets its configuration's, before any span
    is received)."""
    document = sidecar_document(endpoint, None, scoring_process=False, **settings)
    document["outputs"] = [f"{__name__}:collected_runs"]
    with RunningSidecar(document) as sidecar:
        conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
        yield sidecar


@pytest.mark.parametrize("corpus", CORPORA)
def test_runs_of_an_inferred_vocabulary_are_scored_live_as_runs_reads_them_from_the_file(
    capture: OtlpCapture, corpus: str
) -> None:
    paths = scenarios(corpus)
    expected = by_run(read_from_files(paths))
    assert expected and all(run.convention.startswith("inferred:") for run in expected)
    with sidecar_without_descriptions(capture.endpoint, decision_wait_s=0.1, max_wait_s=1.0) as sidecar:
        for path in paths:
            send_grpc(sidecar.grpc_endpoint, parse_json_request(path.read_bytes()).SerializeToString())
        wait_until(lambda: len(EMITTED) >= len(expected), 60, f"the {len(expected)} runs of {corpus} scored")
        time.sleep(1.5)  # past max_wait_s: nothing more comes
    found = differences(by_run(EMITTED), expected)
    assert not found, "\n".join(found)


def test_a_kind_key_naming_a_run_makes_its_trace_ready_once_quiet_not_at_max_wait(
    capture: OtlpCapture,
) -> None:
    path = TRACES / "langfuse" / "tool_then_answer.json"
    expected = by_run(read_from_files([path]))
    with sidecar_without_descriptions(capture.endpoint, decision_wait_s=0.1, max_wait_s=120.0) as sidecar:
        sent = time.monotonic()
        send_grpc(sidecar.grpc_endpoint, parse_json_request(path.read_bytes()).SerializeToString())
        wait_until(lambda: len(EMITTED) >= len(expected), 60, "the run scored")
        assert time.monotonic() - sent < 60
    found = differences(by_run(EMITTED), expected)
    assert not found, "\n".join(found)


def test_a_trace_neither_a_reader_nor_the_inference_reads_is_counted_as_no_run(capture: OtlpCapture) -> None:
    # AG2's chat under MLflow names its agents' turns (`AGENT`) side by side, coming back to an
    # agent after another's: the kind key is screened in, the trace built, no run read (which turn
    # is the run the kinds do not say). Beside it, plain HTTP work.
    chat = TRACES / "mlflow-ag2" / "tool_then_answer.json"
    assert read_from_files([chat]) == []
    request = parse_json_request(chat.read_bytes())
    scopes = {scope.scope.name for resource in request.resource_spans for scope in resource.scope_spans}
    with sidecar_without_descriptions(capture.endpoint, decision_wait_s=0.1, max_wait_s=0.5) as sidecar:
        send_grpc(sidecar.grpc_endpoint, request.SerializeToString())
        send_grpc(sidecar.grpc_endpoint, plain_trace(0).SerializeToString())

        def no_run(scope: str) -> float:
            return sample(
                metrics_text(sidecar.http_url), "otel_scorers_traces_no_run_total", otel_scorers_scope=scope
            )

        wait_until(lambda: no_run("opentelemetry.instrumentation.fastapi") == 1, 60, "the HTTP trace counted")
        wait_until(lambda: sum(no_run(scope) for scope in scopes) >= 1, 60, "the AG2 trace counted")
    assert EMITTED == []
