"""The unit of work around an agent's loop (`runs/loop_units.py`): a tracer the project knows
(LangWatch's, Laminar's) over a framework its description's run clauses were not written from
(read with them withheld): its model and tool calls no run holds are one loop, the span around
them the run, as the generator's truth says: one run per loop, never one per model call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fidelity import scenario_tally
from otel_scorers import conventions

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
#: The corpora, the description read without its run clauses, and the scenarios whose runs the
#: rules every reader shares do not read whole (no tool call: no loop; a handoff read as a call).
CORPORA = {
    "langwatch-langchain": ("langwatch", ()),
    "langwatch-langchainjs": ("langwatch", ()),
    "lmnr-openai-agents": ("laminar", ("agent_as_tool", "handoff_after_tool", "no_tool")),
}


@pytest.fixture(autouse=True)
def _shipped_after() -> Iterator[None]:
    yield
    conventions.use_descriptions(())


def _cases() -> list[tuple[str, Path]]:
    return [
        (corpus, path)
        for corpus, (_, unread) in CORPORA.items()
        for path in sorted((TRACES / corpus).glob("*.truth.json"))
        if path.name.split(".")[0] not in unread
    ]


@pytest.mark.parametrize(
    ("corpus", "truth_path"), _cases(), ids=lambda value: value if isinstance(value, str) else value.stem
)
def test_the_span_around_a_loop_no_run_holds_is_its_run(corpus: str, truth_path: Path) -> None:
    conventions.use_descriptions((), runs_withheld=[CORPORA[corpus][0]])
    tally = scenario_tally(truth_path, corpus)
    assert (tally.right, tally.phantom) == (tally.truth, 0), tally.findings


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_no_scenario_reads_a_run_that_is_not_there(corpus: str) -> None:
    conventions.use_descriptions((), runs_withheld=[CORPORA[corpus][0]])
    for truth_path in sorted((TRACES / corpus).glob("*.truth.json")):
        tally = scenario_tally(truth_path, corpus)
        assert tally.phantom == 0, tally.findings
