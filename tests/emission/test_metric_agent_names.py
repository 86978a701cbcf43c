"""Agents' names of any length, as senders choose them, through the real SDK with the processor
attached and an in-memory metric reader: the series the score metrics keep for good hold each
name within 256 characters, names that differ staying apart, and short names whole."""

from __future__ import annotations

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from otel_scorers import ScoringSpanProcessor, checks

#: What a metric's series holds of an agent's name at most (docs/limits.md).
MAX_NAME = 256


def test_score_metrics_hold_each_agents_name_within_256_characters() -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    provider = TracerProvider()
    processor = ScoringSpanProcessor(
        [checks.includes("ok")], tracer_provider=provider, meter_provider=meters, export=False
    )
    provider.add_span_processor(processor)
    names = [f"{n:04d}" + "x" * 100_000 for n in range(40)] + ["weather"]  # 100 kB each held for good
    answer = '[{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]'
    for name in names:
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
        with provider.get_tracer("agent").start_as_current_span(
            "invoke_agent", attributes={**attributes, "gen_ai.output.messages": answer}
        ):
            pass
    assert processor.force_flush(30_000)
    data = reader.get_metrics_data()
    held = {
        point.attributes["gen_ai.agent.name"]
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
        if "gen_ai.agent.name" in point.attributes
    }
    provider.shutdown()
    meters.shutdown()
    assert len(held) == len(names)  # each agent its own series
    assert max(len(name) for name in held) <= MAX_NAME
    assert "weather" in held
    assert all(name[:4] + "x" in name for name in held if name != "weather")  # its start kept
