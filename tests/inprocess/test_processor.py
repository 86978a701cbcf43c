"""ScoringSpanProcessor inside a real TracerProvider: what reaches the exporters, and what never
reaches the agent's thread."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import StatusCode

from otel_scorers import AgentRun, ScoringSpanProcessor, bind, checks, conventions, scorer
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import RunRecorder, Telemetry
from ..otlp_capture import OtlpCapture
from ..waiting import wait_until

PARIS = ScriptedRun(
    "What's the weather in Paris?", [("get_weather", {"city": "Paris"})], "Sunny, 21°C in Paris."
)
ATLANTIS = ScriptedRun("Weather in Atlantis?", [("get_weather", {"city": "Atlantis"})], "Sorry, no idea.")


def attach(
    telemetry: Telemetry, scorers: list[Any], hold: bool = False, **options: Any
) -> ScoringSpanProcessor:
    downstream = SimpleSpanProcessor(telemetry.spans) if hold else None
    processor = ScoringSpanProcessor(scorers, downstream=downstream, **telemetry.providers(), **options)
    telemetry.tracer_provider.add_span_processor(processor)
    if not hold:
        telemetry.export_spans_directly()
    return processor


def agent(telemetry: Telemetry) -> ExampleAgent:
    return ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("example-agent"))


def run_spans(telemetry: Telemetry) -> list[Any]:
    return [
        s
        for s in telemetry.finished_spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "invoke_agent"
    ]


def evaluation_spans(telemetry: Telemetry) -> list[Any]:
    return [s for s in telemetry.finished_spans() if s.instrumentation_scope.name == OWN_SCOPE]


def test_evaluation_spans_are_children_of_the_run_span(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors(), checks.includes("sunny")])
    agent(telemetry).run(PARIS)
    assert processor.force_flush(5000)

    (run_span,) = run_spans(telemetry)
    evaluations = {span.name: span for span in evaluation_spans(telemetry)}
    assert set(evaluations) == {"evaluate no_tool_errors", "evaluate includes"}
    for span in evaluations.values():
        assert span.context.trace_id == run_span.context.trace_id
        assert span.parent is not None and span.parent.span_id == run_span.context.span_id
        assert span.attributes["gen_ai.agent.name"] == "weather-agent"
        assert span.attributes["gen_ai.evaluation.score.value"] == 1.0
        assert span.attributes["gen_ai.evaluation.score.label"] == "pass"
        assert span.start_time >= run_span.end_time  # scored after the run ended, off its thread
    assert evaluations["evaluate includes"].attributes["gen_ai.evaluation.name"] == "includes"


def test_a_failing_checks_reason_reaches_its_span_and_event(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors(), checks.excludes("sorry")])
    agent(telemetry).run(ATLANTIS)
    assert processor.force_flush(5000)
    explanations = {
        span.name: span.attributes["gen_ai.evaluation.explanation"] for span in evaluation_spans(telemetry)
    }
    assert explanations["evaluate excludes"] == 'output contains "sorry"'
    assert explanations["evaluate no_tool_errors"].startswith("get_weather failed: ")
    assert "Atlantis" in explanations["evaluate no_tool_errors"]
    events = {
        event.log_record.attributes["gen_ai.evaluation.name"]: event.log_record.attributes
        for event in telemetry.events()
    }
    assert events["excludes"]["gen_ai.evaluation.explanation"] == 'output contains "sorry"'
    assert events["excludes"]["gen_ai.evaluation.score.label"] == "fail"


def test_evaluation_result_events_carry_the_run_span_context(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors()])
    agent(telemetry).run(ATLANTIS)
    processor.force_flush(5000)
    (run_span,) = run_spans(telemetry)
    (event,) = telemetry.events()
    record = event.log_record
    assert record.trace_id == run_span.context.trace_id
    assert record.span_id == run_span.context.span_id
    assert record.attributes["gen_ai.evaluation.name"] == "no_tool_errors"
    assert record.attributes["gen_ai.evaluation.score.value"] == 0.0
    assert record.attributes["gen_ai.evaluation.score.label"] == "fail"


def test_score_metrics(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors(), bind(checks.max_tool_calls(0), name="no-tools")])
    weather = agent(telemetry)
    weather.run(PARIS)
    weather.run(PARIS)
    weather.run(ATLANTIS)
    processor.force_flush(5000)
    results = "gen_ai.evaluation.results"
    assert (
        telemetry.counter(
            results, gen_ai__evaluation__name="no_tool_errors", gen_ai__evaluation__score__label="pass"
        )
        == 2
    )
    assert (
        telemetry.counter(
            results, gen_ai__evaluation__name="no_tool_errors", gen_ai__evaluation__score__label="fail"
        )
        == 1
    )
    assert (
        telemetry.counter(results, gen_ai__evaluation__name="no-tools", gen_ai__agent__name="weather-agent")
        == 3
    )
    assert telemetry.counter("otel_scorers.runs", otel_scorers__outcome="assembled") == 3
    assert telemetry.counter("otel_scorers.evaluations", otel_scorers__outcome="scored") == 6
    durations = telemetry.metric_points("otel_scorers.scorer.duration")
    # Quick checks are timed on their first run, then on one in 16.
    assert sum(point.count for point in durations) == 2


def test_a_binary_check_is_counted_not_measured_and_a_continuous_score_is_measured(
    telemetry: Telemetry,
) -> None:
    """Pass/fail results go to `gen_ai.evaluation.results` only; a continuous score also gets its
    `gen_ai.evaluation.score` histogram point, with an exemplar pointing at its run."""
    processor = attach(telemetry, [checks.no_tool_errors(), checks.similarity("Sunny, 21°C in Paris.")])
    weather = agent(telemetry)
    weather.run(PARIS)
    weather.run(PARIS)
    weather.run(ATLANTIS)
    processor.force_flush(5000)
    points = telemetry.metric_points("gen_ai.evaluation.score")
    measured = {point.attributes["gen_ai.evaluation.name"] for point in points}
    assert measured == {"similarity"}, "the binary check has no histogram point"
    assert sum(point.count for point in points) == 3
    # Paris's answer is the expected text (1.0, twice); Atlantis's "sorry,noidea." shares one
    # bigram ("y,") with "sunny,21°cinparis.": 2 x 1 / (12 + 17).
    assert sum(point.sum for point in points) == pytest.approx(2.0 + 2 / 29)
    assert any(point.exemplars for point in points)
    results = "gen_ai.evaluation.results"
    assert telemetry.counter(results, gen_ai__evaluation__name="no_tool_errors") == 3
    assert telemetry.counter(results, gen_ai__evaluation__name="similarity") == 3


def test_quick_checks_are_timed_on_one_run_in_16_and_other_scorers_on_every_run(
    telemetry: Telemetry,
) -> None:
    @scorer
    async def answered(run: AgentRun) -> float:
        return 1.0 if run.output else 0.0

    processor = attach(telemetry, [checks.no_tool_errors(), answered])
    weather = agent(telemetry)
    for _ in range(40):
        weather.run(PARIS)
    processor.force_flush(5000)
    assert telemetry.counter("otel_scorers.evaluations", otel_scorers__outcome="scored") == 80
    timed = {
        point.attributes["gen_ai.evaluation.name"]: point.count
        for point in telemetry.metric_points("otel_scorers.scorer.duration")
    }
    assert timed == {"no_tool_errors": 3, "answered": 40}  # runs 1, 17 and 33 for the check


def test_hold_mode_puts_scores_on_the_exported_run_span(telemetry: Telemetry) -> None:
    processor = attach(
        telemetry, [checks.no_tool_errors(), bind(checks.includes("sunny"), name="sunny")], hold=True
    )
    agent(telemetry).run(PARIS)
    processor.force_flush(5000)
    spans = telemetry.finished_spans()
    span_ids = [span.context.span_id for span in spans]
    assert len(set(span_ids)) == len(span_ids), "every span reaches downstream exactly once"
    names = sorted(span.name for span in spans)
    assert names == [
        "chat scripted-model-1",
        "chat scripted-model-1",
        "evaluate no_tool_errors",
        "evaluate sunny",
        "execute_tool get_weather",
        "invoke_agent weather-agent",
    ]
    (run_span,) = run_spans(telemetry)
    assert run_span.attributes["otel_scorers.score.no_tool_errors"] == 1.0
    assert run_span.attributes["otel_scorers.label.no_tool_errors"] == "pass"
    assert run_span.attributes["otel_scorers.score.sunny"] == 1.0
    assert run_span.attributes["gen_ai.agent.name"] == "weather-agent"  # the original attributes stay
    assert len(evaluation_spans(telemetry)) == 2


def test_hold_mode_releases_the_run_span_after_hold_timeout(telemetry: Telemetry) -> None:
    release = threading.Event()

    @scorer(name="slow")
    async def slow(run: AgentRun) -> float:
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 5)
        return 1.0

    processor = attach(telemetry, [slow], hold=True, hold_timeout_s=0.2)
    agent(telemetry).run(PARIS)
    wait_until(lambda: run_spans(telemetry), 60, "the run span, let go after hold_timeout_s")
    (run_span,) = run_spans(telemetry)
    assert "otel_scorers.score.slow" not in run_span.attributes
    release.set()
    processor.force_flush(5000)
    assert len(run_spans(telemetry)) == 1, "released once, not again when the score arrived"
    assert [span.name for span in evaluation_spans(telemetry)] == ["evaluate slow"]


def test_a_raising_or_hanging_scorer_is_an_error_result_never_the_agents_problem(
    telemetry: Telemetry,
) -> None:
    @scorer
    def explodes(run: AgentRun) -> float:
        raise RuntimeError("scorer bug")

    @scorer
    def hangs(run: AgentRun) -> float:
        time.sleep(3)
        return 1.0

    @scorer
    async def hangs_async(run: AgentRun) -> float:
        await asyncio.sleep(30)
        return 1.0

    class BrokenScorer:
        name = "broken"
        needs: frozenset[str] = frozenset()
        binary = True

        def score(self, run: AgentRun) -> Any:
            return "not a number"

    processor = attach(
        telemetry,
        [
            explodes,
            bind(hangs, timeout_s=0.2),
            bind(hangs_async, timeout_s=0.2),
            BrokenScorer(),
            checks.no_tool_errors(),
        ],
    )
    agent(telemetry).run(PARIS)
    # The hanging scorers give up at their 0.2 s timeout: nothing of theirs exists yet.
    ended = {span.attributes["gen_ai.evaluation.name"] for span in evaluation_spans(telemetry)}
    assert not ended & {"hangs", "hangs_async"}, "the agent's thread never waits for scoring"
    assert processor.force_flush(5000)

    by_name = {span.attributes["gen_ai.evaluation.name"]: span for span in evaluation_spans(telemetry)}
    assert by_name["explodes"].attributes["error.type"] == "RuntimeError"
    assert by_name["explodes"].status.status_code == StatusCode.ERROR
    assert "scorer bug" in by_name["explodes"].status.description
    assert by_name["hangs"].attributes["error.type"] == "timeout"
    assert by_name["hangs_async"].attributes["error.type"] == "timeout"
    assert by_name["broken"].attributes["error.type"] == "invalid_value"
    assert by_name["no_tool_errors"].attributes["gen_ai.evaluation.score.value"] == 1.0
    assert telemetry.counter("otel_scorers.scorer.errors", error__type="timeout") == 2


def test_a_full_queue_drops_and_counts_without_blocking(telemetry: Telemetry) -> None:
    gate = threading.Event()

    @scorer
    async def blocked(run: AgentRun) -> float:
        await asyncio.get_running_loop().run_in_executor(None, gate.wait, 5)
        return 1.0

    processor = attach(telemetry, [blocked], max_queue_size=2)
    weather = agent(telemetry)
    for _ in range(70):  # 64 may be in flight, 2 may wait: the rest are dropped
        weather.run(PARIS)
    # The scorer waits for the gate (5 s at most): an agent that had waited for room in the
    # queue would find some of its runs scored by now.
    assert evaluation_spans(telemetry) == [], "the agent's thread never waits for a full queue"
    gate.set()
    assert processor.force_flush(5000)
    dropped = telemetry.counter(
        "otel_scorers.runs", otel_scorers__outcome="dropped", otel_scorers__reason="queue_full"
    )
    scored = len(evaluation_spans(telemetry))
    assert dropped >= 1
    assert scored + dropped == 70, "every run is either scored or counted"


def test_nested_agents_are_separate_runs(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    seen = recorder.runs

    processor = attach(telemetry, [recorder])
    inner = agent(telemetry)
    outer = agent(telemetry)
    outer.tools["ask_weather_agent"] = lambda question: inner.run(
        ScriptedRun(question, [("get_weather", {"city": "Paris"})], "Sunny.")
    )
    outer.run(
        ScriptedRun(
            "Plan my day in Paris",
            [("ask_weather_agent", {"question": "Weather in Paris?"})],
            "Take sunglasses.",
            "planner",
        )
    )
    processor.force_flush(5000)
    by_agent = {run.agent_name: run for run in seen}
    assert set(by_agent) == {"planner", "weather-agent"}
    assert by_agent["planner"].tool_names == ["ask_weather_agent"]
    assert by_agent["planner"].tool_calls[0].result == "Sunny."
    assert by_agent["weather-agent"].tool_names == ["get_weather"]
    assert by_agent["weather-agent"].input == "Weather in Paris?"
    assert by_agent["planner"].trace_id == by_agent["weather-agent"].trace_id


def test_own_spans_are_never_scored_and_spans_outside_runs_never_buffered(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors()])
    tracer = telemetry.tracer_provider.get_tracer("web")
    with tracer.start_as_current_span("GET /weather"):
        with tracer.start_as_current_span("db query"):
            assert processor.assembler.buffered_traces == 0
        agent(telemetry).run(PARIS)
        assert processor.assembler.buffered_traces == 0, "released when the run ended"
    processor.force_flush(5000)
    assert telemetry.counter("otel_scorers.runs", otel_scorers__outcome="assembled") == 1


def test_own_spans_inside_an_open_run_are_left_out_of_it(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    processor = attach(telemetry, [recorder])
    tracer = telemetry.tracer_provider.get_tracer("example-agent")
    own = telemetry.tracer_provider.get_tracer(OWN_SCOPE)
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ours"}
        with own.start_as_current_span("execute_tool ours", attributes=tool):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"},
        ):
            pass
    processor.force_flush(5000)
    assert [run.tool_names for run in recorder.runs] == [["get_weather"]]


def test_a_runs_evaluation_spans_go_on_while_a_later_run_of_its_trace_is_open(
    telemetry: Telemetry,
) -> None:
    # Evaluation spans name the run's agent, as a run span does: they must not be taken for runs
    # of the trace they are in, or held back (hold mode) with its run that is still open.
    processor = attach(telemetry, [checks.includes("sunny")], hold=True, hold_timeout_s=60)
    tracer = telemetry.tracer_provider.get_tracer("example-agent")
    run = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}
    answer = '[{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]'
    with tracer.start_as_current_span("request"):
        with tracer.start_as_current_span("invoke_agent weather", attributes=run) as first:
            first.set_attribute("gen_ai.output.messages", answer)
        with tracer.start_as_current_span("invoke_agent weather", attributes=run) as second:
            wait_until(
                lambda: evaluation_spans(telemetry),
                20,
                "the first run's evaluation span, sent on while the second run is open",
            )
            second.set_attribute("gen_ai.output.messages", answer)
    processor.force_flush(5000)
    (first_evaluation, second_evaluation) = evaluation_spans(telemetry)
    assert first_evaluation.parent.span_id == first.get_span_context().span_id
    assert second_evaluation.parent.span_id == second.get_span_context().span_id
    assert [span.attributes["otel_scorers.score.includes"] for span in run_spans(telemetry)] == [1.0, 1.0]
    assert telemetry.counter("otel_scorers.runs", otel_scorers__outcome="assembled") == 2


def test_many_distinct_span_names_neither_grow_memory_nor_hide_runs(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors()])
    tracer = telemetry.tracer_provider.get_tracer("web")
    for number in range(5000):
        tracer.start_span(f"GET /users/{number}").end()
    agent(telemetry).run(PARIS)
    processor.force_flush(5000)
    assert len(conventions._run_names) <= 4096
    assert telemetry.counter("otel_scorers.runs", otel_scorers__outcome="assembled") == 1


def test_a_trace_no_binding_would_sample_is_never_buffered(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [bind(checks.no_tool_errors(), sampling=0.0)])
    tracer = telemetry.tracer_provider.get_tracer("example-agent")
    with tracer.start_as_current_span(
        "invoke_agent weather-agent", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        assert processor.assembler.buffered_traces == 0
    processor.force_flush(5000)
    assert evaluation_spans(telemetry) == []


def test_filters_and_rate_limits_are_counted(telemetry: Telemetry) -> None:
    processor = attach(
        telemetry,
        [
            bind(
                checks.no_tool_errors(),
                name="chat-only",
                filter={"op": "eq", "left": {"path": "agent.name"}, "right": {"literal": "chat"}},
            ),
            bind(checks.no_tool_errors(), name="limited", max_per_minute=2),
        ],
    )
    weather = agent(telemetry)
    for _ in range(5):
        weather.run(PARIS)
    processor.force_flush(5000)
    evaluations = "otel_scorers.evaluations"
    assert (
        telemetry.counter(evaluations, gen_ai__evaluation__name="chat-only", otel_scorers__outcome="filtered")
        == 5
    )
    assert (
        telemetry.counter(evaluations, gen_ai__evaluation__name="limited", otel_scorers__outcome="scored")
        == 2
    )
    assert (
        telemetry.counter(
            evaluations, gen_ai__evaluation__name="limited", otel_scorers__outcome="rate_limited"
        )
        == 3
    )


def test_trace_buffer_is_bounded_and_overflow_counted(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors()], max_traces=2)
    tracer = telemetry.tracer_provider.get_tracer("example-agent")
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    spans = [tracer.start_span("invoke_agent a", attributes=attributes) for _ in range(3)]
    assert processor.assembler.buffered_traces == 2
    for span in spans:
        span.end()
    processor.force_flush(5000)
    assert telemetry.counter("otel_scorers.runs", otel_scorers__reason="trace_buffer_full") == 1
    assert len(evaluation_spans(telemetry)) == 2


def test_spans_per_trace_are_bounded(telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    seen = recorder.runs

    processor = attach(telemetry, [recorder], max_spans_per_trace=3)
    agent(telemetry).run(
        ScriptedRun("Lima?", [("get_time", {"city": "Lima"})] * 4, "08:05.")
    )  # 4 chat + 4 tool + 1 chat spans
    processor.force_flush(5000)
    assert len(seen) == 1, "the run is still scored, on what fitted"
    assert telemetry.counter("otel_scorers.spans.dropped", otel_scorers__reason="trace_span_limit") == 6


def test_shutdown_finishes_pending_work_then_refuses_and_counts(telemetry: Telemetry) -> None:
    processor = attach(telemetry, [checks.no_tool_errors()])
    weather = agent(telemetry)
    for _ in range(20):
        weather.run(PARIS)
    processor.shutdown()
    assert len(evaluation_spans(telemetry)) == 20
    weather.run(PARIS)  # after shutdown: no exception, counted
    assert telemetry.counter("otel_scorers.runs", otel_scorers__reason="shutdown") == 1


def test_processor_refuses_duplicate_names() -> None:
    with pytest.raises(ValueError, match=r"scorers\[1\]\.name: duplicate scorer name 'no_tool_errors'"):
        ScoringSpanProcessor([checks.no_tool_errors(), checks.no_tool_errors()])


@pytest.mark.parametrize("exporter_first", [True, False], ids=["exporter added first", "scoring added first"])
def test_provider_force_flush_exports_the_evaluations_of_every_run_ended_before_it(
    exporter_first: bool,
) -> None:
    with OtlpCapture() as capture:
        provider = TracerProvider()
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=capture.endpoint, insecure=True))
        )
        exporting = BatchSpanProcessor(OTLPSpanExporter(endpoint=capture.endpoint, insecure=True))

        @scorer
        async def considered(run: AgentRun) -> float:  # still scoring when the flush starts
            await asyncio.sleep(0.2)
            return 1.0

        scoring = ScoringSpanProcessor(
            [checks.no_tool_errors(), considered],
            tracer_provider=provider,
            logger_provider=logger_provider,
            meter_provider=NoOpMeterProvider(),
        )
        for processor in (exporting, scoring) if exporter_first else (scoring, exporting):
            provider.add_span_processor(processor)
        weather = ExampleAgent(tracer=provider.get_tracer("example-agent"))
        for _ in range(5):
            weather.run(PARIS)
        try:
            assert provider.force_flush(10_000)
            evaluations = [span.name for span in capture.span_list() if span.name.startswith("evaluate ")]
            events = list(capture.log_records())
        finally:
            provider.shutdown()
            logger_provider.shutdown()
    assert sorted(evaluations) == ["evaluate considered"] * 5 + ["evaluate no_tool_errors"] * 5
    assert len(events) == 10


def test_processor_refuses_a_conversation_scorer_named_as_a_run_scorer() -> None:
    from otel_scorers.conversations.scoring import bind_conversation
    from otel_scorers.conversations.source import ConversationSettings
    from otel_scorers.scorers.conversation import turns

    conversations = ConversationSettings((bind_conversation(turns(), name="no_tool_errors"),))
    with pytest.raises(ValueError, match=r"conversations\.scorers\[0\]\.name: duplicate scorer name"):
        ScoringSpanProcessor([checks.no_tool_errors()], conversations=conversations)
