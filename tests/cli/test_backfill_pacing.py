"""Budget-paced sampling in a backfill (`otel-scorers score`) paces by the traces' own times, so a
file of yesterday's ten hours is judged at the budget's pace over those ten hours, however fast
it is read; the summary shows how many runs each binding sampled out and says what pacing did.
A budget in dollars on a model nobody prices is refused, as the judge's own cost cap is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.errors import ConfigError
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.scorers import answer_relevancy
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.selection.binding import bind

from ..judge_server import ALL_RELEVANT, judge_server

HOUR_NS = 3_600 * 10**9


def _runs_over_hours(path: Path, runs: int, hours: float) -> Path:
    """`runs` agent runs (each with its question and answer) spread evenly over `hours` of trace time."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    start = 1_780_000_000 * 10**9
    for n in range(runs):
        at = start + int(n * hours * HOUR_NS / runs)
        span = tracer.start_span(
            "invoke_agent weather",
            start_time=at,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "weather",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": f"Weather {n}?"}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "18°C"}]}]
                ),
            },
        )
        span.end(end_time=at + 10**9)
    write_traces(path, exporter.get_finished_spans())
    return path


def test_a_backfill_paces_by_the_traces_own_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs, hours, per_hour = 1200, 2.0, 60  # a run every 6 s
    traces = _runs_over_hours(tmp_path / "traces.jsonl", runs, hours)
    with judge_server(lambda _body: ALL_RELEVANT) as server:
        config = tmp_path / "scorers.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "judge": {"model": "openai/judge", "api_base": server.url, "api_key": "none"},
                    "scorers": [{"type": "answer_relevancy", "sampling": {"calls_per_hour": per_hour}}],
                }
            )
        )
        assert main(["score", str(traces), "-c", str(config)]) == 0
    err = capsys.readouterr().err
    expected = per_hour * hours  # the budget over the hours the traces span
    assert 0.8 * expected <= server.calls <= 1.2 * expected, (server.calls, err)
    header, row = [line.split() for line in err.splitlines()[1:3]]
    assert header[:8] == ["scorer", "scored", "mean", "labels", "skipped", "errors", "sampled", "out"]
    assert row[0] == "answer_relevancy"
    assert int(row[1]) == server.calls and int(row[6]) == runs - server.calls
    assert (
        f"otel-scorers: answer_relevancy is budget-paced (calls_per_hour: {per_hour}), paced by the traces' "
        f"own times: it judged {server.calls} runs and sampled out {runs - server.calls}"
    ) in err


def test_usd_per_hour_on_a_model_nobody_prices_is_refused_as_the_judges_cost_cap_is() -> None:
    judge = {"model": "openai/nobody-prices-this", "api_base": "http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigError) as caught:
        parse_config(
            {"judge": judge, "scorers": [{"type": "answer_relevancy", "sampling": {"usd_per_hour": 2}}]}
        )
    assert "scorers[0].sampling.usd_per_hour" in str(caught.value)
    assert "litellm has no price for openai/nobody-prices-this" in str(caught.value)
    with pytest.raises(ConfigError) as cap:
        parse_config(
            {"judge": {**judge, "cost_budget_usd_per_hour": 2}, "scorers": [{"type": "answer_relevancy"}]}
        )
    same_rule = "so a cost budget could not count its calls"
    assert same_rule in str(caught.value) and same_rule in str(cap.value)

    with pytest.raises(ConfigError, match="litellm has no price"):
        bind(answer_relevancy(judge=Judge(JudgeConfig(**judge))), sampling={"usd_per_hour": 2})
    priced = JudgeConfig(**judge, prices={"input_usd_per_million": 1, "output_usd_per_million": 2})
    assert bind(answer_relevancy(judge=Judge(priced)), sampling={"usd_per_hour": 2}).paced is not None
