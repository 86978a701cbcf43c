"""Risk weights cannot be bought: one signal, or one tenant, takes at most its share of the
budget, and the estimates stay unbiased. Simulated streams on a clock the test drives."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from otel_scorers import (
    AgentRun,
    ConfigError,
    JudgeUsage,
    PacingPolicy,
    RiskWeights,
    Score,
    ScoringSpanProcessor,
    ToolCall,
    bind,
)
from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.selection.paced_sampling import PacedSampler
from otel_scorers.selection.risk_caps import ShareCaps

from ..conftest import Telemetry

RATE = 10  # runs a second
CALLS_PER_HOUR = 720  # 2% of the runs


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _run(trace_id: int, tenant: str, risky: bool) -> tuple[AgentRun, list[Score]]:
    attributes: dict[str, Any] = {"tenant.id": tenant}
    tools = (ToolCall("get_weather"),)
    checks = [Score("no_tool_errors", 1.0, "pass")]
    status = "ok"
    if risky:  # everything a sender can mark: bad feedback, an error status, a failing tool
        attributes["user.feedback"] = "bad"
        tools = (ToolCall("get_weather", state="error"),)
        checks = [Score("no_tool_errors", 0.0, "fail")]
        status = "error"
    run = AgentRun(
        trace_id,
        1,
        "weather-agent",
        "What's the weather?",
        "Sunny.",
        tool_calls=tools,
        models=("gpt-4o-mini",),
        start_ns=0,
        end_ns=1_500_000_000,
        status=status,  # type: ignore[arg-type]
        attributes=attributes,
    )
    return run, checks


def _stream(caps: ShareCaps, share: float, minutes: int = 40) -> tuple[PacedSampler, dict[str, Any]]:
    """`share` of the runs from tenant "loud", each marked risky; the rest from nine quiet tenants."""
    clock = Clock()
    sampler = PacedSampler(PacingPolicy(CALLS_PER_HOUR, "calls", RiskWeights(), clock=clock, caps=caps))
    generator = random.Random(17)
    seen: Counter[bool] = Counter()
    judged: Counter[bool] = Counter()
    estimate: Counter[bool] = Counter()
    judged_late: Counter[bool] = Counter()
    for n in range(minutes * 60 * RATE):
        clock.now += 1 / RATE
        loud = generator.random() < share
        run, checks = _run(generator.getrandbits(128), "loud" if loud else f"quiet-{n % 9}", loud)
        decision = sampler.decide(run, checks)
        seen[loud] += 1
        if decision.included:
            judged[loud] += 1
            estimate[loud] += 1 / decision.probability
            if n >= 10 * 60 * RATE:  # after the first ten minutes
                judged_late[loud] += 1
            sampler.settle(decision, Score("relevancy", 1.0, usage=JudgeUsage("gpt-4o-mini", calls=1)))
    return sampler, {"seen": seen, "judged": judged, "estimate": estimate, "late": judged_late}


def test_uncapped_a_tenant_marking_a_tenth_of_the_runs_risky_takes_most_of_the_judge() -> None:
    _, got = _stream(ShareCaps(max_signal_share=1.0), share=0.1)
    late = got["late"]
    assert late[True] / (late[True] + late[False]) > 0.7  # what the cap is for


def test_one_tenant_takes_at_most_its_share_of_the_judge_and_the_others_keep_theirs() -> None:
    sampler, got = _stream(ShareCaps(share_key="attributes.tenant.id", max_key_share=0.25), share=0.1)
    late, seen, estimate = got["late"], got["seen"], got["estimate"]
    loud_share = late[True] / (late[True] + late[False])
    assert 0.15 <= loud_share <= 0.3, loud_share  # 0.25, within the scatter of ~240 judged runs
    quiet_rate = late[False] / (seen[False] * 0.75)
    assert quiet_rate > 0.013, quiet_rate  # near the 1.5% they get at 0.25 (0.3% uncapped)
    assert sampler.caps.capped["key"] > 0
    for loud in (True, False):  # each judged run weighted by 1/p still counts the traffic
        assert estimate[loud] == pytest.approx(seen[loud], rel=0.2)


def test_the_runs_showing_one_signal_take_at_most_half_the_judge_by_default() -> None:
    sampler, got = _stream(ShareCaps(), share=0.3)
    late = got["late"]
    risky_share = late[True] / (late[True] + late[False])
    # Uncapped the risky 30% would take 0.95 of the judge: at most half, still above 0.3.
    assert 0.4 <= risky_share <= 0.58, risky_share
    assert sampler.caps.capped["signal"] > 0


@pytest.mark.parametrize(
    ("sampling", "path"),
    [
        ({"calls_per_hour": 60, "share_key": "tenant"}, "scorers[0].sampling.share_key"),
        ({"calls_per_hour": 60, "max_key_share": 1.5}, "scorers[0].sampling.max_key_share"),
        ({"calls_per_hour": 60, "max_signal_share": 0}, "scorers[0].sampling.max_signal_share"),
        ({"rate": 0.5, "share_key": "agent.name"}, "scorers[0].sampling.share_key"),
    ],
)
def test_bad_cap_settings_are_refused_naming_the_key(sampling: dict[str, Any], path: str) -> None:
    document = {
        "scorers": [{"type": "answer_relevancy", "sampling": sampling}],
        "judge": {"model": "openai/gpt-4o-mini", "api_key": "test-key"},
    }
    with pytest.raises(ConfigError) as caught:
        parse_config(document)
    assert path in [error.path for error in caught.value.errors], caught.value


def test_the_config_file_sets_the_caps() -> None:
    document = {
        "scorers": [
            {
                "type": "answer_relevancy",
                "sampling": {"calls_per_hour": 60, "share_key": "attributes.tenant.id", "max_key_share": 0.1},
            }
        ],
        "judge": {"model": "openai/gpt-4o-mini", "api_key": "test-key"},
    }
    (binding,) = parse_config(document).scoring().bindings
    assert binding.paced is not None
    assert binding.paced.policy.caps == ShareCaps(share_key="attributes.tenant.id", max_key_share=0.1)


def test_runs_whose_weight_was_cut_are_counted_on_a_metric(telemetry: Telemetry) -> None:
    async def judged(run: AgentRun) -> Score:
        return Score("judged", 1.0, usage=JudgeUsage("gpt-4o-mini", calls=1))

    processor = ScoringSpanProcessor(
        [bind(judged, uses_judge=True, sampling={"calls_per_hour": 36, "share_key": "agent.name"})],
        **telemetry.providers(),
    )
    telemetry.tracer_provider.add_span_processor(processor)
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
    for n in range(60):  # one agent, every run with a failed tool: its weight is cut
        agent.run(ScriptedRun(f"question {n}", [("get_weather", {"city": "Atlantis"})], "sorry"))
    assert processor.force_flush(20_000)
    # Its runs are all the traffic: the signal's share and the key value's are both over.
    assert telemetry.counter("otel_scorers.sampling.capped", gen_ai__evaluation__name="judged") > 0
    processor.shutdown()
