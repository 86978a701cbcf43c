"""`ScoringPipeline` on its own, with no runner: a job's runs are built, heard by `on_runs`,
scored in the lanes their scorers declare and emitted; the judge lane is bounded, and a job
whose spans cannot be built is dropped and counted, never raised."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import warnings
from collections.abc import Sequence
from typing import Any

from otel_scorers import AgentRun, bind, checks, scorer
from otel_scorers.emission import standard_emission
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import Score
from otel_scorers.pipeline.scoring_pipeline import ScoredRun, ScoringPipeline, score_run, score_run_now
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.scorers.quick_check import Check
from tests.conftest import Telemetry
from tests.spans import span

RUNS = (
    AgentRun(0x1, 0xA, "weather", "weather in Paris?", "It is sunny."),
    AgentRun(0x2, 0xB, "weather", "weather in Oslo?", "Sorry, I cannot tell."),
)


class Job:
    def __init__(self, runs: Sequence[AgentRun] | Exception) -> None:
        self.runs = runs
        self.results: list[ScoredRun] | None = None
        self.why: str | None = None

    def build(self) -> Sequence[AgentRun]:
        if isinstance(self.runs, Exception):
            raise self.runs
        return self.runs

    def finished(self, results: Sequence[ScoredRun]) -> None:
        self.results = list(results)

    def dropped(self, reason: str) -> None:
        self.why = reason


def _pipeline(telemetry: Telemetry, bindings: list, out: io.StringIO, **options: object) -> ScoringPipeline:  # type: ignore[type-arg]
    metrics = PipelineMetrics(telemetry.meter_provider)
    emission = standard_emission(metrics, tracer_provider=telemetry.tracer_provider, console=out)
    return ScoringPipeline(bindings, emission, metrics, yield_to_host=False, **options)  # type: ignore[arg-type]


async def _do(pipeline: ScoringPipeline, job: Job) -> None:
    finished = asyncio.Event()
    await pipeline.do(job, finished.set)
    await asyncio.wait_for(finished.wait(), 60)


def test_a_jobs_runs_are_heard_scored_and_emitted_and_the_job_told(telemetry: Telemetry) -> None:
    heard: list[AgentRun] = []
    out = io.StringIO()
    pipeline = _pipeline(
        telemetry, [bind(checks.includes("sunny")), bind(checks.excludes("sorry"))], out, on_runs=heard.extend
    )
    job = Job(RUNS)
    asyncio.run(_do(pipeline, job))
    assert heard == list(RUNS)
    assert job.results is not None
    values = {(run.trace_id, score.scorer): score.value for run, scores in job.results for score in scores}
    # As docs/checks.md says: includes/excludes are case-insensitive substring checks.
    assert values == {(1, "includes"): 1.0, (1, "excludes"): 1.0, (2, "includes"): 0.0, (2, "excludes"): 0.0}
    assert len(out.getvalue().splitlines()) == 4  # one console line per score, through the Emission
    assert telemetry.counter("otel_scorers.runs", otel_scorers__outcome="assembled") == 2


def test_the_judge_lane_takes_at_most_its_bound_and_counts_the_rest(telemetry: Telemetry) -> None:
    async def main() -> list[Job]:
        gate = asyncio.Event()

        async def slow_judge(run: AgentRun) -> float:
            await gate.wait()
            return 1.0

        pipeline = _pipeline(
            telemetry, [bind(slow_judge, name="judged", uses_judge=True)], io.StringIO(), max_judge_runs=1
        )
        jobs = [Job([run]) for run in RUNS]
        done = [asyncio.Event() for _ in jobs]
        for job, event in zip(jobs, done, strict=True):
            await pipeline.do(job, event.set)
        assert pipeline.in_flight() == 1  # the first run waits for its judge; the second was turned away
        gate.set()
        await asyncio.wait_for(asyncio.gather(*(event.wait() for event in done)), 60)
        return jobs

    first, second = asyncio.run(main())
    assert first.results is not None and [s.value for _, scores in first.results for s in scores] == [1.0]
    assert second.results is not None and [s for _, scores in second.results for s in scores] == []
    assert telemetry.counter("otel_scorers.evaluations", otel_scorers__outcome="judge_lane_full") == 1


def test_a_job_that_cannot_be_built_is_counted_and_finished_with_nothing(telemetry: Telemetry) -> None:
    out = io.StringIO()
    pipeline = _pipeline(telemetry, [bind(checks.includes("sunny"))], out)
    job = Job(ValueError("bad spans"))
    asyncio.run(_do(pipeline, job))
    assert job.results == [] and out.getvalue() == ""
    assert telemetry.counter("otel_scorers.runs", otel_scorers__reason="build_error") == 1


class Unreadable(dict[str, Any]):
    """A model span's attributes whose messages cannot be read."""

    def get(self, key: str, default: Any = None) -> Any:
        if key.endswith(".messages"):
            raise ValueError("unreadable messages")
        return super().get(key, default)


def test_a_job_whose_run_cannot_be_read_is_counted_and_finished_with_nothing(telemetry: Telemetry) -> None:
    # A built run is read from its spans when first read: one that cannot be is a build error,
    # as a trace that cannot be built.
    run = span("invoke_agent weather", gen_ai__operation__name="invoke_agent", gen_ai__agent__name="weather")
    model = span("chat m", run, gen_ai__operation__name="chat", gen_ai__output__messages="[]")
    model.attributes = Unreadable(model.attributes)
    out = io.StringIO()
    pipeline = _pipeline(telemetry, [bind(checks.includes("sunny"))], out)
    job = Job(build_runs([run, model]))
    asyncio.run(_do(pipeline, job))
    assert job.results == [] and out.getvalue() == ""
    assert telemetry.counter("otel_scorers.runs", otel_scorers__reason="build_error") == 1


def test_scores_cancelled_before_they_start_leave_no_coroutine_never_awaited() -> None:
    # A shutdown cancels the scores still waiting, some before their task has run at all.
    @scorer
    async def slow(run: AgentRun) -> float:
        await asyncio.sleep(10)
        return 1.0

    @scorer
    async def slower(run: AgentRun) -> float:
        await asyncio.sleep(20)
        return 1.0

    async def cancelled_at_once() -> None:
        waiting = asyncio.ensure_future(score_run([bind(slow), bind(slower)], RUNS[0]))
        await asyncio.sleep(0)  # the scores are handed out as tasks, none of which has run yet
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(cancelled_at_once())
        gc.collect()
    assert [str(warning.message) for warning in caught if "never awaited" in str(warning.message)] == []


def test_a_checks_score_is_its_bindings_and_a_hand_made_checks_shared_score_is_left_alone() -> None:
    # A check of this package makes a score for each call: the binding's name, label and timing
    # go into it. A hand-made `Check` may hand back one score it keeps: the binding's is a copy.
    shared = Score("kept", 1.0, None, "the same object every call")
    hand_made = bind(Check("kept", lambda run: shared), name="mine")
    own = bind(checks.includes("sunny"), name="says-sunny")
    first, second = score_run_now([hand_made, own], RUNS[0])
    assert (shared.scorer, shared.label, shared.duration_s, shared.start_ns) == ("kept", None, 0.0, 0)
    assert first is not shared
    assert (first.scorer, first.value, first.label, first.binary) == ("mine", 1.0, "pass", True)
    assert (second.scorer, second.value, second.label) == ("says-sunny", 1.0, "pass")
    assert second.binary and second.evaluator_version == own.evaluator_version is not None
    assert second.duration_s > 0 and second.start_ns > 0
