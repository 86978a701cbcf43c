"""Tool arguments and results nested hundreds of levels deep, ended through the real SDK with the
processor attached: a judge scorer's prompt (litellm calling the scripted judge on loopback), a
user's scorer that writes the arguments out with `json.dumps`, and the kept trace of the run all
get them within the depth bound, and the shallow run ended beside them keeps its values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import AgentRun, ScoringSpanProcessor, scorer, scorers
from otel_scorers.keep.keeper import KeepConfig
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import Telemetry
from ..judge_server import JudgeServer, Reply
from ..judge_server import make_judge as judge

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

#: Deeper than orjson writes (255) and than `json.dumps` reaches within Python's 1,000 frames,
#: within what orjson decodes (1,024): the tool values a run's readers get whole.
DEPTHS = (300, 1_000)
#: What a value nested deeper than 64 levels is given as (docs/limits.md).
DEEPER = "(nested deeper than 64 levels)"


def end_run(provider: TracerProvider, agent: str, arguments: str) -> None:
    tracer = provider.get_tracer("deep-agent")
    run = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
        ),
    }
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "call-1",
        "gen_ai.tool.call.arguments": arguments,
        "gen_ai.tool.call.result": arguments,
    }
    with (
        tracer.start_as_current_span(f"invoke_agent {agent}", attributes=run),
        tracer.start_as_current_span("execute_tool lookup", attributes=tool),
    ):
        pass


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_tool_values_reach_a_judge_a_users_scorer_and_the_kept_trace_within_the_bound(
    server: JudgeServer, telemetry: Telemetry, tmp_path: Path, depth: int
) -> None:
    written: dict[str, str] = {}

    @scorer(name="dumps_arguments", binary=True)
    def dumps_arguments(run: AgentRun) -> bool:
        written[str(run.agent_name)] = json.dumps([call.arguments for call in run.tool_calls])
        return False  # every run fails, so every run is kept

    accuracy = scorers.tool_call_accuracy_llm(judge=judge(server, cache_size=0))
    server.then(*[Reply('{"calls": [{"tool": "lookup", "appropriate": true}]}')] * 2)
    processor = ScoringSpanProcessor(
        [dumps_arguments, accuracy],
        keep=KeepConfig(path=tmp_path / "kept.jsonl", failing=["dumps_arguments"]),
        **telemetry.providers(),
    )
    provider = telemetry.tracer_provider
    provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    end_run(provider, "deep", "[" * depth + "]" * depth)
    end_run(provider, "shallow", '{"city": [["Paris"]]}')
    assert processor.force_flush(30_000)

    assert written == {"deep": json.dumps([DEEPER]), "shallow": '[{"city": [["Paris"]]}]'}
    judged = {
        span.attributes["gen_ai.agent.name"]: span.attributes
        for span in telemetry.finished_spans()
        if span.instrumentation_scope.name == OWN_SCOPE and span.name == "evaluate tool_call_accuracy_llm"
    }
    assert {
        agent: attributes.get("gen_ai.evaluation.score.value") for agent, attributes in judged.items()
    } == {
        "deep": 1.0,
        "shallow": 1.0,
    }
    prompts = [request.text for request in server.requests]
    assert sum(DEEPER in prompt for prompt in prompts) == 1
    assert sum("Paris" in prompt for prompt in prompts) == 1
    kept = (tmp_path / "kept.jsonl").read_text()
    assert kept.count("\n") == 2, "a run whose tool values nest deep was not kept"
    assert DEEPER in kept and "Paris" in kept
