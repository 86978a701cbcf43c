"""Filter predicates: every operator, composition, and unknown paths refused at load."""

from __future__ import annotations

from typing import Any

import pytest

from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, ToolCall
from otel_scorers.selection.filters import parse_filter

RUN = AgentRun(
    trace_id=1,
    span_id=2,
    agent_name="weather",
    input="q",
    output="a",
    tool_calls=(ToolCall("get_weather"), ToolCall("get_time")),
    models=("gpt-4o-mini",),
    start_ns=0,
    end_ns=1_500_000_000,
    status="ok",
    conversation_id="conv-1",
    attributes={"user.tier": "gold", "retries": 0},
    resource={"service.name": "shop", "deployment.environment": "prod"},
)


def path(name: str) -> dict[str, Any]:
    return {"path": name}


def lit(value: Any) -> dict[str, Any]:
    return {"literal": value}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"op": "eq", "left": path("agent.name"), "right": lit("weather")}, True),
        ({"op": "ne", "left": path("agent.name"), "right": lit("weather")}, False),
        ({"op": "eq", "left": path("model"), "right": lit("gpt-4o-mini")}, True),
        ({"op": "eq", "left": path("status"), "right": lit("ok")}, True),
        ({"op": "eq", "left": path("conversation.id"), "right": lit("conv-1")}, True),
        ({"op": "gte", "left": path("tool_calls.count"), "right": lit(2)}, True),
        ({"op": "lt", "left": path("tool_calls.count"), "right": lit(2)}, False),
        ({"op": "gt", "left": path("duration_ms"), "right": lit(1000)}, True),
        ({"op": "lte", "left": path("duration_ms"), "right": lit(1500)}, True),
        ({"op": "eq", "left": path("attributes.user.tier"), "right": lit("gold")}, True),
        ({"op": "eq", "left": path("resource.service.name"), "right": lit("shop")}, True),
        (
            {"op": "in", "left": path("resource.deployment.environment"), "right": lit(["prod", "staging"])},
            True,
        ),
        ({"op": "notIn", "left": path("agent.name"), "right": lit(["weather"])}, False),
        ({"op": "exists", "left": path("attributes.user.tier")}, True),
        ({"op": "exists", "left": path("attributes.absent")}, False),
        ({"op": "notExists", "left": path("attributes.absent")}, True),
        ({"op": "truthy", "left": path("attributes.retries")}, False),
        ({"op": "falsy", "left": path("attributes.retries")}, True),
        ({"op": "lt", "left": path("attributes.user.tier"), "right": lit(3)}, False),  # not orderable: false
        ({"op": "ne", "left": path("attributes.absent"), "right": lit("x")}, True),
        (
            {
                "op": "and",
                "conditions": [
                    {"op": "eq", "left": path("agent.name"), "right": lit("weather")},
                    {"op": "not", "condition": {"op": "eq", "left": path("status"), "right": lit("error")}},
                ],
            },
            True,
        ),
        (
            {
                "op": "or",
                "conditions": [
                    {"op": "eq", "left": path("agent.name"), "right": lit("other")},
                    {"op": "gt", "left": path("tool_calls.count"), "right": lit(5)},
                ],
            },
            False,
        ),
    ],
)
def test_operators(node: dict[str, Any], expected: bool) -> None:
    assert parse_filter(node)(RUN) is expected


@pytest.mark.parametrize(
    ("node", "where", "message"),
    [
        (
            {"op": "eq", "left": path("agent.nme"), "right": lit(1)},
            "filter.left.path",
            "unknown path 'agent.nme'",
        ),
        ({"op": "like", "left": path("agent.name")}, "filter.op", "unknown operator 'like'"),
        ({"op": "eq", "left": {"value": 1}, "right": lit(1)}, "filter.left", "an operand is"),
        ({"op": "and", "conditions": []}, "filter.conditions", "non-empty list"),
        (
            {"op": "and", "conditions": [{"op": "exists", "left": path("nope")}]},
            "filter.conditions[0].left.path",
            "unknown path",
        ),
        (
            {"op": "in", "left": path("agent.name"), "right": lit("weather")},
            "filter.right.literal",
            "needs a list",
        ),
        ({"op": "exists", "left": path("model"), "right": lit(1)}, "filter.right", "unexpected key"),
        (["not", "a", "mapping"], "filter", "must be a mapping"),
        (
            {"op": "gt", "left": path("agent.name"), "right": lit(5)},
            "filter.right",
            "'gt' compares 'agent.name' (a string) with 5 (a number), which is never true",
        ),
        ({"op": "eq", "left": path("tool_calls.count"), "right": lit("3")}, "filter.right", "never true"),
        ({"op": "eq", "left": path("duration_ms"), "right": lit(True)}, "filter.right", "(a boolean)"),
        (
            {"op": "in", "left": path("status"), "right": lit(["ok", 1])},
            "filter.right.literal[1]",
            "never true",
        ),
    ],
)
def test_errors_name_the_bad_key(node: Any, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_filter(node)
    assert caught.value.path == where
    assert message in caught.value.message


def test_a_filter_nested_thousands_deep_is_a_clean_error() -> None:
    node: dict[str, Any] = {"op": "eq", "left": path("agent.name"), "right": lit("weather")}
    for _ in range(3000):
        node = {"op": "not", "condition": node}
    with pytest.raises(ConfigError) as caught:
        parse_filter(node)
    assert "nest at most" in caught.value.message
    assert caught.value.path.startswith("filter.condition.condition")
