"""Each judged scorer's one call costs at most half the tokens of Mastra's own scorer on the same
case: Mastra (@mastra/evals under node, bench/mastra/llm) and ours are measured in the same run,
against the same scripted judge, tokens counted with cl100k (bench/judge_catalogue.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
from bench.judge_catalogue import MASTRA_DIR, Case, cases, score_alone, score_mastra

from ..judge_server import JudgeServer, judge_server

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture(scope="module")
def mastra() -> None:
    """Mastra's scorers, installed from the lock file the first time (the npm registry)."""
    assert shutil.which("node") and shutil.which("npm"), "node and npm are needed to run Mastra's scorers"
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "evals").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=MASTRA_DIR, check=True, timeout=600)


@pytest.fixture(scope="module")
def server() -> Iterator[JudgeServer]:
    with judge_server() as running:
        yield running


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.name)
def test_one_call_costs_at_most_half_the_tokens_of_mastras_scorer(
    mastra: Any, server: JudgeServer, case: Case
) -> None:
    _, ours = score_alone(server, case)
    _, theirs, problem = score_mastra(server, case)
    assert not problem, problem
    assert ours.calls == 1
    assert ours.input_tokens + ours.output_tokens <= 0.5 * (theirs.input_tokens + theirs.output_tokens)
