"""The YAML configuration: the documented shape loads; every mistake names its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from otel_scorers import ScoringSpanProcessor, bind, checks
from otel_scorers.config import load_config, parse_config
from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.scorer_call import evaluate as evaluate_binding

FULL = """
scorers:
  - type: includes
    name: says-sunny
    args: {expected: sunny}
    sampling: {rate: 0.5}
    filter: {op: eq, left: {path: agent.name}, right: {literal: weather}}
    threshold: 0.7
    max_per_minute: 600
  - type: called_tool
    args: {tool: get_weather, times: 2}
  - type: similarity
    args: {expected: "It is sunny"}
    threshold: 0.5
  - type: tests.custom_scorers:polite
  - type: tests.custom_scorers:length_at_most
    name: short
    args: {limit: 5}
processor:
  hold_timeout_s: 2
"""

RUN = AgentRun(
    trace_id=(1 << 56) - 1, span_id=1, agent_name="weather", input="q", output="It is sunny, please"
)


def evaluate(binding: Any) -> Score:
    score = evaluate_binding(binding, RUN)
    assert isinstance(score, Score)
    return score


def test_the_documented_shape_loads(tmp_path: Path) -> None:
    path = tmp_path / "scorers.yaml"
    path.write_text(FULL)
    bindings = load_config(path).scoring().bindings
    assert [binding.name for binding in bindings] == [
        "says-sunny",
        "called_tool",
        "similarity",
        "polite",
        "short",
    ]
    sunny = bindings[0]
    assert sunny.sampling_rate == 0.5 and sunny.threshold == 0.7 and sunny.max_per_minute == 600
    assert sunny.admit(RUN) == "admitted"
    assert evaluate(sunny).label == "pass"
    similarity = evaluate(bindings[2])
    assert similarity.value is not None and 0.5 < similarity.value < 1 and similarity.label == "pass"
    assert evaluate(bindings[1]).value == 0.0


def test_custom_scorers_from_import_paths() -> None:
    bindings = parse_config(yaml.safe_load(FULL)).scoring().bindings
    import asyncio

    polite = asyncio.run(evaluate_binding(bindings[3], RUN))  # type: ignore[arg-type]
    assert polite.value == 1.0 and polite.scorer == "polite"
    short = asyncio.run(evaluate_binding(bindings[4], RUN))  # type: ignore[arg-type]
    assert short.value == 0.0 and short.reason == "19 characters" and short.scorer == "short"


def test_a_bool_returning_custom_scorer_gets_pass_and_fail_labels() -> None:
    import asyncio

    (binding,) = parse_config({"scorers": [{"type": "tests.custom_scorers:polite"}]}).scoring().bindings
    passed = asyncio.run(evaluate_binding(binding, RUN))  # type: ignore[arg-type]
    rude = AgentRun(trace_id=1, span_id=1, agent_name="weather", input="q", output="No.")
    failed = asyncio.run(evaluate_binding(binding, rude))  # type: ignore[arg-type]
    assert (passed.value, passed.label) == (1.0, "pass")
    assert (failed.value, failed.label) == (0.0, "fail")


def test_a_custom_scorer_declares_what_it_needs_and_is_skipped_without_it() -> None:
    import asyncio

    document = {"scorers": [{"type": "tests.custom_scorers:polite", "needs": ["output"]}]}
    (binding,) = parse_config(document).scoring().bindings
    uncaptured = AgentRun(
        trace_id=1,
        span_id=1,
        agent_name="weather",
        input=None,
        output=None,
        missing=frozenset({"input", "output"}),
    )
    skipped = evaluate_binding(binding, uncaptured)
    assert isinstance(skipped, Score) and skipped.value is None
    assert skipped.skipped is not None and "output" in skipped.skipped
    scored = asyncio.run(evaluate_binding(binding, RUN))  # type: ignore[arg-type]
    assert scored.value == 1.0 and scored.scorer == "polite"


@pytest.mark.parametrize(
    ("entry", "key", "message"),
    [
        (
            {"type": "includes", "args": {"expected": "x"}, "needs": ["output"]},
            "scorers[0].needs",
            "only a custom scorer",
        ),
        ({"type": "tests.custom_scorers:polite", "needs": ["answer"]}, "scorers[0].needs[0]", "tool_results"),
    ],
)
def test_needs_is_checked(entry: dict[str, object], key: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"scorers": [entry]})
    assert key in str(caught.value) and message in str(caught.value)


def test_from_config_builds_the_processor(tmp_path: Path) -> None:
    path = tmp_path / "scorers.yaml"
    path.write_text(FULL)
    processor = ScoringSpanProcessor.from_config(path)
    assert len(processor.bindings) == 5
    processor.shutdown()


def test_python_api_has_the_same_power() -> None:
    from otel_scorers import bind

    binding = bind(
        checks.includes("sunny"),
        name="says-sunny",
        sampling=0.5,
        filter={"op": "eq", "left": {"path": "agent.name"}, "right": {"literal": "weather"}},
        threshold=0.7,
        max_per_minute=600,
    )
    from_yaml = parse_config(yaml.safe_load(FULL)).scoring().bindings[0]
    assert (binding.name, binding.sampling_rate, binding.threshold, binding.max_per_minute) == (
        from_yaml.name,
        from_yaml.sampling_rate,
        from_yaml.threshold,
        from_yaml.max_per_minute,
    )
    assert binding.admit(RUN) == from_yaml.admit(RUN) == "admitted"


@pytest.mark.parametrize(
    ("document", "where", "message"),
    [
        ({}, "scorers", "Field required"),
        ({"scorers": []}, "scorers", "at least 1"),
        (
            {"scorers": [{"type": "includes", "args": {"expected": "x"}}], "extra": 1},
            "extra",
            "unknown key; expected one of: scorers",
        ),
        ({"scorers": [{"type": "nope"}]}, "scorers[0].type", "unknown scorer type 'nope'"),
        (
            {"scorers": [{"type": "includes", "args": {"expectd": "x"}}]},
            "scorers[0].args.expectd",
            "unknown argument",
        ),
        ({"scorers": [{"type": "includes"}]}, "scorers[0].args", "needs argument(s): expected"),
        (
            {"scorers": [{"type": "called_tool", "args": {"tool": "x", "times": "many"}}]},
            "scorers[0].args.times",
            "integer",
        ),
        ({"scorers": [{"type": "includes", "args": {"expected": 3}}]}, "scorers[0].args.expected", "string"),
        ({"scorers": [{"type": "matches", "args": {"pattern": "("}}]}, "scorers[0].args", "invalid pattern"),
        (
            {"scorers": [{"type": "used_no_tools"}, {"type": "used_no_tools", "sampling": {"rate": 2}}]},
            "scorers[1].sampling.rate",
            "less than or equal to 1",
        ),
        (
            {
                "scorers": [
                    {
                        "type": "used_no_tools",
                        "filter": {"op": "eq", "left": {"path": "agent"}, "right": {"literal": 1}},
                    }
                ]
            },
            "scorers[0].filter.left.path",
            "unknown path 'agent'",
        ),
        (
            {"scorers": [{"type": "used_no_tools"}, {"type": "used_no_tools"}]},
            "scorers[1].name",
            "duplicate scorer name",
        ),
        (
            {
                "scorers": [{"type": "used_no_tools", "name": "turns"}],
                "conversations": {"scorers": [{"type": "turns"}]},
            },
            "conversations.scorers[0].name",
            "duplicate scorer name 'turns' (also scorers[0])",
        ),
        (
            {"scorers": [{"type": "used_no_tools", "max_per_minute": 0}]},
            "scorers[0].max_per_minute",
            "greater than or equal to 1",
        ),
        (
            {"scorers": [{"type": "used_no_tools", "colour": "red"}]},
            "scorers[0].colour",
            "unknown key; expected one of: type, name",
        ),
        ({"scorers": [{"type": "no.such.module:fn"}]}, "scorers[0].type", "cannot import module"),
        (
            {"scorers": [{"type": "tests.custom_scorers:missing"}]},
            "scorers[0].type",
            "has no attribute 'missing'",
        ),
        (
            {"scorers": [{"type": "includes", "args": {"expected": "x"}}], "processor": {"max_traces": 0}},
            "processor.max_traces",
            "greater than",
        ),
    ],
)
def test_errors_name_the_bad_key(document: Any, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(document)
    assert caught.value.path == where
    assert message in caught.value.message


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("scorers: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="is empty"):
        load_config(empty)


def test_environment_overrides_processor_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    config = parse_config(yaml.safe_load(FULL))
    monkeypatch.setenv("OTEL_SCORERS_MAX_QUEUE_SIZE", "17")
    assert config.processor_options()["max_queue_size"] == 17
    monkeypatch.setenv("OTEL_SCORERS_MAX_QUEUE_SIZE", "lots")
    with pytest.raises(ConfigError, match="OTEL_SCORERS_MAX_QUEUE_SIZE"):
        config.processor_options()


# ---- every error at once, in the file's terms ----------------------------------------------

SEVERAL_MISTAKES = """
scorerz: []
scorers:
  - type: includes
    args: {expectd: sunny}
    sampling: 5
  - type: called_tool
    args: {tool: get_weather}
    filter: {op: eq, left: {path: agent.nme}, right: {literal: weather}}
  - type: no_tool_error
processor: {max_queue_size: 0}
sidecar: {grpc: {port: 99999}, decision_wiat_s: 1}
"""


def test_every_error_is_reported_with_its_key_path(tmp_path: Path) -> None:
    path = tmp_path / "scorers.yaml"
    path.write_text(SEVERAL_MISTAKES)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    found = {error.path: error.message for error in caught.value.errors}
    assert set(found) == {
        "scorerz",
        "scorers[0].args.expectd",
        "scorers[0].args",
        "scorers[0].sampling",
        "scorers[1].filter.left.path",
        "scorers[2].type",
        "processor.max_queue_size",
        "sidecar.grpc.port",
        "sidecar.decision_wiat_s",
    }
    assert found["scorerz"] == "unknown key; did you mean 'scorers'?"
    assert found["sidecar.decision_wiat_s"] == "unknown key; did you mean 'decision_wait_s'?"
    assert found["scorers[0].sampling"] == "should be a mapping of settings, got 5"
    assert "did you mean 'no_tool_errors'?" in found["scorers[2].type"]
    text = str(caught.value)
    assert text.startswith(f"{path}: 9 errors:")
    for internal in ("SamplingConfig", "ScorerConfig", "SidecarConfig", "ListenConfig", "Config", "pydantic"):
        assert internal not in text


def test_yaml_and_encoding_errors_name_the_file_and_the_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("scorers:\n  - type: [includes\n")
    with pytest.raises(ConfigError) as caught:
        load_config(broken)
    assert str(caught.value).startswith(f"{broken}: not valid YAML: ")
    assert "line 3" in str(caught.value)
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("scorers:\n  - type: includes\n    args: {expected: café}\n".encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(latin1)
    assert str(caught.value) == f"{latin1}: not UTF-8 text: byte 0xe9 on line 3 cannot be decoded"


def _deep_not(depth: int) -> str:
    node = "{op: eq, left: {path: agent.name}, right: {literal: weather}}"
    for _ in range(depth):
        node = "{op: not, condition: " + node + "}"
    return node


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ("{type: used_no_tools, timeout_s: .inf}", "scorers[0].timeout_s", "finite number"),
        ("{type: similarity, args: {expected: x}, threshold: .nan}", "scorers[0].threshold", "finite number"),
        ("{type: used_no_tools, max_per_minute: 1.0e+30}", "scorers[0].max_per_minute", "too large"),
        ("{type: used_no_tools, max_per_minute: 1e30}", "scorers[0].max_per_minute", "whole number"),
        ("{type: used_no_tools, max_per_minute: 100000000}", "scorers[0].max_per_minute", "1000000"),
        (
            "{type: used_no_tools, filter: {op: gt, left: {path: agent.name}, right: {literal: 5}}}",
            "scorers[0].filter.right",
            "never true",
        ),
        ("{type: 'os:getcwd'}", "scorers[0].type", "takes one argument, the AgentRun"),
        ("{type: 'collections:OrderedDict'}", "scorers[0].type", "not a scorer"),
        ("{type: 'tests.custom_scorers:RUNS_PER_DAY'}", "scorers[0].type", "not a scorer: 1440"),
        (f"{{type: used_no_tools, filter: {_deep_not(40)}}}", "scorers[0].filter", "nest at most 32"),
    ],
)
def test_configs_that_could_never_work_fail_to_load(entry: str, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(yaml.safe_load(f"scorers:\n  - {entry}\n"))
    assert caught.value.path.startswith(where)
    assert message in caught.value.message


def test_a_filter_nested_3000_deep_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(f"scorers:\n  - type: used_no_tools\n    filter: {_deep_not(3000)}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: not readable: nested too deeply"


def test_the_same_limits_hold_in_python() -> None:
    for options, where in (
        ({"timeout_s": float("inf")}, "timeout_s"),
        ({"threshold": float("nan")}, "threshold"),
        ({"max_per_minute": 10**30}, "max_per_minute"),
    ):
        with pytest.raises(ConfigError) as caught:
            bind(checks.used_no_tools(), **options)
        assert caught.value.path == where
    with pytest.raises(TypeError, match="takes one argument, the AgentRun"):
        bind(lambda: 1.0)


# ---- the judge section: settings that could never work --------------------------------------


@pytest.mark.parametrize(
    ("document", "where", "message"),
    [
        (
            "judge: {model: notaprovider/xyz}",
            "judge.model",
            "unknown provider 'notaprovider'",
        ),
        (
            "judge: {model: deepseek-v4-pro}",
            "judge.model",
            "litellm needs the provider in the model's name: deepseek/deepseek-v4-pro",
        ),
        (
            "judge: {model: openai/gpt-4o-mini, api_base: 'localhost:8000'}",
            "judge.api_base",
            "should be an http(s) URL",
        ),
        (
            "judge: {model: openai/gpt-4o-mini, api_base: 'ftp://models.example.com'}",
            "judge.api_base",
            "should be an http(s) URL",
        ),
        (
            "judge: {model: openai/gpt-4o-mini, timeout_s: 45}",
            "scorers[0].timeout_s",
            "30s is not above judge.timeout_s (45s)",
        ),
        (
            "judge: {model: openai/my-local-judge, api_base: 'http://127.0.0.1:8080/v1', cost_budget_usd_per_hour: 1}",
            "judge.cost_budget_usd_per_hour",
            "litellm has no price for openai/my-local-judge",
        ),
    ],
)
def test_a_judge_setting_that_could_never_work_is_one_error_naming_its_key(
    document: str, where: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_SCORERS_JUDGE_MODEL", raising=False)
    with pytest.raises(ConfigError) as caught:
        parse_config(yaml.safe_load(f"scorers:\n  - type: answer_relevancy\n{document}\n"))
    assert [error.path for error in caught.value.errors] == [where]  # not also "no judge model"
    assert message in caught.value.message


def test_a_scorers_own_model_and_timeout_are_checked_against_the_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_SCORERS_JUDGE_MODEL", raising=False)
    document = """
scorers:
  - type: answer_relevancy
    args: {model: notaprovider/xyz}
  - type: faithfulness
    timeout_s: 5
  - type: toxicity
    args: {judge: {model: notaprovider/xyz}}
  - type: bias
    args: {judge: {model: openai/gpt-4o, timeout_s: 60}}
judge: {model: openai/gpt-4o-mini, timeout_s: 5}
"""
    with pytest.raises(ConfigError) as caught:
        parse_config(yaml.safe_load(document))
    found = {error.path: error.message for error in caught.value.errors}
    assert set(found) == {
        "scorers[0].args.model",
        "scorers[1].timeout_s",
        "scorers[2].args.judge.model",
        "scorers[3].timeout_s",
    }
    assert "unknown provider 'notaprovider'" in found["scorers[0].args.model"]
    assert found["scorers[1].timeout_s"].startswith("5s is not above judge.timeout_s (5s)")
    assert found["scorers[2].args.judge.model"].startswith("unknown provider 'notaprovider'")
    assert found["scorers[3].timeout_s"].startswith("30s is not above scorers[3].args.judge.timeout_s (60s)")


def test_a_cost_budget_on_an_unpriced_model_loads_once_prices_or_a_call_cap_are_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_SCORERS_JUDGE_MODEL", raising=False)
    local = "model: openai/my-local-judge, api_base: 'http://127.0.0.1:8080/v1'"
    for judge in (
        f"{{{local}, cost_budget_usd_per_hour: 1, prices: {{input_usd_per_million: 0.1, output_usd_per_million: 0.2}}}}",
        f"{{{local}, max_calls_per_hour: 100}}",
        "{model: openai/gpt-4o-mini, cost_budget_usd_per_hour: 1}",  # litellm prices it
    ):
        config = parse_config(yaml.safe_load(f"scorers:\n  - type: answer_relevancy\njudge: {judge}\n"))
        assert len(config.scoring().bindings) == 1


def test_a_judge_model_from_the_environment_is_checked_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SCORERS_JUDGE_MODEL", "notaprovider/xyz")
    with pytest.raises(ConfigError) as caught:
        parse_config({"scorers": [{"type": "answer_relevancy"}]})
    assert caught.value.path == "scorers[0].args"
    assert caught.value.message.startswith("OTEL_SCORERS_JUDGE_MODEL: unknown provider 'notaprovider'")


def test_judge_models_are_refused_only_when_litellm_cannot_route_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_SCORERS_JUDGE_MODEL", raising=False)
    usable = [
        {"model": "openai/gpt-4o-mini"},
        {"model": "gpt-4o-mini"},
        {"model": "claude-sonnet-4-5"},
        {"model": "ollama/llama3", "api_base": "http://localhost:11434"},
        {"model": "hosted_vllm/my-finetune", "api_base": "https://vllm.internal:8000/v1"},
    ]
    for judge in usable:
        (binding,) = (
            parse_config({"scorers": [{"type": "answer_relevancy"}], "judge": judge}).scoring().bindings
        )
        assert binding.uses_judge
    for model in ("notaprovider/xyz", "my-local-model", "OpenAI/gpt-4o-mini"):
        with pytest.raises(ConfigError) as caught:
            parse_config({"scorers": [{"type": "answer_relevancy"}], "judge": {"model": model}})
        assert [error.path for error in caught.value.errors] == ["judge.model"]


@pytest.mark.parametrize(
    ("conversations", "everything"),
    [
        (None, False),
        ({"turn_records": True}, True),
        ({"scorers": [{"type": "turns"}]}, True),
        ({"scorers": [], "turn_records": False}, False),
    ],
)
def test_a_file_read_alone_buffers_the_traces_its_built_pipeline_does(
    conversations: dict[str, Any] | None, everything: bool
) -> None:
    """A sidecar's receiving process reads which traces to buffer from the file, without making
    a scorer; its scoring pipeline, built, buffers the same: every trace when runs make turns."""
    from otel_scorers.pipeline_builder import PipelineSettings, build_pipeline
    from otel_scorers.selection.sampling import TraceIdSampler

    document: dict[str, Any] = {
        "scorers": [
            {"type": "used_no_tools", "sampling": {"rate": 0.25}},
            {"type": "no_tool_errors", "sampling": {"rate": 0.5}},
        ]
    }
    if conversations is not None:
        document["conversations"] = conversations
    config = parse_config(document)
    bindings, settings = config.scoring()
    built = build_pipeline(PipelineSettings(bindings, settings, outputs=[]))
    try:
        expected = TraceIdSampler(1.0 if everything else 0.5).threshold
        assert config.buffered_sampler().threshold == expected
        assert built.buffered.threshold == expected
    finally:
        built.shutdown(1.0)
