"""`MetricsOutput` counts what every run's scores say, whether runs of the same verdicts share
what they add (binary results; continuous ones but for their values, summed run by run) or each
run's is worked out afresh (an error, a judge's usage): read back from the SDK as a metric reader
collects them."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_scorers.emission.metrics_output import MetricsOutput
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.model import AgentRun, JudgeUsage, Score, ScoreError

Points = dict[tuple[str, tuple[tuple[str, Any], ...]], float]


def collected(reader: InMemoryMetricReader) -> Points:
    """Sums and histogram counts by metric name and attribute set."""
    data = reader.get_metrics_data()
    assert data is not None
    found: Points = {}
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    found[metric.name, tuple(sorted(point.attributes.items()))] = (
                        point.count if value is None else value
                    )
    return found


def run(number: int, agent: str = "weather") -> AgentRun:
    return AgentRun(0x1000 + number, 0x20 + number, agent, "in", "out")


def passed(scorer: str, probability: float | None = None) -> Score:
    return Score(scorer, 1.0, "pass", binary=True, sampling_probability=probability)


def test_runs_of_the_same_binary_verdicts_are_each_counted() -> None:
    reader = InMemoryMetricReader()
    output = MetricsOutput(PipelineMetrics(MeterProvider(metric_readers=[reader])))
    for number in range(100):  # more than a batch of runs
        output.emit(run(number), [passed("says-sunny"), Score("no-apology", skipped="no output")])
    for number in range(3):
        output.emit(run(number, "travel"), [passed("says-sunny")])
    found = collected(reader)
    sunny = ("gen_ai.evaluation.name", "says-sunny")
    assert (
        found[
            "gen_ai.evaluation.results",
            (("gen_ai.agent.name", "weather"), sunny, ("gen_ai.evaluation.score.label", "pass")),
        ]
        == 100
    )
    assert (
        found[
            "gen_ai.evaluation.results",
            (("gen_ai.agent.name", "travel"), sunny, ("gen_ai.evaluation.score.label", "pass")),
        ]
        == 3
    )
    assert found["otel_scorers.evaluations", (sunny, ("otel_scorers.outcome", "scored"))] == 103
    apology = ("gen_ai.evaluation.name", "no-apology")
    assert found["otel_scorers.evaluations", (apology, ("otel_scorers.outcome", "skipped"))] == 100
    assert not any(name == "gen_ai.evaluation.score" for name, _ in found), "binary results are not measured"


def test_continuous_values_errors_and_sampled_results_are_counted_run_by_run() -> None:
    reader = InMemoryMetricReader()
    output = MetricsOutput(PipelineMetrics(MeterProvider(metric_readers=[reader])))
    for number in range(10):
        output.emit(
            run(number),
            [
                Score("similarity", 0.1 * number),
                Score("judge", 1.0, "pass", binary=True, usage=JudgeUsage("m", 1, 10, 2)),
                Score("broken", error=ScoreError("timeout", "slow")),
                passed("sampled", probability=0.25),
            ],
        )
    found = collected(reader)
    similarity = ("gen_ai.evaluation.name", "similarity")
    assert found["gen_ai.evaluation.score", (("gen_ai.agent.name", "weather"), similarity)] == 10
    assert found[
        "otel_scorers.estimate.weighted_score", (("gen_ai.agent.name", "weather"), similarity)
    ] == sum(0.1 * number for number in range(10))
    judge = ("gen_ai.evaluation.name", "judge")
    assert (
        found[
            "otel_scorers.judge.tokens",
            (judge, ("gen_ai.request.model", "m"), ("gen_ai.token.type", "input")),
        ]
        == 100
    )
    broken = ("gen_ai.evaluation.name", "broken")
    assert found["otel_scorers.evaluations", (broken, ("otel_scorers.outcome", "error"))] == 10
    assert found["otel_scorers.scorer.errors", (("error.type", "timeout"), broken)] == 10
    sampled = (
        ("gen_ai.agent.name", "weather"),
        ("gen_ai.evaluation.name", "sampled"),
        ("gen_ai.evaluation.score.label", "pass"),
    )
    assert found["gen_ai.evaluation.results", sampled] == 10
    assert found["otel_scorers.estimate.weight", sampled] == 40  # each result weighs 1 / 0.25


def test_sampled_continuous_values_are_weighted_run_by_run_across_batches() -> None:
    reader = InMemoryMetricReader()
    output = MetricsOutput(PipelineMetrics(MeterProvider(metric_readers=[reader])))
    values = [(number % 7) / 10 for number in range(150)]  # more than two batches of runs
    for number, value in enumerate(values):
        output.emit(
            run(number), [Score("similarity", value, "good", sampling_probability=0.5), passed("says-sunny")]
        )
    found = collected(reader)
    similarity = (
        ("gen_ai.agent.name", "weather"),
        ("gen_ai.evaluation.name", "similarity"),
        ("gen_ai.evaluation.score.label", "good"),
    )
    assert found["gen_ai.evaluation.results", similarity] == 150
    assert found["gen_ai.evaluation.score", similarity] == 150
    assert found["otel_scorers.estimate.weight", similarity] == 300  # each weighs 1 / 0.5
    assert abs(found["otel_scorers.estimate.weighted_score", similarity] - 2 * sum(values)) < 1e-9
    assert abs(found["otel_scorers.estimate.variance_score", similarity] - 2 * sum(values)) < 1e-9
    assert (
        abs(
            found["otel_scorers.estimate.variance_score_squared", similarity] - 2 * sum(v * v for v in values)
        )
        < 1e-9
    )


def test_a_quick_check_s_duration_is_measured_for_one_evaluation_in_sixteen_a_judge_s_for_each() -> None:
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
    metrics.time_sparsely(["says-sunny", "no-apology"])
    output = MetricsOutput(metrics)
    for number in range(100):
        output.emit(run(number), [passed("says-sunny"), passed("no-apology"), passed("relevancy")])
    found = collected(reader)

    def timed(scorer: str) -> float:
        return found["otel_scorers.scorer.duration", (("gen_ai.evaluation.name", scorer),)]

    # The 1st, 17th, ..., 97th of 100 evaluations (docs/emission.md: one in 16).
    assert timed("says-sunny") == timed("no-apology") == 7
    assert timed("relevancy") == 100


def test_a_quick_check_is_timed_by_its_own_evaluations_whatever_the_verdicts_around_it() -> None:
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics(MeterProvider(metric_readers=[reader]))
    metrics.time_sparsely(["says-sunny", "no-apology"])
    output = MetricsOutput(metrics)
    failed = Score("no-apology", 0.0, "fail", binary=True)
    for number in range(100):
        # Runs of three kinds, in runs of different lengths: the checks' evaluations are counted
        # each on its own, whichever kind of run they are in.
        kind = (number // 3 + number // 7) % 3
        scores = [passed("says-sunny"), passed("no-apology") if kind else failed]
        output.emit(run(number), scores if kind < 2 else scores[:1])
    found = collected(reader)

    def timed(scorer: str) -> float:
        return found["otel_scorers.scorer.duration", (("gen_ai.evaluation.name", scorer),)]

    # docs/emission.md: a quick check is timed on its first evaluation, then on one in 16.
    no_apology = sum(1 for number in range(100) if (number // 3 + number // 7) % 3 < 2)
    assert timed("says-sunny") == 7  # the 1st, 17th, ..., 97th of 100
    assert timed("no-apology") == (no_apology + 15) // 16
