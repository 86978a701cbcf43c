"""Outputs are a list in the config (`outputs:`), names from one registry; the console switches
stay shorthands; a bad name is a configuration error naming its key."""

from __future__ import annotations

import pytest

from otel_scorers import ScoringSpanProcessor
from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.emission.standard import DEFAULT_OUTPUTS, OUTPUTS, chosen_outputs
from otel_scorers.errors import ConfigError
from tests.conftest import Telemetry

SCORERS = [{"type": "no_tool_errors"}]


def test_an_unknown_output_names_its_key_and_the_closest_known_one() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"scorers": SCORERS, "outputs": ["otlp", "consle"]})
    assert "outputs[1]" in str(caught.value) and "did you mean 'console'" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        parse_config({"scorers": SCORERS, "outputs": ["no_such_module_here:factory"]})
    assert "outputs[0]" in str(caught.value) and "cannot import" in str(caught.value)


def test_the_default_outputs_and_the_console_switch_as_a_shorthand() -> None:
    assert DEFAULT_OUTPUTS == ("otlp", "metrics") and set(DEFAULT_OUTPUTS) <= set(OUTPUTS)
    assert chosen_outputs(None, console=False) == ("otlp", "metrics")
    assert chosen_outputs(None, console=True) == ("otlp", "metrics", "console")
    assert chosen_outputs(["console", "otlp"], console=True) == ("console", "otlp")


def test_only_the_listed_outputs_receive_scores(
    telemetry: Telemetry, capsys: pytest.CaptureFixture[str]
) -> None:
    config = parse_config({"scorers": SCORERS, "outputs": ["console"]})
    processor = ScoringSpanProcessor.from_config(config, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    agent = ExampleAgent(telemetry.tracer_provider.get_tracer("agent"))
    for script in DEMO_RUNS:
        agent.run(script)
    assert processor.force_flush()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("score ")]
    assert len(lines) == len(DEMO_RUNS) and all("scorer=no_tool_errors" in line for line in lines)
    assert not [span for span in telemetry.finished_spans() if span.name.startswith("evaluate ")]
    assert telemetry.counter("gen_ai.evaluation.results") == 0
    processor.shutdown()
