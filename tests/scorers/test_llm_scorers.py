"""The LLM scorer catalogue over real HTTP: litellm asks a scripted judge on 127.0.0.1, and each
score follows from the scripted verdicts by the rule in spec/llm-scorers.md. The expected values
are worked out by hand from the spec's formulas (the arithmetic is in the comments)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from otel_scorers import AgentRun, ContextItem, Score, bind, scorers
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.pipeline.scoring_pipeline import score_run
from otel_scorers.scorers.rounding import round2

from ..judge_server import JudgeServer, Reply, Status
from ..judge_server import make_judge as judge

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

CONTEXT = (
    ContextItem("You help with travel.", "system_instructions", "gen_ai.system_instructions"),
    ContextItem("Paris: sunny, 21°C", "tool_result", "get_weather"),
    ContextItem("The Louvre is closed on Tuesdays.", "document", "doc-7"),
    ContextItem("Metro tickets cost 2.15 EUR.", "document", "doc-9"),
)
RUN = AgentRun(
    trace_id=0xABC,
    span_id=0x1,
    agent_name="travel",
    input="What's the weather in Paris, and can I visit the Louvre on Tuesday?",
    output="It is sunny and 21°C in Paris. The Louvre is closed on Tuesdays.",
    context=CONTEXT,
    attributes={"expected": "Sunny, 21°C; the Louvre is closed on Tuesdays."},
    conversation_id="c1",
    start_ns=10,
)


def score(scorer: Any, run: AgentRun = RUN) -> Score:
    result = evaluate(bind(scorer), run)
    return result if isinstance(result, Score) else asyncio.run(result)  # type: ignore[arg-type]


def units(*verdicts: str) -> str:
    return json.dumps(
        {
            "units": [{"text": f"unit {n}", "verdict": v, "reason": "r"} for n, v in enumerate(verdicts)],
            "reason": "why",
        }
    )


def test_round2_is_mastras_rounding() -> None:
    # spec/answer-relevancy.md's examples: Python's round gives 0.22 and 0.57
    assert (round2(0.225), round2(0.575), round2(2 / 3), round2(0.41875)) == (0.23, 0.58, 0.67, 0.42)


# ---- the claim-counting scorers ---------------------------------------------------------------


def test_faithfulness_is_the_share_of_supported_claims_in_one_call(server: JudgeServer) -> None:
    server.then(Reply(units("yes", "no", "unsure", " YES ")))
    result = score(scorers.faithfulness(judge=judge(server)))
    assert result.value == 0.5 and result.reason == "why"  # 2 yes of 4 verdicts
    assert server.calls == 1 and result.details["judge_calls"] == 1
    prompt = server.requests[0].text
    assert "Paris: sunny, 21°C" in prompt and "doc-7" in prompt
    assert "You help with travel." not in prompt  # system instructions are not evidence


def test_faithfulness_without_context_is_skipped_and_an_empty_answer_scores_0_without_a_call(
    server: JudgeServer,
) -> None:
    faithfulness = scorers.faithfulness(judge=judge(server))
    no_context = score(faithfulness, replace(RUN, context=CONTEXT[:1]))
    assert no_context.skipped is not None and "no context" in no_context.skipped
    empty = score(faithfulness, replace(RUN, output=""))
    assert empty.value == 0.0
    assert score(faithfulness, replace(RUN, output=None, missing=frozenset({"output"}))).skipped
    assert server.calls == 0


def test_faithfulness_with_no_claims_scores_0(server: JudgeServer) -> None:
    server.then(Reply(units()))
    assert score(scorers.faithfulness(judge=judge(server))).value == 0.0


def test_faithfulness_in_mastras_three_steps_counts_a_missing_verdict_as_no(server: JudgeServer) -> None:
    server.then(
        Reply('{"units": ["a", "b", "c"]}'),
        Reply('{"verdicts": [{"verdict": "yes"}, {"verdict": "yes"}]}'),
        Reply('{"reason": "two of three claims are supported"}'),
    )
    result = score(scorers.faithfulness(steps=3, judge=judge(server)))
    assert result.value == 0.67  # 2 yes of 3 claims (the third had no verdict)
    assert result.details["missing_verdicts"] == 1 and server.calls == 3
    assert result.reason == "two of three claims are supported"


def test_hallucination_counts_hallucinated_claims_and_a_threshold_passes_low_values(
    server: JudgeServer,
) -> None:
    server.then(Reply(units("yes", "no", "no")))
    result = score(scorers.hallucination(threshold=0.5, judge=judge(server)))
    assert result.value == 0.33 and result.label == "pass"  # 1 of 3, at most 0.5 passes


def test_bias_is_the_share_of_biased_opinions_and_0_with_none(server: JudgeServer) -> None:
    server.then(Reply(units("yes", "no")), Reply(units()))
    bias = scorers.bias(judge=judge(server, cache_size=0))
    assert score(bias).value == 0.5
    assert score(bias).value == 0.0


def test_toxicity_without_verdicts_for_an_answer_is_an_invalid_reply_not_a_score_of_1(
    server: JudgeServer,
) -> None:
    server.then(Reply(units("yes", "no", "no", "no")), Reply(units()), Reply(units()))
    toxicity = scorers.toxicity(judge=judge(server, cache_size=0))
    assert score(toxicity).value == 0.25
    failed = score(toxicity)
    assert failed.error is not None and failed.error.type == "judge_invalid_response"
    assert score(toxicity, replace(RUN, output="")).value == 0.0  # no call for an empty answer


def test_context_recall_is_the_share_of_reference_claims_the_context_supports(server: JudgeServer) -> None:
    server.then(Reply(units("yes", "yes", "no")))
    result = score(scorers.context_recall(reference_from="attributes.expected", judge=judge(server)))
    assert result.value == 0.67
    assert "the Louvre is closed on Tuesdays." in server.requests[0].text
    missing = score(scorers.context_recall(reference_from="attributes.nothing", judge=judge(server)))
    assert missing.skipped is not None and "attributes.nothing" in missing.skipped


# ---- the others -------------------------------------------------------------------------------


def test_answer_similarity_weights_matches_and_penalises_extras(server: JudgeServer) -> None:
    reply = {
        "matches": [
            {"unit": u, "match": m}
            for u, m in zip("abcd", ["exact", "semantic", "partial", "missing"], strict=True)
        ],
        "contradictions": [],
        "extra": ["one more thing"],
    }
    server.then(Reply(json.dumps(reply)))
    result = score(
        scorers.answer_similarity(reference="Sunny and 21°C; Louvre closed Tuesdays.", judge=judge(server))
    )
    # (1.2 + 0.8 + 0.4 - 0.15) / (4 * 1.2) = 0.46875, minus 0.05 for one extra unit = 0.41875
    assert result.value == 0.42


def test_answer_similarity_with_a_contradiction_floors_at_0_and_without_reference_is_skipped(
    server: JudgeServer,
) -> None:
    server.then(Reply('{"matches": [{"unit": "a", "match": "exact"}], "contradictions": ["it rains"]}'))
    assert score(scorers.answer_similarity(reference="x", judge=judge(server))).value == 0.0  # 1 - 1
    skipped = score(scorers.answer_similarity(judge=judge(server)))
    assert skipped.skipped is not None and server.calls == 1


def test_context_precision_is_mean_average_precision_over_the_items_in_order(server: JudgeServer) -> None:
    verdicts = [{"context": 1, "verdict": "no"}, {"context": 2, "verdict": "yes"}]  # item 3: no verdict
    server.then(
        Reply(json.dumps({"verdicts": verdicts})), Reply('{"verdicts": [{"context": 1, "verdict": "no"}]}')
    )
    precision = scorers.context_precision(judge=judge(server, cache_size=0))
    result = score(precision)
    assert result.value == 0.5 and result.details["missing_verdicts"] == 1  # relevant at 2: 1/2
    assert score(precision).value == 0.0  # none relevant
    all_items = [
        {"context": 1, "verdict": "no"},
        {"context": 2, "verdict": "yes"},
        {"context": 3, "verdict": "yes"},
    ]
    server.then(Reply(json.dumps({"verdicts": all_items})))
    assert score(precision).value == 0.58  # (1/2 + 2/3) / 2


def test_context_relevance_averages_levels_minus_unused_and_missing_penalties(server: JudgeServer) -> None:
    items = [
        {"context": 1, "relevance": "high", "used": True},
        {"context": 2, "relevance": "medium", "used": False},
        {"context": 3, "relevance": "low", "used": False},
    ]
    server.then(
        Reply(json.dumps({"items": items, "missing": ["opening hours"]})),
        Reply(json.dumps({"items": [{**items[0], "used": False}, items[1], items[2]]})),
    )
    relevance = scorers.context_relevance(judge=judge(server, cache_size=0))
    assert score(relevance).value == 0.52  # (1 + 0.7 + 0.3) / 3 - 0.15 = 0.5167
    assert score(relevance).value == 0.57  # 0.6667 - 0.1 for the unused high item


def test_noise_sensitivity_takes_the_lower_score_when_the_judges_disagree(server: JudgeServer) -> None:
    close = {
        "robustness": 0.9,
        "dimensions": [{"dimension": "a", "impact": "none"}, {"dimension": "b", "impact": "moderate"}],
        "major_issues": ["x"],
    }
    far = {
        "robustness": 0.95,
        "dimensions": [{"dimension": "a", "impact": "significant"}, {"dimension": "b", "impact": "moderate"}],
    }
    server.then(Reply(json.dumps(close)), Reply(json.dumps(far)))
    noise = scorers.noise_sensitivity(baseline="Sunny, 21°C.", judge=judge(server, cache_size=0))
    assert score(noise).value == 0.8  # |0.9 - 0.8| <= 0.2: 0.9, minus 0.1 for one major issue
    assert score(noise).value == 0.45  # |0.95 - 0.45| > 0.2: the mean of 0.3 and 0.6
    assert score(scorers.noise_sensitivity(judge=judge(server))).skipped is not None


def test_summarization_is_the_lower_of_alignment_and_coverage(server: JudgeServer) -> None:
    reply = {
        "claims": [{"claim": c, "supported": s} for c, s in [("a", True), ("b", True), ("c", False)]],
        "questions": [
            {"question": q, "answered": a} for q, a in [("1", True), ("2", False), ("3", True), ("4", True)]
        ],
    }
    server.then(
        Reply(json.dumps(reply)), Reply('{"claims": [{"claim": "a", "supported": true}], "questions": []}')
    )
    summary = scorers.summarization(source="A long text.", judge=judge(server, cache_size=0))
    assert score(summary).value == 0.67  # min(2/3, 3/4)
    assert score(summary).value == 0.0  # no questions


def test_summarization_in_three_steps_answers_coverage_from_the_summary_alone(server: JudgeServer) -> None:
    server.then(
        Reply('{"claims": [{"claim": "a", "supported": true}], "questions": ["q1", "q2"]}'),
        Reply('{"answers": [{"answered": true}]}'),
        Reply('{"reason": "half the questions"}'),
    )
    result = score(scorers.summarization(source="THE-SOURCE-TEXT", steps=3, judge=judge(server)))
    assert result.value == 0.5  # min(1/1, 1/2): q2 had no answer
    assert "THE-SOURCE-TEXT" not in server.requests[1].text and server.calls == 3


def test_prompt_alignment_weights_its_four_sub_scores(server: JudgeServer) -> None:
    server.then(Reply('{"intent": 1, "requirements": 0.5, "completeness": 0.5, "appropriateness": 1}'))
    assert score(scorers.prompt_alignment(judge=judge(server))).value == 0.75  # .4 + .15 + .1 + .1


def test_tool_call_accuracy_is_the_share_of_appropriate_calls(server: JudgeServer) -> None:
    calls = [
        {"tool": "a", "appropriate": True},
        {"tool": "b", "appropriate": False},
        {"tool": "c", "appropriate": True},
    ]
    server.then(
        Reply(json.dumps({"calls": calls})),
        Reply('{"calls": [], "missing_tools": ["get_weather"]}'),
        Reply('{"calls": []}'),
    )
    accuracy = scorers.tool_call_accuracy_llm(
        available_tools={"get_weather": "weather"}, judge=judge(server, cache_size=0)
    )
    assert [score(accuracy).value for _ in range(3)] == [0.67, 0.0, 1.0]
    assert "get_weather: weather" in server.requests[0].text


def test_a_flawless_trajectory_scores_1_where_mastra_gives_0_9(server: JudgeServer) -> None:
    flawless = {"steps": [{"step": "a", "necessary": True, "in_order": True}]}
    mixed = {
        "steps": [
            {"step": "a", "necessary": True, "in_order": True},
            {"step": "b", "necessary": False, "in_order": True},
        ],
        "missing_steps": ["c"],
    }
    server.then(
        Reply(json.dumps(flawless)), Reply(json.dumps(mixed)), Reply('{"steps": [], "extra_steps": ["x"]}')
    )
    trajectory = scorers.trajectory_accuracy_llm(judge=judge(server, cache_size=0))
    first = score(trajectory)
    assert first.value == 1.0 and first.details["mastra_value"] == pytest.approx(0.9)
    # (0.6 * 1/2 + 0.3 * 1) / 0.9 = 0.6667, minus 0.1 * 1/3 for one missing step
    assert score(trajectory).value == 0.63
    assert score(trajectory).value == 0.5  # no steps judged, only extra ones


def test_rubric_requires_the_configured_required_criteria_whatever_the_judge_says(
    server: JudgeServer,
) -> None:
    criteria = ["Gives the temperature", {"criterion": "Mentions a museum", "required": False}]
    server.then(
        Reply('{"criteria": [{"criterion": 1, "satisfied": true}, {"criterion": 2, "satisfied": false}]}'),
        Reply('{"criteria": [{"criterion": 2, "satisfied": true}]}'),  # the required one left out
    )
    rubric = scorers.rubric(criteria, judge=judge(server, cache_size=0))
    assert score(rubric).value == 1.0
    assert score(rubric).value == 0.0
    assert score(scorers.rubric([], judge=judge(server))).value == 1.0 and server.calls == 2


# ---- batching ---------------------------------------------------------------------------------


def test_batched_scorers_share_one_call_and_a_bad_member_falls_back_to_its_own(server: JudgeServer) -> None:
    shared = judge(server, batch=True)
    bindings = [
        bind(scorers.faithfulness(judge=shared)),
        bind(scorers.toxicity(judge=shared)),
        bind(scorers.bias(judge=shared)),
    ]
    batch_reply = {
        "faithfulness": json.loads(units("yes", "no")),
        "toxicity": {"verdicts": "not the shape asked for"},
        "bias": json.loads(units("no", "no", "no", "yes")),
    }
    server.then(Reply(json.dumps(batch_reply)), Reply(units("no", "no", "no", "yes")))
    results = {s.scorer: s for s in asyncio.run(score_run(bindings, RUN))}
    assert server.calls == 2  # one for the batch, one for toxicity alone
    assert results["faithfulness"].value == 0.5 and results["bias"].value == 0.25
    assert results["toxicity"].value == 0.25 and results["toxicity"].details["batch_fallback"]
    assert sorted(results["faithfulness"].details["batched_with"]) == ["bias", "toxicity"]
    batch_prompt = server.requests[0].text
    assert batch_prompt.count("Paris: sunny, 21°C") == 1  # shared data goes once
    usage = [results[n].usage for n in ("faithfulness", "bias")]
    assert sum(u.calls for u in usage if u) == 1


def test_a_failed_batch_falls_back_to_one_call_per_scorer(server: JudgeServer) -> None:
    shared = judge(server, batch=True, max_retries=0)
    bindings = [bind(scorers.faithfulness(judge=shared)), bind(scorers.bias(judge=shared))]
    server.then(Status(400), Reply(units("yes")), Reply(units("yes")))
    results = asyncio.run(score_run(bindings, RUN))
    assert server.calls == 3 and [s.value for s in results] == [1.0, 1.0]


def test_every_scorer_is_a_config_type() -> None:
    from otel_scorers.scorers.declarations import RUN_FACTORIES

    assert {
        "faithfulness",
        "hallucination",
        "answer_similarity",
        "bias",
        "toxicity",
        "prompt_alignment",
        "context_precision",
        "context_recall",
        "context_relevance",
        "noise_sensitivity",
        "summarization",
        "tool_call_accuracy_llm",
        "trajectory_accuracy_llm",
        "rubric",
    } <= set(RUN_FACTORIES)
