"""MLflow is known by what it writes, not by the name of its tracer: every learned MLflow fixture
(tests/fixtures/traces/mlflow*), its MLflow scopes (`mlflow.tracing.provider`,
`mlflow.haystack.autolog`) renamed to one no reader knows, yields the runs it yields as captured,
read by the keys MLflow writes on every span it records (`mlflow.spanType`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runs.fixture_runs import runs_in
from tests.runs.test_framework_facts_any_instrumentation import TRACES, rewritten, scenarios, view

MLFLOW_CORPORA = sorted(path.name for path in TRACES.glob("mlflow*") if path.is_dir())


def renamed_mlflow_scope(scope: dict[str, Any], span: dict[str, Any]) -> None:
    """MLflow's tracer renamed (a fork, a wrapper, a new version); other libraries' scopes kept."""
    if scope.get("name", "").startswith("mlflow"):
        scope["name"] = "acme.tracer"


@pytest.mark.parametrize("corpus", MLFLOW_CORPORA)
def test_an_mlflow_trace_under_a_renamed_tracer_yields_the_runs_it_yields_under_mlflows_scope(
    corpus: str, tmp_path: Path
) -> None:
    read = 0
    for scenario in scenarios(corpus):
        seen = [view(run) for run in runs_in(TRACES / corpus / f"{scenario}.json")]
        renamed = rewritten(corpus, scenario, renamed_mlflow_scope, tmp_path)
        assert [view(run) for run in runs_in(renamed)] == seen, scenario
        read += len(seen)
    assert read, corpus
