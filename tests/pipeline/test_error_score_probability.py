"""An error score of a sampled binding carries its inclusion probability, as its other scores do."""

from __future__ import annotations

import asyncio

from otel_scorers import AgentRun, ScoringSpanProcessor, bind
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.span_record import OWN_SCOPE

from ..conftest import Telemetry

PROBABILITY = "otel_scorers.sampling.probability"
RATE = 0.5


def raises(run: AgentRun) -> float:
    raise RuntimeError("the scorer broke")


async def hangs(run: AgentRun) -> float:
    await asyncio.sleep(60)
    return 1.0


def nonsense(run: AgentRun) -> object:
    return "not a number"


def test_error_scores_of_a_sampled_binding_carry_its_probability(telemetry: Telemetry) -> None:
    processor = ScoringSpanProcessor(
        [
            bind(raises, sampling=RATE),
            bind(hangs, sampling=RATE, timeout_s=0.05),
            bind(nonsense, sampling=RATE),
        ],
        **telemetry.providers(),
    )
    telemetry.tracer_provider.add_span_processor(processor)
    telemetry.export_spans_directly()
    agent = ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent"))
    for n in range(40):
        agent.run(ScriptedRun(f"question {n}", (), "answer"))
    assert processor.force_flush(20_000)
    processor.shutdown()
    spans = [s for s in telemetry.spans.get_finished_spans() if s.instrumentation_scope.name == OWN_SCOPE]
    errors = {"raises": "RuntimeError", "hangs": "timeout", "nonsense": "invalid_value"}
    for name, error in errors.items():
        scored = [s for s in spans if s.name == f"evaluate {name}"]
        assert 8 <= len(scored) <= 32  # about half of 40 runs
        assert all(s.attributes["error.type"] == error for s in scored), name
        assert all(s.attributes.get(PROBABILITY) == RATE for s in scored), name
