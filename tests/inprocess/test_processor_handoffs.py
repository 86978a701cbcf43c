"""A Swarm's handoff in-process: AutoGen starts the run of the agent handed to only after the
handing agent's run has ended, with no span around both, so the processor keeps the trace open
for it (a bounded wait, given up on the engine's thread; a flush or a shutdown scores it)."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Tracer

from otel_scorers import AgentRun, ScoringSpanProcessor
from otel_scorers.inprocess.assembler import HANDOFF_WAIT_S

from ..conftest import RunRecorder, Telemetry
from ..waiting import FakeClock, wait_until

AUTOGEN = "autogen-core"


def agent_turn(tracer: Tracer, agent: str, tools: list[tuple[str, str]]) -> None:
    """One agent's turn as autogen-core writes it: `invoke_agent {agent}` over its
    `execute_tool {tool}` spans, under a message span of the runtime's."""
    run_attributes = {
        "gen_ai.system": "autogen",
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
    }
    with (
        tracer.start_as_current_span(f"autogen process {agent}_team.(team)-A"),
        tracer.start_as_current_span(
            f"invoke_agent {agent}", kind=SpanKind.CLIENT, attributes=run_attributes
        ),
    ):
        for index, (tool, description) in enumerate(tools):
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={
                    "gen_ai.system": "autogen",
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.description": description,
                    "gen_ai.tool.call.id": f"call_{agent}_{index}",
                },
            ):
                pass


def triage(tracer: Tracer) -> None:
    agent_turn(tracer, "triage_agent", [("transfer_to_weather_agent", "Handoff to weather_agent.")])


def weather(tracer: Tracer) -> None:
    agent_turn(tracer, "weather_agent", [("get_weather", "Return the current weather for a city.")])


def attach(telemetry: Telemetry) -> tuple[ScoringSpanProcessor, RunRecorder, Tracer]:
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    return processor, recorder, telemetry.tracer_provider.get_tracer(AUTOGEN)


def swarm(tracer: Tracer) -> Iterator[None]:
    """The application's span around `team.run(...)`; yields between the two agents' turns."""
    with tracer.start_as_current_span("run_team"):
        triage(tracer)
        yield
        weather(tracer)


def assert_one_swarm_run(run: AgentRun) -> None:
    assert run.agent_name == "triage_agent"
    assert run.final_agent == "weather_agent"
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage_agent", "weather_agent")]
    assert [call.name for call in run.tool_calls] == ["get_weather"]


def test_the_agent_handed_to_goes_on_in_the_same_run(telemetry: Telemetry) -> None:
    processor, recorder, tracer = attach(telemetry)
    clock = processor.assembler.clock = FakeClock(1000.0)
    turns = swarm(tracer)
    next(turns)
    # The first agent's run has ended: its trace waits, past a check of the engine's timer
    # (made here, as the timer makes it) short of the wait.
    assert processor.assembler.waiting_traces == 1
    clock.now += HANDOFF_WAIT_S - 0.01
    processor.assembler.complete_expired()
    assert processor.assembler.waiting_traces == 1
    assert recorder.runs == []
    next(turns, None)
    assert processor.assembler.waiting_traces == 0
    assert processor.force_flush(5000)
    (run,) = recorder.runs
    assert_one_swarm_run(run)
    assert processor.assembler.buffered_traces == 0
    processor.shutdown()


def test_a_handoff_not_taken_up_is_scored_after_the_wait_without_a_flush(telemetry: Telemetry) -> None:
    processor, recorder, tracer = attach(telemetry)
    clock = processor.assembler.clock = FakeClock(1000.0)
    triage(tracer)
    clock.now += HANDOFF_WAIT_S - 0.01
    processor.assembler.complete_expired()
    assert processor.assembler.waiting_traces == 1, "not before the wait is over"
    clock.now += 0.02
    # The engine's timer gives the trace up (within its interval); the run is then scored.
    wait_until(lambda: recorder.runs, 60, "the run, scored")
    (run,) = recorder.runs
    assert run.agent_name == "triage_agent"
    assert run.tool_calls == ()  # the transfer is not a tool call
    assert processor.assembler.buffered_traces == 0
    processor.shutdown()


def test_a_flush_scores_a_trace_waiting_for_its_handoff(telemetry: Telemetry) -> None:
    processor, recorder, tracer = attach(telemetry)
    processor.assembler.clock = FakeClock(1000.0)  # the wait for the handoff never ends by itself
    triage(tracer)
    assert processor.force_flush(5000)
    (run,) = recorder.runs
    assert run.agent_name == "triage_agent"
    assert processor.assembler.buffered_traces == 0
    processor.shutdown()


def test_a_shutdown_scores_a_trace_waiting_for_its_handoff(telemetry: Telemetry) -> None:
    processor, recorder, tracer = attach(telemetry)
    triage(tracer)
    processor.shutdown(5.0)
    (run,) = recorder.runs
    assert run.agent_name == "triage_agent"
    assert processor.assembler.buffered_traces == 0


def test_a_run_handed_to_after_its_trace_was_scored_is_a_run_of_its_own_and_counted(
    telemetry: Telemetry,
) -> None:
    processor, recorder, tracer = attach(telemetry)
    turns = swarm(tracer)
    next(turns)
    assert processor.force_flush(5000)  # gives the handoff up
    next(turns, None)
    assert processor.force_flush(5000)
    assert [run.agent_name for run in recorder.runs] == ["triage_agent", "weather_agent"]
    assert [call.name for call in recorder.runs[1].tool_calls] == ["get_weather"]
    assert telemetry.counter("otel_scorers.late_spans") == 1
    processor.shutdown()


def test_a_run_without_a_handoff_is_scored_when_it_ends(telemetry: Telemetry) -> None:
    processor, recorder, tracer = attach(telemetry)
    with tracer.start_as_current_span("run_team"):
        weather(tracer)
        assert processor.assembler.waiting_traces == 0
        assert processor.assembler.buffered_traces == 0
    assert processor.force_flush(5000)
    (run,) = recorder.runs
    assert run.agent_name == "weather_agent" and run.handoffs == ()
    processor.shutdown()


def test_nothing_outside_a_trace_is_kept_waiting(telemetry: Telemetry) -> None:
    processor, _, tracer = attach(telemetry)
    # A handoff's name outside any buffered trace: a tool span outside runs, not buffered.
    with tracer.start_as_current_span("execute_tool transfer_to_weather_agent"):
        pass
    assert processor.assembler.buffered_traces == 0
    processor.shutdown()


def test_held_back_the_starting_agents_run_span_carries_the_joined_runs_scores(telemetry: Telemetry) -> None:
    processor = ScoringSpanProcessor(
        [RunRecorder()], downstream=SimpleSpanProcessor(telemetry.spans), **telemetry.providers()
    )
    telemetry.tracer_provider.add_span_processor(processor)
    turns = swarm(telemetry.tracer_provider.get_tracer(AUTOGEN))
    next(turns)
    next(turns, None)
    assert processor.force_flush(5000)
    runs = {
        span.name: span.attributes or {}
        for span in telemetry.finished_spans()
        if span.name.startswith("invoke_agent ")
    }
    assert set(runs) == {"invoke_agent triage_agent", "invoke_agent weather_agent"}
    assert runs["invoke_agent triage_agent"]["otel_scorers.score.record"] == 1.0
    assert not any(key.startswith("otel_scorers.") for key in runs["invoke_agent weather_agent"])
    processor.shutdown()
