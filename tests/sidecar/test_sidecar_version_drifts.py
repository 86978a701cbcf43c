"""Over real OTLP on loopback: traces whose kind values carry a version (`AGENT.v2`,
`bench/drifts.py`'s `kind-version`) are scored by the sidecar as `runs` reads them from the
drifted files. The sidecar's screen of received spans (`sidecar/span_marks.py`) says a run opens
from a reader's marker or from an inferred vocabulary's kind key as the kind without its version
does: the traces are ready once quiet, as their plain copies are, rather than at `max_wait_s`
(scored late, or let go as holding no run span)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.drifts import drifted
from otel_scorers import conventions
from otel_scorers.otlp.decode import parse_json_request
from tests.otlp_capture import OtlpCapture

# The output the sidecar is given keeps its runs in `EMITTED`, shared with the inferred runs' test.
from tests.sidecar.test_sidecar_inferred_runs import (
    EMITTED,
    by_run,
    collected_runs,
    differences,
    read_from_files,
    scenarios,
)
from tests.sidecar_harness import RunningSidecar, send_grpc, sidecar_document
from tests.waiting import wait_until

DRIFT = "kind-version"
#: Far past the test's wait: a trace is scored only if a span of it says a run opens.
MAX_WAIT_S = 120.0


@pytest.fixture(autouse=True)
def shipped_descriptions() -> Iterator[None]:
    EMITTED.clear()
    yield
    conventions.use_descriptions(())
    EMITTED.clear()


@pytest.fixture
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@contextmanager
def collecting_sidecar(endpoint: str, withheld: bool) -> Iterator[RunningSidecar]:
    """A sidecar scoring in this process, its runs given to the inferred runs' test's `CollectedRuns`; with `withheld`, the
    shipped descriptions are withheld once it started (it sets its configuration's first)."""
    document = sidecar_document(
        endpoint, None, scoring_process=False, decision_wait_s=0.1, max_wait_s=MAX_WAIT_S
    )
    document["outputs"] = [f"{collected_runs.__module__}:collected_runs"]
    with RunningSidecar(document) as sidecar:
        if withheld:
            conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
        yield sidecar


#: (corpus, whether the shipped descriptions are withheld): OpenInference's `AGENT` marks smolagents'
#: runs (a reader's marker); Langfuse's own `agent` kind, with its description withheld, is a
#: vocabulary inferred from its kind key.
CASES = [("smolagents", False), ("langfuse", True)]


@pytest.mark.parametrize(("corpus", "withheld"), CASES)
def test_a_drifted_trace_is_scored_once_quiet_as_runs_reads_it_from_the_file(
    capture: OtlpCapture, corpus: str, withheld: bool, tmp_path: Path
) -> None:
    if withheld:
        conventions.use_descriptions((), withheld=conventions.SHIPPED_DESCRIPTION_NAMES)
    paths = [drifted(path, DRIFT, tmp_path)[0] for path in scenarios(corpus)]
    expected = by_run(read_from_files(paths))
    assert expected
    with collecting_sidecar(capture.endpoint, withheld) as sidecar:
        for path in paths:
            send_grpc(sidecar.grpc_endpoint, parse_json_request(path.read_bytes()).SerializeToString())
        wait_until(lambda: len(EMITTED) >= len(expected), 30, f"the {len(expected)} runs of {corpus} scored")
        time.sleep(0.5)  # past decision_wait_s: nothing more comes
    found = differences(by_run(EMITTED), expected)
    assert not found, "\n".join(found)
