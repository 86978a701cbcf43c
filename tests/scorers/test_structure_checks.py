"""The checks of structure beyond their vectors (tests/data/checks-vectors.json, ids `s…`): the
tool schemas real frameworks declare in their traces, hostile schemas and documents, and the
configuration every check shares."""

from __future__ import annotations

import gc
import json
import math
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_scorers import checks
from otel_scorers.config import parse_config
from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score, ToolCall, ToolDefinition
from otel_scorers.pipeline.scorer_call import evaluate as evaluate_binding
from otel_scorers.runs.otlp_files import runs_from_files
from otel_scorers.scorers.bounded_schema import quick_test

from .check_scores import evaluate

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
#: Frameworks whose traces declare their tools' parameter schemas, and the attribute they use.
DECLARING = {
    "pydantic-ai-v5": "gen_ai.tool.definitions",
    "vercel-ai": "gen_ai.tool.definitions",
    "vercel-ai-v6": "ai.prompt.tools",
    "google-adk": "gen_ai.tool.definitions",
    "semantic-kernel": "gen_ai.tool.definitions",
    "agno-openllmetry": "gen_ai.tool.definitions",
    "llamaindex-openinference": "llm.tools",
    "crewai-openinference": "llm.tools",
    "smolagents": "llm.tools",
}


def fixture_run(framework: str, scenario: str = "tool_then_answer") -> AgentRun:
    runs = list(runs_from_files([TRACES / framework / f"{scenario}.json"], []))
    assert len(runs) == 1
    return runs[0]


@pytest.mark.parametrize(("framework", "source"), DECLARING.items())
def test_tool_args_valid_reads_the_schemas_a_framework_declares_in_its_trace(
    framework: str, source: str
) -> None:
    run = fixture_run(framework)
    (weather,) = [tool for tool in run.tool_definitions if tool.name == "get_weather"]
    assert weather.source == source
    assert isinstance(weather.parameters, dict) and "city" in weather.parameters["properties"]
    assert evaluate(checks.tool_args_valid(), run).value == 1.0
    # The same run with arguments its declared schema forbids, and a call of a tool it never declared.
    (call,) = run.tool_calls
    wrong = replace(run, tool_calls=(replace(call, arguments={"city": 42}),))
    score = evaluate(checks.tool_args_valid(), wrong)
    assert score.value == 0.0 and score.reason == "call 1 get_weather: at $.city: 42 is not of type 'string'"
    undeclared = replace(run, tool_calls=(call, replace(call, name="delete_user")))
    score = evaluate(checks.tool_args_valid(), undeclared)
    assert score.value == 0.0 and score.reason is not None
    assert score.reason.startswith("call 2 delete_user: tool not declared (declared: ")


def test_semantic_kernel_s_plugin_qualified_declarations_are_read_by_function_name() -> None:
    run = fixture_run("semantic-kernel")
    assert [tool.name for tool in run.tool_definitions] == ["get_weather"]
    assert [call.name for call in run.tool_calls] == ["get_weather"]


def test_a_trace_that_names_its_tools_without_schemas_is_skipped_and_one_that_declares_none_too() -> None:
    named = fixture_run("mastra-exporter")
    assert {tool.name for tool in named.tool_definitions} == {"get_weather", "get_time"}
    assert all(tool.parameters is None for tool in named.tool_definitions)
    score = evaluate(checks.tool_args_valid(), named)
    assert score.skipped == "no schema to check the calls against: get_weather (declared without a schema)"
    bare = fixture_run("openai-v2")
    assert bare.tool_definitions == ()
    score = evaluate(checks.tool_args_valid(), bare)
    assert score.skipped is not None and score.skipped.startswith("the trace declares no tool schemas")
    # Given in the configuration, the schema checks what the trace could not.
    given = checks.tool_args_valid({"get_weather": {"type": "object", "required": ["city", "units"]}})
    score = evaluate(given, bare)
    assert score.value == 0.0 and score.reason == "call 1 get_weather: at $: 'units' is a required property"


def test_a_catastrophic_pattern_in_a_schema_gives_up_at_the_binding_s_timeout() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string", "pattern": "(a|aa)+$"}}}
    run = AgentRun(
        1, 2, "agent", "q", "ok", tool_calls=(ToolCall("get_weather", arguments={"city": "a" * 60 + "!"}),)
    )
    # A timeout error: the search gave up at the deadline instead of backtracking for ever.
    score = evaluate(checks.tool_args_valid({"get_weather": schema}), run, timeout_s=0.3)
    assert score.error is not None and score.error.type == "timeout"
    answer = replace(run, output='{"name": "' + "a" * 60 + '!"}')
    schema = {"type": "object", "patternProperties": {"(a|aa)+$": {}}, "additionalProperties": False}
    score = evaluate(checks.json_schema(schema), answer, timeout_s=10.0)
    assert score.value == 0.0  # the key "name" is searched quickly; now the value as a key:
    hostile = replace(run, output='{"' + "a" * 60 + '!": 1}')
    score = evaluate(checks.json_schema(schema), hostile, timeout_s=0.3)
    assert score.error is not None and score.error.type == "timeout"


def test_a_schema_that_refers_to_itself_without_end_is_an_error_result_not_a_crash() -> None:
    schema = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    score = evaluate(checks.json_schema(schema), AgentRun(1, 2, "agent", "q", "{}"))
    assert score.error is not None and score.error.type == "too_large"
    assert score.error.message == "the answer is not checked: the schema refers to itself without end"


def test_a_huge_unique_array_is_checked_in_linear_time() -> None:
    def cpu_seconds(count: int) -> float:
        items = ",".join(f'{{"id": {number}}}' for number in range(count))
        run = AgentRun(1, 2, "agent", "q", f"[{items}]")
        best = math.inf
        for _ in range(3):  # the best of three: a collection or another process may stall one
            gc.collect()
            started = time.process_time()  # CPU time: other processes on the machine do not move it
            score = evaluate(checks.json_schema({"type": "array", "uniqueItems": True}), run)
            best = min(best, time.process_time() - started)
            assert score.value == 1.0
        return best

    cpu_seconds(1_000)  # warm
    # Ten times the items: about ten times the work when linear, a hundred when quadratic.
    assert cpu_seconds(50_000) < 40 * max(cpu_seconds(5_000), 1e-3)


def test_a_trace_declaring_a_huge_or_invalid_schema_leaves_that_tool_unchecked() -> None:
    run = AgentRun(
        1,
        2,
        "agent",
        "q",
        "ok",
        tool_calls=(ToolCall("a", arguments={}), ToolCall("b", arguments={"x": 1})),
        tool_definitions=(
            ToolDefinition("a", {"type": "object", "description": "x" * 300_000}),
            ToolDefinition("b", {"type": "object", "properties": {"x": {"type": "integer"}}}),
        ),
    )
    score = evaluate(checks.tool_args_valid(), run)
    assert score.value == 1.0 and score.reason is not None
    assert score.reason.startswith(
        "1 tool call matches its declared schema; not checked: a (a's declared schema is "
    )


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        (
            {"type": "json_schema", "args": {"schema": {"type": 12}}},
            "scorers[0].args",
            "not a valid JSON Schema",
        ),
        ({"type": "json_schema", "args": {"schema": {"pattern": "("}}}, "scorers[0].args", "invalid pattern"),
        ({"type": "json_valid", "args": {"path": "order.items"}}, "scorers[0].args", "must start with $"),
        ({"type": "trajectory", "args": {"expected": ["a"], "mode": "loose"}}, "scorers[0].args.mode", ""),
        ({"type": "trajectory", "args": {"expected": [{"tool": "a"}]}}, "scorers[0].args", "expected[0]"),
        (
            {"type": "tool_args_valid", "args": {"tools": {"a": {"type": "nope"}}}},
            "scorers[0].args",
            "tools.a",
        ),
    ],
)
def test_a_bad_argument_is_a_configuration_error_naming_it(
    entry: dict[str, object], path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"scorers": [entry]})
    assert path in str(raised.value) and message in str(raised.value)


def test_the_checks_take_every_binding_option_from_the_configuration() -> None:
    config = parse_config(
        {
            "scorers": [
                {
                    "type": "trajectory",
                    "name": "weather-path",
                    "args": {"expected": ["get_weather"], "mode": "superset"},
                    "sampling": {"rate": 0.5},
                    "filter": {"op": "eq", "left": {"path": "agent.name"}, "right": {"literal": "weather"}},
                    "max_per_minute": 100,
                    "timeout_s": 2,
                },
                {
                    "type": "json_schema",
                    "args": {"schema": {"type": "object"}, "fences": True},
                    "threshold": 1,
                },
                {"type": "json_valid", "args": {"tool": "search"}},
                {"type": "tool_args_valid"},
            ]
        }
    )
    first, *others = config.scoring().bindings
    assert (first.name, first.sampling_rate, first.max_per_minute, first.timeout_s) == (
        "weather-path",
        0.5,
        100,
        2,
    )
    assert first.filter is not None and first.lane == "inline"
    assert [binding.name for binding in others] == ["json_schema", "json_valid", "tool_args_valid"]
    # The schema checks may take long on a long document: their lane awaits them (`offloaded_check`).
    lanes = {binding.name: binding.lane for binding in config.scoring().bindings}
    assert lanes == {
        "weather-path": "inline",
        "json_schema": "async",
        "json_valid": "inline",
        "tool_args_valid": "async",
    }
    assert all(binding.evaluator_version for binding in config.scoring().bindings)


PLAIN = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", ""]))
JSON = st.recursive(
    st.one_of(PLAIN, st.floats(-3, 3, allow_nan=False), st.just(1.0)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def schemas(depth: int = 2) -> st.SearchStrategy[dict[str, object]]:
    keywords: dict[str, st.SearchStrategy[object]] = {
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3)),
        "enum": st.lists(PLAIN, min_size=1, max_size=3),
        "const": PLAIN,
        "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
        "additionalProperties": st.booleans(),
        "minLength": st.integers(0, 2),
        "maxLength": st.integers(0, 2),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minimum": st.integers(-2, 2),
        "maximum": st.one_of(st.integers(-2, 2), st.floats(-2, 2, allow_nan=False)),
        "description": st.just("ignored"),
    }
    if depth > 0:
        keywords["properties"] = st.dictionaries(
            st.sampled_from(["a", "b", "c"]), schemas(depth - 1), max_size=2
        )
        keywords["items"] = schemas(depth - 1)
    return st.fixed_dictionaries({}, optional=keywords)  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(schema=schemas(), document=JSON)
def test_the_quick_test_says_valid_only_where_the_library_does(
    schema: dict[str, object], document: object
) -> None:
    from jsonschema import Draft202012Validator

    test = quick_test(schema)
    assert test is not None, "every schema of these keywords has a quick test"
    if test(document):
        assert Draft202012Validator(schema).is_valid(document), (schema, document)


def test_hostile_declarations_in_a_trace_stay_bounded() -> None:
    from otel_scorers.conventions.formats.tool_definitions import (
        MAX_DECLARATION_CHARS,
        MAX_TOOLS,
        span_tool_definitions,
    )

    many = json.dumps([{"name": f"tool_{n}", "parameters": {"type": "object"}} for n in range(1000)])
    assert len(span_tool_definitions({"gen_ai.tool.definitions": many})) == MAX_TOOLS
    huge = json.dumps([{"name": "a", "description": "x" * MAX_DECLARATION_CHARS}])
    assert span_tool_definitions({"gen_ai.tool.definitions": huge}) == ()
    assert span_tool_definitions({"gen_ai.tool.definitions": "not json ["}) == ()
    assert span_tool_definitions({"gen_ai.tool.definitions": '[1, null, {"name": ""}, "get_time"]'}) == (
        ToolDefinition("get_time", None, "gen_ai.tool.definitions"),
    )
    openinference = {f"llm.tools.{n}.tool.json_schema": json.dumps({"name": f"t{n}"}) for n in range(300)}
    assert len(span_tool_definitions(openinference)) == MAX_TOOLS


def test_the_configuration_example_in_the_docs_loads() -> None:
    import yaml

    docs = (Path(__file__).parent.parent.parent / "docs" / "checks.md").read_text(encoding="utf-8")
    block = docs.split("In a configuration file:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    bindings = parse_config(yaml.safe_load(block)).scoring().bindings
    assert [binding.name for binding in bindings] == [
        "tool_args_valid", "weather-args", "json_schema", "json_valid", "trajectory",
    ]  # fmt: skip
    run = AgentRun(
        1,
        2,
        "weather",
        "q",
        '```json\n{"forecast": {"temp_c": 21}}\n```',
        tool_calls=(
            ToolCall("search", arguments={"q": "weather"}, result={"hits": 1}),
            ToolCall("get_weather", arguments={"city": "Paris", "units": "C"}),
        ),
    )
    results = {binding.name: evaluate_binding(binding, run) for binding in bindings}
    assert all(isinstance(score, Score) for score in results.values())
    values = {name: score.value if isinstance(score, Score) else None for name, score in results.items()}
    assert values == {
        "tool_args_valid": None,  # skipped: the run declares no tools
        "weather-args": 0.0,  # search is not declared in the given tools
        "json_schema": 1.0,
        "json_valid": 1.0,
        "trajectory": 1.0,
    }


def test_runs_shows_the_tools_a_run_declared() -> None:
    from tests.cli.test_score_gate import run_cli

    result = run_cli("runs", str(TRACES / "vercel-ai-v6" / "tool_then_answer.json"))
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    declared = json.loads(line)["tool_definitions"]
    assert [(tool["name"], tool["source"]) for tool in declared] == [
        ("get_weather", "ai.prompt.tools"),
        ("get_time", "ai.prompt.tools"),
    ]
    assert declared[0]["parameters"]["required"] == ["city"]
