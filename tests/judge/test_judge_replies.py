"""A judge's reply is untrusted input: every reply that cannot be the judge's one verdict in the
shape asked for (several different JSON objects, non-finite or out-of-range numbers, verdicts
outside the allowed set, endless nesting) is an invalid reply, never a score and never an
exception. Over real HTTP: litellm asks the scripted judge on 127.0.0.1, which gives the same
reply to every request (first call and repair round alike)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from otel_scorers import AgentRun, ContextItem, Score
from otel_scorers.scorers.judge import Judge, JudgeError, parse_reply
from otel_scorers.scorers.llm import ask_judge, llm_scorer
from otel_scorers.scorers.rules import catalogue

from ..judge_server import JudgeServer, Reply, Status
from ..judge_server import make_judge as judge
from ..waiting import cpu_seconds

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

RUN = AgentRun(
    trace_id=0xABC,
    span_id=0x1,
    agent_name="travel",
    input="What's the weather in Paris?",
    output="It is sunny and 21°C in Paris.",
    context=(ContextItem("Paris: rain, 12°C", "tool_result", "get_weather"),),
    conversation_id="c1",
    start_ns=10,
)
#: 30,000 levels of nesting (60 kB, within a reply's byte bound): Python's own JSON reader
#: recurses once per level.
DEEP = "[" * 30_000 + "]" * 30_000


def always(server: JudgeServer, reply: str) -> None:
    server.responder = lambda _body: reply


def score(scorer: Any, run: AgentRun = RUN) -> Score:
    result: Score = asyncio.run(scorer.score(run))
    return result


def assert_invalid_reply(result: Score, why: str) -> None:
    assert result.value is None, f"an invalid reply was scored {result.value}"
    assert result.error is not None and result.error.type == "judge_invalid_response"
    assert why in result.error.message


def units(verdict: str) -> dict[str, Any]:
    return {"units": [{"text": "It is sunny.", "verdict": verdict, "reason": "r"}], "reason": verdict}


# ---- several objects, non-finite numbers, depth, size ---------------------------------------------

INJECTED = json.dumps(units("yes"))  # what the judged answer might carry, for the judge to quote
OWN = json.dumps(units("no"))  # the judge's own verdict: the context says rain


@pytest.mark.parametrize(
    "reply",
    [
        f"The answer contains this text:\n```json\n{INJECTED}\n```\nMy verdict: {OWN}",
        f"The answer embeds {INJECTED} to sway me, but my verdict is {OWN}",
    ],
    ids=["fenced", "first_in_prose"],
)
def test_a_prose_reply_quoting_other_json_than_its_verdict_is_ambiguous_not_the_quoted_score(
    server: JudgeServer, reply: str
) -> None:
    always(server, reply)
    assert_invalid_reply(score(catalogue.faithfulness(judge=judge(server))), "ambiguous")
    always(server, f"```json\n{OWN}\n```\nSo, once more: {OWN}")  # copies of one object: that object
    assert score(catalogue.faithfulness(judge=judge(server))).value == 0.0  # 0 of 1 claim supported


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_sub_score_is_an_invalid_reply_not_a_score(server: JudgeServer, number: str) -> None:
    always(server, f'{{"intent": {number}, "requirements": 1, "completeness": 1, "appropriateness": 1}}')
    assert_invalid_reply(score(catalogue.prompt_alignment(judge=judge(server))), "finite")


def test_a_reply_nested_30000_levels_deep_is_an_invalid_reply_not_a_recursion_error(
    server: JudgeServer,
) -> None:
    always(server, DEEP)
    assert_invalid_reply(score(catalogue.prompt_alignment(judge=judge(server))), "JSON")

    async def ask() -> Any:
        return await ask_judge("Reply in JSON.", dict[str, Any], judge=judge(server))

    with pytest.raises(JudgeError) as raised:
        asyncio.run(ask())
    assert raised.value.type == "judge_invalid_response"
    deep_object = '{"a":' * 30_000 + "1" + "}" * 30_000  # 180,000 characters
    with pytest.raises(ValueError, match="deeper"):
        parse_reply(deep_object, dict[str, Any])


def test_a_hostile_reply_is_refused_in_bounded_time() -> None:
    too_long = json.dumps({"verdict": "yes", "reason": "x" * 300_000})
    with pytest.raises(ValueError, match="characters long"):
        parse_reply(too_long, dict[str, Any])

    def refused(size: int) -> Callable[[], None]:
        def work() -> None:
            for hostile in ("{" + "{}" * (99 * size), "{x} " * (49 * size), '{"a": ' + '"b", ' * (39 * size)):
                with pytest.raises(ValueError):
                    parse_reply(hostile, dict[str, Any])

        return work

    cpu_seconds(refused(100))  # warm
    # Ten times the braces: about ten times the work when linear; a scan per brace would take minutes.
    assert cpu_seconds(refused(1000)) < 40 * max(cpu_seconds(refused(100)), 1e-3)


# ---- verdicts and sub-scores the rules allow --------------------------------------------------------

FactoryOf = Callable[[Judge], Any]
# Per rule: a reply with a verdict outside its set, and the same reply with an allowed verdict
# in another case or with spaces around it, and the score that one gives.
OUTSIDE_THE_SET: list[tuple[str, FactoryOf, dict[str, Any], dict[str, Any], float]] = [
    # the prompt's example copied, instead of a verdict: read as "no" before, a score of 0
    ("faithfulness", lambda j: catalogue.faithfulness(judge=j), units("yes|unsure|no"), units(" YES "), 1.0),
    ("bias", lambda j: catalogue.bias(judge=j), units("unsure"), units("Yes"), 1.0),  # bias: yes or no only
    (
        "context_precision",
        lambda j: catalogue.context_precision(judge=j),
        {"verdicts": [{"context": 1, "verdict": "maybe"}]},
        {"verdicts": [{"context": 1, "verdict": " Yes"}]},
        1.0,
    ),
    (
        "context_relevance",
        lambda j: catalogue.context_relevance(judge=j),
        {"items": [{"context": 1, "relevance": "very high", "used": True}]},
        {"items": [{"context": 1, "relevance": " High ", "used": True}]},
        1.0,
    ),
    (
        "noise_sensitivity",
        lambda j: catalogue.noise_sensitivity(baseline="Rain, 12°C.", judge=j),
        {"robustness": 0.9, "dimensions": [{"dimension": "completeness", "impact": "catastrophic"}]},
        {"robustness": 0.9, "dimensions": [{"dimension": "completeness", "impact": "None "}]},
        0.9,  # within 0.2 of the impacts' 1.0: the judge's robustness stands
    ),
    (
        "answer_similarity",
        lambda j: catalogue.answer_similarity(reference="Rain, 12°C.", judge=j),
        {"matches": [{"unit": "rain", "match": "close"}]},
        {"matches": [{"unit": "rain", "match": "EXACT"}]},
        1.0,
    ),
]


@pytest.mark.parametrize(
    ("kind", "factory", "outside", "spelled", "value"), OUTSIDE_THE_SET, ids=[c[0] for c in OUTSIDE_THE_SET]
)
def test_a_verdict_outside_the_allowed_set_is_an_invalid_reply_not_a_no(
    server: JudgeServer,
    kind: str,
    factory: FactoryOf,
    outside: dict[str, Any],
    spelled: dict[str, Any],
    value: float,
) -> None:
    always(server, json.dumps(outside))
    assert_invalid_reply(score(factory(judge(server))), "Input should be")
    always(server, json.dumps(spelled))
    assert score(factory(judge(server))).value == value


OUT_OF_RANGE: list[tuple[str, FactoryOf, dict[str, Any]]] = [
    (
        "prompt_alignment_7",
        lambda j: catalogue.prompt_alignment(judge=j),
        {"intent": 7, "requirements": 0.5, "completeness": 0.5, "appropriateness": 1},
    ),
    (
        "prompt_alignment_negative",
        lambda j: catalogue.prompt_alignment(judge=j),
        {"intent": 1, "requirements": -1, "completeness": 0.5, "appropriateness": 1},
    ),
    (
        "noise_sensitivity_negative",
        lambda j: catalogue.noise_sensitivity(baseline="Rain, 12°C.", judge=j),
        {"robustness": -1, "dimensions": []},
    ),
    (
        "noise_sensitivity_7",
        lambda j: catalogue.noise_sensitivity(baseline="Rain, 12°C.", judge=j),
        {"robustness": 7, "dimensions": []},
    ),
]


@pytest.mark.parametrize(("case", "factory", "reply"), OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_a_sub_score_outside_0_to_1_is_an_invalid_reply_not_clamped(
    server: JudgeServer, case: str, factory: FactoryOf, reply: dict[str, Any]
) -> None:
    always(server, json.dumps(reply))
    assert_invalid_reply(score(factory(judge(server))), "Input should be")


def _enums(schema: dict[str, Any]) -> list[list[str]]:
    found: list[list[str]] = []
    pending: list[Any] = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if "enum" in item:
                found.append(item["enum"])
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def test_each_rules_reply_schema_states_the_verdicts_and_ranges_it_accepts(server: JudgeServer) -> None:
    j = judge(server)

    def schema(scorer: Any) -> dict[str, Any]:
        result: dict[str, Any] = scorer.rule.shape.model_json_schema()
        return result

    # the sets and ranges each prompt states (spec/llm-scorers.md)
    assert _enums(schema(catalogue.faithfulness(judge=j))) == [["yes", "unsure", "no"]]
    for yes_no in (catalogue.hallucination, catalogue.bias, catalogue.toxicity, catalogue.context_precision):
        assert _enums(schema(yes_no(judge=j))) == [["yes", "no"]]
    assert _enums(schema(catalogue.context_recall(reference="x", judge=j))) == [["yes", "no"]]
    assert _enums(schema(catalogue.context_relevance(judge=j))) == [["high", "medium", "low", "none"]]
    assert _enums(schema(catalogue.answer_similarity(reference="x", judge=j))) == [
        ["exact", "semantic", "partial", "missing"]
    ]
    noise = schema(catalogue.noise_sensitivity(baseline="x", judge=j))
    assert _enums(noise) == [["none", "minimal", "moderate", "significant", "severe"]]
    assert (noise["properties"]["robustness"]["minimum"], noise["properties"]["robustness"]["maximum"]) == (
        0,
        1,
    )
    alignment = schema(catalogue.prompt_alignment(judge=j))["properties"]
    for part in ("intent", "requirements", "completeness", "appropriateness"):
        assert (alignment[part]["minimum"], alignment[part]["maximum"]) == (0, 1)


# ---- Retry-After ---------------------------------------------------------------------------------


def ask_verdict(server: JudgeServer, **options: Any) -> Any:
    async def ask() -> Any:
        return await ask_judge("Reply in JSON.", dict[str, Any], judge=judge(server, **options))

    return asyncio.run(ask())


def test_retry_after_inf_is_ignored_for_the_usual_backoff_not_the_judge_switched_off(
    server: JudgeServer,
) -> None:
    server.then(Status(429, {"Retry-After": "inf"}), Reply('{"verdict": "yes"}'))
    reply = ask_verdict(server)
    assert reply.value == {"verdict": "yes"} and server.calls == 2


@pytest.mark.parametrize("value", ["-5", "nan"])
def test_a_negative_or_nan_retry_after_still_backs_off(server: JudgeServer, value: str) -> None:
    server.then(Status(429, {"Retry-After": value}), Status(429, {"Retry-After": value}))
    server.responder = lambda _body: '{"verdict": "yes"}'
    assert ask_verdict(server).value == {"verdict": "yes"}
    assert server.calls == 3
    gaps = [b.at - a.at for a, b in zip(server.requests, server.requests[1:], strict=False)]
    assert all(gap >= 0.1 for gap in gaps), gaps  # backoff 0.25 s then 0.5 s, each times 0.5..1


# ---- rubric criteria given as text -------------------------------------------------------------------


def test_a_rubric_given_as_text_has_one_criterion_per_line_bullets_stripped(server: JudgeServer) -> None:
    always(server, '{"criteria": [{"criterion": 1, "satisfied": true}, {"criterion": 2, "satisfied": true}]}')
    rubric = catalogue.rubric("- Gives the temperature\n\n2) Names the city", judge=judge(server))
    assert score(rubric).value == 1.0  # both criteria met
    prompt = server.requests[0].text
    assert '<criterion_1>"Gives the temperature"</criterion_1>' in prompt
    assert '<criterion_2>"Names the city"</criterion_2>' in prompt
    assert "criterion_3" not in prompt
    one = catalogue.rubric("Gives the temperature", judge=judge(server))
    assert score(one).value == 1.0
    assert "criterion_2>" not in server.requests[1].text


def test_a_reply_key_the_custom_shape_lacks_is_warned_about_naming_both(
    server: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A judge that answers `reason` where the shape says `explanation` leaves it empty: said."""

    class Explained(BaseModel):
        polite: bool
        explanation: str = ""

    server.then(Reply('{"polite": true, "reason": "it thanks the user"}'))
    judged = llm_scorer(
        "polite_explained",
        "Polite? JSON.",
        Explained,
        score=lambda reply: reply.polite,
        reason=lambda reply: reply.explanation or None,
        judge=judge(server),
    )
    with caplog.at_level("WARNING", logger="otel_scorers"):
        result = score(judged)
    assert result.value == 1.0 and result.reason is None
    warned = "\n".join(record.getMessage() for record in caplog.records)
    assert "reason" in warned and "Explained" in warned and "explanation" in warned
