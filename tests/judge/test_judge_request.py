"""What every judge request carries, read off the wire: the scripted server records each body
litellm sends. An output bound (`max_tokens`) on every call, and the reply's JSON schema in the
form the provider accepts, checked against replies of the rule's shape and of another shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError

from otel_scorers import AgentRun, ContextItem, Judge, JudgeConfig, Score, ask_judge
from otel_scorers.scorers.rules.catalogue import bias, faithfulness

from ..judge_server import JudgeServer, Reply
from ..judge_server import make_judge as shared_judge

KNOWN_MODEL = "openai/gpt-4o-mini"  # litellm's model table says it takes response schemas
UNKNOWN_MODEL = "openai/local-judge"  # a self-hosted OpenAI-compatible server litellm knows nothing of
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

RUN = AgentRun(
    trace_id=0xABC,
    span_id=0x1,
    agent_name="travel",
    input="What's the weather in Paris?",
    output="It is sunny and 21°C in Paris.",
    context=(ContextItem("Paris: sunny, 21°C", "tool_result", "get_weather"),),
)
UNITS = {"units": [{"text": "It is sunny in Paris.", "verdict": "yes", "reason": "the tool says so"}]}
# The reply a model gave with JSON mode alone: valid JSON, not the shape asked for.
ARBITRARY = {"answer": "It is sunny and 21°C in Paris.", "faithful": True}


class Politeness(BaseModel):
    polite: bool
    reason: str


def make_judge(server: JudgeServer, model: str = KNOWN_MODEL, **options: Any) -> Judge:
    return shared_judge(server, model=model, **options)


def score(scorer: Any) -> Score:
    result: Score = asyncio.run(scorer.score(RUN))
    return result


def ask_polite(judge: Judge) -> Politeness:
    async def go() -> Politeness:
        reply = await ask_judge("Is the answer polite?", Politeness, data={"answer": "Sure!"}, judge=judge)
        return reply.value

    return asyncio.run(go())


def sent_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The schema in OpenAI's `json_schema` form, checked to be that form."""
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is False
    schema: dict[str, Any] = response_format["json_schema"]["schema"]
    return schema


def accepts(schema: dict[str, Any], reply: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(reply)


def test_a_judged_rules_request_carries_an_output_bound_and_the_schema_of_its_reply(
    server: JudgeServer,
) -> None:
    server.then(Reply(json.dumps(UNITS)))
    result = score(faithfulness(judge=make_judge(server)))
    assert result.value == 1.0
    body = server.requests[0].body
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    schema = sent_schema(body)
    assert body["response_format"]["json_schema"]["name"] == "faithfulness"
    assert accepts(schema, UNITS)
    assert not accepts(schema, ARBITRARY)  # what JSON mode alone let through
    assert not accepts(schema, {"units": "one claim"})


def test_each_of_mastras_steps_carries_the_schema_of_its_own_reply(server: JudgeServer) -> None:
    extract, verdicts, reason = (
        {"units": ["a", "b"]},
        {"verdicts": [{"verdict": "yes"}] * 2},
        {"reason": "ok"},
    )
    server.then(Reply(json.dumps(extract)), Reply(json.dumps(verdicts)), Reply(json.dumps(reason)))
    assert score(faithfulness(steps=3, judge=make_judge(server))).value == 1.0
    schemas = [sent_schema(request.body) for request in server.requests]
    assert [accepts(schemas[n], reply) for n, reply in enumerate((extract, verdicts, reason))] == [True] * 3
    assert not accepts(schemas[0], verdicts) and not accepts(schemas[1], extract)
    bounds = [request.body["max_tokens"] for request in server.requests]
    # a one-sentence reason is bounded tighter than the lists, which grow with the answer
    assert bounds[2] < bounds[0] and bounds[2] < bounds[1]


def test_ask_judge_sends_the_schema_of_its_shape_and_an_output_bound(server: JudgeServer) -> None:
    server.then(Reply('{"polite": true, "reason": "thanks the user"}'))
    assert ask_polite(make_judge(server)) == Politeness(polite=True, reason="thanks the user")
    body = server.requests[0].body
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    schema = sent_schema(body)
    assert accepts(schema, {"polite": True, "reason": "thanks the user"})
    assert not accepts(schema, {"polite": "very", "reason": "r"})
    assert not accepts(schema, {"reason": "no verdict"})


def test_the_repair_round_carries_the_same_schema_and_bound(server: JudgeServer) -> None:
    server.then(Reply(json.dumps(ARBITRARY)), Reply('{"polite": false, "reason": "curt"}'))
    assert ask_polite(make_judge(server)).polite is False
    first, repair = (request.body for request in server.requests)
    assert repair["response_format"] == first["response_format"]
    assert repair["max_tokens"] == first["max_tokens"]


def test_max_output_tokens_in_the_config_bounds_every_call(server: JudgeServer) -> None:
    judge = make_judge(server, max_output_tokens=77)
    server.then(Reply(json.dumps(UNITS)), Reply('{"polite": true, "reason": "r"}'))
    score(faithfulness(judge=judge))
    ask_polite(judge)
    assert [request.body["max_tokens"] for request in server.requests] == [77, 77]


def test_max_output_tokens_per_scorer_bounds_that_scorer_only(server: JudgeServer) -> None:
    judge = make_judge(server, max_output_tokens={"faithfulness": 333})
    server.then(
        Reply(json.dumps(UNITS)), Reply(json.dumps({"units": []})), Reply('{"polite": true, "reason": "r"}')
    )
    score(faithfulness(judge=judge))
    score(bias(judge=judge))
    ask_polite(judge)
    bounds = [request.body["max_tokens"] for request in server.requests]
    assert bounds[0] == 333
    assert 333 not in bounds[1:] and all(bound > 0 for bound in bounds[1:])


def test_a_self_hosted_server_litellm_cannot_tell_gets_llama_cpps_schema_form(server: JudgeServer) -> None:
    server.then(Reply(json.dumps(UNITS)))
    score(faithfulness(judge=make_judge(server, model=UNKNOWN_MODEL)))
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_object"
    schema = response_format["schema"]
    assert accepts(schema, UNITS) and not accepts(schema, ARBITRARY)
    # self-contained: grammar converters that do not follow $defs read it whole
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema


@pytest.mark.parametrize(
    ("setting", "expected_type", "has_schema"),
    [
        ("json_object", "json_object", False),
        ("json_object_schema", "json_object", True),
        ("off", None, False),
    ],
)
def test_reply_schema_in_the_config_chooses_the_form(
    server: JudgeServer, setting: str, expected_type: str | None, has_schema: bool
) -> None:
    server.then(Reply(json.dumps(UNITS)))
    score(faithfulness(judge=make_judge(server, reply_schema=setting)))
    body = server.requests[0].body
    response_format = body.get("response_format")
    assert (response_format or {}).get("type") == expected_type
    assert ("schema" in (response_format or {})) == has_schema
    assert body["max_tokens"] > 0  # the bound goes out whatever the form


@pytest.mark.parametrize(
    "settings",
    [{"max_output_tokens": 0}, {"max_output_tokens": {"faithfulness": -5}}, {"reply_schema": "xml"}],
)
def test_a_bad_bound_or_schema_form_is_an_error_naming_the_key(settings: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as raised:
        JudgeConfig(**settings)
    assert next(iter(settings)) in str(raised.value)


class Step(BaseModel):
    name: str
    substeps: list[Step] = []


def test_a_recursive_shape_keeps_its_definitions_and_still_goes_out_as_a_schema(server: JudgeServer) -> None:
    reply = {"name": "plan", "substeps": [{"name": "look", "substeps": []}]}
    server.then(Reply(json.dumps(reply)))

    async def go() -> Step:
        return (await ask_judge("Plan it.", Step, judge=make_judge(server))).value

    assert asyncio.run(go()).substeps[0].name == "look"
    schema = sent_schema(server.requests[0].body)
    assert accepts(schema, reply) and not accepts(schema, {"name": "plan", "substeps": [{"substeps": []}]})
