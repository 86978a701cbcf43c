"""The descriptions shipped with the project (`conventions/descriptions/*.yaml`): where they stand
among the readers, and that they read their corpora whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from otel_scorers import conventions
from otel_scorers.config import parse_config
from otel_scorers.conventions.shipped import SHIPPED_DESCRIPTIONS
from otel_scorers.runs.otlp_files import runs_from_files

from .acme_instrumentation import CONFIG, SCOPE, no_descriptions_after

__all__ = ["no_descriptions_after"]  # the fixture, used by every test here


def test_shipped_descriptions_are_read_before_genai_and_after_the_user_s() -> None:
    names = [convention.name for convention in conventions.CONVENTIONS]
    assert {"langfuse", "mlflow"} <= set(names)
    # Each twice: under their tracer's scope, and under any other by the keys they write;
    # Haystack's tags before MLflow's, which MLflow writes on Haystack's spans too.
    assert [d.name for d in SHIPPED_DESCRIPTIONS] == [
        "langfuse",
        "langfuse",
        "haystack",
        "haystack",
        "mlflow",
        "mlflow",
        "langsmith",
        "langsmith",
        "any_agent",
        "spring_ai",
        "genkit",
        "genkit",
        "griptape",
        "voltagent",
        "voltagent",
        "monocle",
        "monocle",
        "laminar",
        "laminar-mastra",
        "laminar",
        "fiddler",
        "fiddler",
        "langwatch",
        "langwatch",
        "agentops",
        "agentops",
        "agentops",
        "sentry",
        "sentry",
        "trulens",
        "trulens",
        "promptflow",
        "promptflow",
        "traceai",
        "traceai-smolagents",
        "mcp_agent",
        "wayflow",
    ]
    for name in ("langfuse", "haystack", "mlflow", "langsmith"):
        assert len(names) - 1 - names[::-1].index(name) < names.index("genai")
    conventions.use_descriptions(parse_config(yaml.safe_load(CONFIG)).conventions)
    assert conventions.CONVENTIONS[0].name == "acme"
    assert conventions.user_descriptions()[0].name == "acme"
    assert SCOPE in conventions.RUN_START_SCOPES and "acme.is" in conventions.RUN_MARKER_KEYS
    conventions.use_descriptions(())
    assert SCOPE not in conventions.RUN_START_SCOPES and "acme.is" not in conventions.RUN_MARKER_KEYS


@pytest.mark.parametrize("corpus", ["langfuse", "mlflow"])
def test_shipped_descriptions_leave_nothing_missing_in_their_corpus(corpus: str) -> None:
    traces = Path(__file__).parent.parent / "fixtures" / "traces" / corpus
    problems: list[Any] = []
    runs = list(
        runs_from_files(
            sorted(p for p in traces.glob("*.json") if not p.name.endswith(".truth.json")), problems
        )
    )
    assert not problems
    expected = sum(len(json.loads(path.read_text())["runs"]) for path in traces.glob("*.truth.json"))
    assert len(runs) == expected
    assert all(run.convention == corpus and not run.missing and run.usage.input_tokens for run in runs)
