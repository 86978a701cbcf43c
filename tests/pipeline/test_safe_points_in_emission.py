"""The engine gives the GIL up inside a run's emission, not only around it: before each score's
evaluation span and event through the SDK's providers, before each score written afresh as OTLP
and after every eight written from remembered parts, and between the counts and measurements
recorded as a metrics batch ends; where no host thread shares the process, never."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from otel_scorers import AgentRun, bind, checks
from otel_scorers.emission import standard_emission
from otel_scorers.emission.metrics_output import _RUNS_PER_METRICS_BATCH
from otel_scorers.emission.otlp_output import _REMEMBERED_PER_SAFE_POINT
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.otlp.score_export import OtlpScoreExport
from otel_scorers.pipeline import scoring_pipeline
from otel_scorers.pipeline.scoring_pipeline import HostYield, ScoredRun, ScoringPipeline
from otel_scorers.selection.binding import Binding
from tests.conftest import Telemetry
from tests.otlp_capture import OtlpCapture

#: The documented stretch of work between two releases (docs/performance.md).
INTERVAL_S = 0.0005
SCORES = 20
RUN = AgentRun(0x1, 0xA, "weather", "weather in Paris?", "It is sunny in Paris.")
MANY_CHECKS = [bind(checks.includes("sunny"), name=f"includes_{index}") for index in range(SCORES)]


class SlowWork:
    """A clock under which every piece of work between two safe points takes over an interval:
    each safe point after a stretch's first gives the GIL up."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.5 * INTERVAL_S  # more than one interval, whatever the rounding
        return self.now


class Job:
    def __init__(self, runs: Sequence[AgentRun]) -> None:
        self.runs = runs

    def build(self) -> Sequence[AgentRun]:
        return self.runs

    def finished(self, results: Sequence[ScoredRun]) -> None:
        pass

    def dropped(self, reason: str) -> None:
        pass


def _pipeline(
    telemetry: Telemetry,
    monkeypatch: pytest.MonkeyPatch,
    released: list[int],
    bindings: list[Binding],
    yield_to_host: bool = True,
    export: OtlpScoreExport | None = None,
) -> ScoringPipeline:
    """A pipeline whose evaluation spans are exported as they end (or written as OTLP for
    `export`), and whose releases note how many had ended at that moment."""
    telemetry.export_spans_directly()
    monkeypatch.setattr(
        scoring_pipeline,
        "HostYield",
        lambda: HostYield(SlowWork(), lambda _: released.append(len(telemetry.finished_spans()))),
    )
    metrics = PipelineMetrics(telemetry.meter_provider)
    emission = standard_emission(
        metrics,
        tracer_provider=telemetry.tracer_provider,
        logger_provider=telemetry.logger_provider,
        export=export,
    )
    # Always more jobs queued: no burst ends, so what the batch holds waits for its 64th run.
    return ScoringPipeline(bindings, emission, metrics, yield_to_host=yield_to_host, queued=lambda: 1)


def test_the_gil_is_given_up_between_the_evaluation_spans_of_one_run(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    pipeline = _pipeline(telemetry, monkeypatch, released, MANY_CHECKS)
    pipeline.do_now(Job([RUN]), lambda: None)
    assert len(telemetry.finished_spans()) == SCORES
    # A release before each span but the first, while the run's other spans were still unwritten.
    assert set(range(1, SCORES)) <= set(released)


def test_the_gil_is_given_up_while_a_metrics_batch_is_recorded(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    # A continuous score (similarity) makes each run's counts a plan of its own, counted and
    # measured when the batch of runs ends, with the last run's emission.
    pipeline = _pipeline(telemetry, monkeypatch, released, [bind(checks.similarity("It is sunny in Paris"))])
    per_run: list[int] = []
    for _ in range(_RUNS_PER_METRICS_BATCH):
        before = len(released)
        pipeline.do_now(Job([RUN]), lambda: None)
        per_run.append(len(released) - before)
    # A plain run (after the first, which starts the stretch): a release before it, after its build, before its span and after its
    # emission. The run that ends the batch: besides, one per 8 plans counted (64 runs' plans)
    # and one per 8 histogram measurements (64 values, besides the durations measured).
    assert per_run[1:-1] == [4] * (_RUNS_PER_METRICS_BATCH - 2), per_run
    assert per_run[-1] >= 4 + 2 * _RUNS_PER_METRICS_BATCH // 8, per_run


def test_where_no_host_thread_shares_the_process_emission_never_gives_the_gil_up(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    pipeline = _pipeline(telemetry, monkeypatch, released, MANY_CHECKS, yield_to_host=False)
    for _ in range(_RUNS_PER_METRICS_BATCH):
        pipeline.do_now(Job([RUN]), lambda: None)
    assert len(telemetry.finished_spans()) == SCORES * _RUNS_PER_METRICS_BATCH
    assert released == []


def test_the_gil_is_given_up_between_the_scores_written_as_otlp(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    with OtlpCapture() as capture:
        export = OtlpScoreExport(capture.endpoint)
        pipeline = _pipeline(telemetry, monkeypatch, released, MANY_CHECKS, export=export)
        per_run = []
        for _ in range(2):
            before = len(released)
            pipeline.do_now(Job([RUN]), lambda: None)
            per_run.append(len(released) - before)
        assert export.shutdown(10)
        sent = sum(
            len(scope.spans)
            for request in capture.traces
            for r in request.resource_spans
            for scope in r.scope_spans
        )
    assert sent == 2 * SCORES
    # The first run: after its build, before each score's parts written afresh, after its
    # emission (its first safe point, before the job, only starts the stretch). The second, whose
    # verdicts are remembered: before the job, after its build, one per eight scores, after it.
    assert per_run == [1 + SCORES + 1, 2 + SCORES // _REMEMBERED_PER_SAFE_POINT + 1], per_run
