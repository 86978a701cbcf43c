"""A shipped description read without its run-finding clauses (`use_descriptions(runs_withheld=)`,
bench/fidelity.py `--without-runs`) keeps its vocabulary: its tool and model clauses claim the
spans they claim with it, and no span is a run or a handoff by its say."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_scorers import conventions
from otel_scorers.runs.otlp_files import read_spans

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def _shipped_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def roles(corpus: str) -> list[tuple[str | None, str | None]]:
    found: list[tuple[str | None, str | None]] = []
    for path in sorted((TRACES / corpus).glob("*.json")):
        if path.name.endswith(".truth.json"):
            continue
        for span in read_spans(path, []):
            classified = conventions.classify(span)
            found.append((classified[0].name, classified[1]) if classified else (None, None))
    return found


@pytest.mark.parametrize(
    ("corpus", "name"), [("lmnr-openai-agents", "laminar"), ("monocle-openai-agents", "monocle")]
)
def test_a_description_without_its_run_clauses_keeps_its_tools_and_models(corpus: str, name: str) -> None:
    kept = roles(corpus)
    conventions.use_descriptions((), runs_withheld=[name])
    withheld = roles(corpus)
    # Each of its model calls and tool calls is one still (a handoff's span is its model's call).
    for before, after in zip(kept, withheld, strict=True):
        if before[1] in ("tool", "model"):
            assert after[0] == name and after[1] in ("tool", "model"), (before, after)
    assert ("run" in {role for _, role in kept}) and "run" not in {role for _, role in withheld}


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="no shipped description named acme"):
        conventions.use_descriptions((), runs_withheld=["acme"])


@pytest.mark.parametrize(
    ("corpus", "name"), [("mlflow-crewai", "mlflow"), ("agentops-openai-agents", "agentops")]
)
def test_runs_its_run_clauses_do_not_find_are_found_by_the_vocabulary_the_trace_shows(
    corpus: str, name: str
) -> None:
    # The tracer known, the framework's run shape not: the runs of its spans are found as a
    # vocabulary nobody described is read, and match the generator's truth.
    from bench.fidelity import scenario_tally

    conventions.use_descriptions((), runs_withheld=[name])
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        tally = scenario_tally(truth_path, corpus)
        assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings
