"""A model span whose reader finds no messages, read with the shipped descriptions withheld: a
kind key on the span naming a model call, of a vocabulary nobody described (MLflow's autolog
writing `mlflow.spanType` and its messages onto Semantic Kernel's spans), gives them by the keys
under its prefix, as the inference reads them."""

from __future__ import annotations

import pytest

from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "failing_tool", "agent_as_plugin"])
def test_a_kind_key_naming_a_model_call_gives_the_messages_its_reader_found_none_of(scenario: str) -> None:
    # Semantic Kernel writes its model calls' messages to log records; MLflow's `mlflow.spanInputs`
    # / `mlflow.spanOutputs` on the same spans hold them, and with them the tools' results the
    # model was sent.
    runs = rebuilt("mlflow-semantic-kernel", scenario)
    assert runs and all(run.convention == "semantic_kernel" for run in runs)
    assert_read_as_written("mlflow-semantic-kernel", scenario, runs)


@pytest.mark.parametrize(
    "scenario", ["tool_then_answer", "two_tools", "failing_tool", "swarm", "round_robin"]
)
def test_a_span_no_reader_claims_inside_a_readers_run_is_a_model_call_by_its_kind_key(scenario: str) -> None:
    # AutoGen's own `invoke_agent` and `execute_tool` spans are its reader's runs and calls; the
    # model calls in them are MLflow's client spans alone (`mlflow.spanType = "LLM"`), which no
    # reader claims: by that kind key they are the runs' model calls, their messages AutoGen's.
    runs = rebuilt("mlflow-autogen", scenario)
    assert runs and all(run.convention == "autogen" for run in runs)
    assert_read_as_written("mlflow-autogen", scenario, runs)
