"""A described tracer over a framework its description was not written from, read without its run
clauses (`use_descriptions(runs_withheld=)`, bench/fidelity.py `--without-runs`), in a trace in
which an agent runs another as a tool: the invoked agent is found by its place under the tool
span, and the agent that called the tool is found as a trace with no run is (`tool_invoked_agents`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fidelity import scenario_tally
from otel_scorers import conventions

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def _shipped_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


@pytest.mark.parametrize(
    ("corpus", "scenario"),
    [
        ("langfuse", "nested"),
        ("mlflow", "nested"),
        ("mlflow-dspy", "nested"),
        ("genkit", "nested"),
        ("spring-ai", "nested"),
    ],
)
def test_the_agent_that_called_a_tool_running_another_is_found(corpus: str, scenario: str) -> None:
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(TRACES / corpus / f"{scenario}.truth.json", corpus)
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


def test_a_run_holding_nothing_beside_the_loop_a_tool_ran_is_no_run() -> None:
    # MLflow over the OpenAI Agents SDK: the tool's call holds the runner's call, which ended with
    # nothing under it, beside the workflow of the agent it ran.
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(
        TRACES / "mlflow-openai-agents" / "agent_as_tool.truth.json", "mlflow-openai-agents"
    )
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


def test_an_agent_a_tool_ran_whose_tools_are_called_inside_its_model_calls_is_found() -> None:
    # Mastra's `@mastra/laminar` exporter nests each step's tool calls in the step's model-call
    # span (`step: 0` around `tool: 'get_weather'`): the agent the tool `agent-weatherAgent` ran
    # holds a loop all the same.
    conventions.use_descriptions((), runs_withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    tally = scenario_tally(TRACES / "mastra-laminar" / "nested.truth.json", "mastra-laminar")
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
