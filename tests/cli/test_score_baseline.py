"""`otel-scorers score --summary-out / --baseline`: a CI run compared with the last good one,
through the real command, on traces a generator writes knowing how many runs pass: a real drop
fails, noise passes, a changed evaluator version is reported instead of compared, and the
intervals are Newcombe's, checked against his published worked examples."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.cli.score_baseline import ScorerSummary, compare, newcombe, read_summary
from otel_scorers.runs.trace_writer import write_traces
from tests.cli.test_score_gate import run_cli

CONFIG = "scorers:\n  - type: includes\n    args: {expected: %s}\n"


def traces(path: Path, runs: int, passing: int) -> Path:
    """`runs` agent runs through a real tracer, the first `passing` of them answering "sunny"."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for number in range(runs):
        answer = "It is sunny." if number < passing else "It is raining."
        message = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.output.messages": message,
        }
        with tracer.start_as_current_span("invoke_agent weather", attributes=attributes):
            pass
    provider.shutdown()
    write_traces(path, exporter.get_finished_spans())
    return path


def config(tmp_path: Path, expected: str = "sunny") -> str:
    path = tmp_path / f"scorers-{expected}.yaml"
    path.write_text(CONFIG % expected)
    return str(path)


def baseline(tmp_path: Path, runs: int, passing: int, expected: str = "sunny") -> str:
    summary = tmp_path / "main-summary.json"
    result = run_cli(
        "score", str(traces(tmp_path / "main.json", runs, passing)), "-c", config(tmp_path, expected),
        "--summary-out", str(summary),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return str(summary)


@pytest.mark.parametrize(
    ("counts", "interval"),
    [
        # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10.
        ((56, 70, 48, 80), (0.0524, 0.3339)),
        ((9, 10, 3, 10), (0.1705, 0.8090)),
        ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ],
)
def test_the_pass_rate_interval_is_newcombe_s_hybrid_score_interval(
    counts: tuple[int, int, int, int], interval: tuple[float, float]
) -> None:
    low, high = newcombe(*counts, 0.95)
    assert low == pytest.approx(interval[0], abs=5e-5) and high == pytest.approx(interval[1], abs=5e-5)


def test_a_five_point_drop_on_400_runs_fails_the_build(tmp_path: Path) -> None:
    summary = baseline(tmp_path, 400, 360)  # 90 % on the main branch
    junit = tmp_path / "scores.xml"
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 400, 340)), "-c", config(tmp_path),
        "--baseline", summary, "--junit-xml", str(junit),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("includes  pass_rate")]
    assert "pass_rate  0.900     0.850  -0.050" in line and "FAIL" in line
    assert "otel-scorers: regression: includes pass_rate 0.900 -> 0.850" in result.stderr
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    failure = cases["includes vs baseline"].find("failure")
    assert failure is not None and failure.get("type") == "regression"
    assert cases["includes"].find("failure") is None  # the scorer's own case: no gate of its own


def test_a_one_point_drop_on_40_runs_passes_as_noise_even_without_a_margin(tmp_path: Path) -> None:
    summary = baseline(tmp_path, 200, 177)  # 88.5 %
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 40, 35)), "-c", config(tmp_path),  # 87.5 %
        "--baseline", summary, "--baseline-margin", "0",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "worse by more than 0, within noise at 0.95: ok" in result.stderr


def test_a_changed_evaluator_version_is_reported_not_compared(tmp_path: Path) -> None:
    summary = baseline(tmp_path, 400, 400)
    junit = tmp_path / "scores.xml"
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 400, 0)), "-c", config(tmp_path, "sun"),
        "--baseline", summary, "--junit-xml", str(junit),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "evaluator version changed (" in result.stderr and "): not compared" in result.stderr
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    skipped = cases["includes vs baseline"].find("skipped")
    assert skipped is not None and "evaluator version changed" in (skipped.get("message") or "")


def test_fail_under_keeps_working_beside_the_baseline(tmp_path: Path) -> None:
    summary = baseline(tmp_path, 100, 80)
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 100, 80)), "-c", config(tmp_path),
        "--baseline", summary, "--fail-under", "includes:pass_rate=0.9",
    )  # fmt: skip
    assert result.returncode == 1
    assert "no worse than the margin: ok" in result.stderr
    assert "gate failed: includes pass_rate 0.800 < 0.9" in result.stderr


def test_the_summary_file_holds_what_the_comparison_needs(tmp_path: Path) -> None:
    written = read_summary(Path(baseline(tmp_path, 10, 7)))
    (includes,) = written.values()
    assert (includes.scored, includes.passed, includes.failed, includes.valued) == (10, 7, 3, 10)
    assert includes.mean == pytest.approx(0.7) and includes.variance == pytest.approx(0.7 * 0.3 * 10 / 9)
    assert includes.evaluator_version is not None and len(includes.evaluator_version) == 12


def test_a_bad_baseline_file_is_named_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "summary.json"
    bad.write_text('{"scorers": {}}')
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 2, 1)), "-c", config(tmp_path), "--baseline", str(bad)
    )
    assert (
        result.returncode == 2
        and f"the baseline {bad} is not a summary written by score --summary-out" in result.stderr
    )


def test_means_are_compared_with_welch_s_interval_and_a_lower_is_better_scorer_s_direction() -> None:
    def summary(mean: float, variance: float, worse_when_higher: bool = False) -> ScorerSummary:
        return ScorerSummary(400, 400, mean, variance, 0, 0, "v1", worse_when_higher)

    (dropped,) = compare({"relevancy": summary(0.70, 0.04)}, {"relevancy": summary(0.75, 0.04)})
    # z(0.975) * sqrt(0.04/400 + 0.04/400) = 1.95996 * 0.014142 = 0.02772
    assert dropped.failed and dropped.high == pytest.approx(-0.05 + 0.02772, abs=1e-4)
    (rose,) = compare({"toxicity": summary(0.30, 0.04, True)}, {"toxicity": summary(0.25, 0.04, True)})
    assert rose.failed and rose.statistic == "mean"
    (fell,) = compare({"toxicity": summary(0.20, 0.04, True)}, {"toxicity": summary(0.25, 0.04, True)})
    assert not fell.failed


def test_the_docs_show_what_the_baseline_gate_prints(tmp_path: Path) -> None:
    """docs/ci.md's example: 400 runs at 90 % on the main branch, 400 at 85 % on the pull request,
    the configuration one `includes` check."""
    docs = (Path(__file__).parent.parent.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = docs.split("$ otel-scorers score pr-traces.jsonl", 1)[1].split("```", 1)[0]
    command, _, rest = shown.partition("> scores.jsonl\n")
    output, _, exit_line = rest.partition("$ echo $?\n")
    traces(tmp_path / "main-traces.jsonl", 400, 360)
    traces(tmp_path / "pr-traces.jsonl", 400, 340)
    (tmp_path / "scorers.yaml").write_text(CONFIG % "sunny")
    first = run_cli(
        "score", "main-traces.jsonl", "-c", "scorers.yaml", "--summary-out", "summary.json", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    result = run_cli("score", "pr-traces.jsonl", *command.split(), cwd=tmp_path)
    assert result.returncode == int(exit_line.strip())
    normalise = re.compile(r" in \d+\.\ds$")
    assert [normalise.sub("", line) for line in result.stderr.splitlines()] == [
        normalise.sub("", line) for line in output.splitlines()
    ]


def test_a_mean_of_one_run_a_side_is_not_compared() -> None:
    one = ScorerSummary(1, 1, 0.9, None, 0, 0, "v1")
    (comparison,) = compare({"relevancy": ScorerSummary(1, 1, 0.1, None, 0, 0, "v1")}, {"relevancy": one})
    assert comparison.verdict == "not_compared" and "too few scored runs" in comparison.note


def _crafted(path: Path, change: dict[str, object]) -> Path:
    """The baseline at `path` with its scorer's fields changed (written by Python's `json`, which
    spells NaN and infinities as JavaScript does)."""
    document = json.loads(path.read_text())
    (entry,) = document["scorers"].values()
    entry.update(change)
    crafted = path.with_name("crafted.json")
    crafted.write_text(json.dumps(document))
    return crafted


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"pass": 0, "fail": 0, "mean": float("nan")}, "scorers.includes.mean"),
        ({"pass": 0, "fail": 0, "mean": float("-inf")}, "scorers.includes.mean"),
        ({"pass": 0, "fail": 0, "variance": 1e308}, "scorers.includes.variance"),
        ({"variance": -0.5}, "scorers.includes.variance"),
        ({"scored": 1e308}, "scorers.includes.scored"),
        ({"pass": -3}, "scorers.includes.pass"),
        ({"pass": 40, "fail": 40}, "scorers.includes.pass"),
        ({"valued": 1000}, "scorers.includes.valued"),
    ],
)
def test_a_crafted_baseline_cannot_hide_a_regression(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    good = Path(baseline(tmp_path, 40, 36))  # 90%, today 70%: a regression, as the test below shows
    today = str(traces(tmp_path / "pr.json", 40, 28))
    result = run_cli("score", today, "-c", config(tmp_path), "--baseline", str(_crafted(good, change)))
    assert result.returncode == 2, result.stderr
    assert f"the baseline {good.with_name('crafted.json')}: {field} " in result.stderr
    assert "Traceback" not in result.stderr


def test_the_honest_baseline_of_the_crafted_ones_fails_today_s_run(tmp_path: Path) -> None:
    good = baseline(tmp_path, 40, 36)
    honest = run_cli(
        "score", str(traces(tmp_path / "pr.json", 40, 28)), "-c", config(tmp_path), "--baseline", good
    )
    assert honest.returncode == 1 and "regression: includes" in honest.stderr


def test_a_deeply_nested_or_oversized_baseline_is_refused_without_reading_it(tmp_path: Path) -> None:
    from otel_scorers.cli.score_baseline import MAX_BASELINE_BYTES

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli(
        "score", str(traces(tmp_path / "pr.json", 2, 1)), "-c", config(tmp_path), "--baseline", str(deep)
    )
    assert result.returncode == 2 and f"the baseline {deep} nests too deep" in result.stderr
    assert "Traceback" not in result.stderr
    huge = tmp_path / "huge.json"
    with huge.open("wb") as file:  # sparse: one byte more than the bound, no disk used
        file.truncate(MAX_BASELINE_BYTES + 1)
    with pytest.raises(ValueError, match=f"is {MAX_BASELINE_BYTES + 1:,} bytes, more than the"):
        read_summary(huge)


def test_a_comparison_without_a_finite_interval_fails_the_gate() -> None:
    baseline_side = ScorerSummary(40, 40, 0.9, 0.09, 0, 0, "v")
    # Today's values summed past a float's range: its variance is infinite.
    today = ScorerSummary(40, 40, 0.7, math.inf, 0, 0, "v")
    (comparison,) = compare({"s": today}, {"s": baseline_side})
    assert comparison.verdict == "incomparable" and comparison.failed
