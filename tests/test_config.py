"""The YAML configuration: the documented shape loads; every mistake names its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.config import load_config, parse_config
from otel_scorers.errors import ConfigError
from otel_scorers.model import AgentRun, Score

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
    score = binding.evaluate(RUN)
    assert isinstance(score, Score)
    return score


def test_the_documented_shape_loads(tmp_path: Path) -> None:
    path = tmp_path / "scorers.yaml"
    path.write_text(FULL)
    bindings = load_config(path).bindings()
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
    bindings = parse_config(yaml.safe_load(FULL)).bindings()
    import asyncio

    polite = asyncio.run(bindings[3].evaluate(RUN))  # type: ignore[arg-type]
    assert polite.value == 1.0 and polite.scorer == "polite"
    short = asyncio.run(bindings[4].evaluate(RUN))  # type: ignore[arg-type]
    assert short.value == 0.0 and short.reason == "19 characters" and short.scorer == "short"


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
    from_yaml = parse_config(yaml.safe_load(FULL)).bindings()[0]
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
        ({"scorers": [{"type": "includes", "args": {"expected": "x"}}], "extra": 1}, "extra", "Extra inputs"),
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
            {"scorers": [{"type": "used_no_tools", "max_per_minute": 0}]},
            "scorers[0].max_per_minute",
            "greater than or equal to 1",
        ),
        ({"scorers": [{"type": "used_no_tools", "colour": "red"}]}, "scorers[0].colour", "Extra inputs"),
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
