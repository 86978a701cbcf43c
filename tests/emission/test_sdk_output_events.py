"""Through the SDK providers, a `gen_ai.evaluation.result` event is made only where the logger says
one would go somewhere (the Logs API's `enabled`): a log record processor that filters the events
out gets none, one that takes them gets every one, with its span."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor, ReadWriteLogRecord
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import AgentRun, Score
from otel_scorers.emission.sdk_output import SdkOutput

RUN = AgentRun(0x5B8EFFF798038103D269B633813FC60C, 0x051581BF3CB55C13, "weather", "Weather?", "Sunny.")
SCORES = [Score("no_tool_errors", value=1.0, label="pass"), Score("says-sunny", value=0.0, label="fail")]


class Filtering(LogRecordProcessor):
    """A processor that takes records, and says it wants none of the `refused` event name."""

    def __init__(self, refused: str | None) -> None:
        self.refused = refused
        self.records: list[ReadWriteLogRecord] = []

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        self.records.append(log_record)

    def enabled(self, *, event_name: str | None = None, **_: Any) -> bool:
        return event_name != self.refused

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def emitted(refused: str | None) -> tuple[list[str], list[ReadWriteLogRecord]]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    processor = Filtering(refused)
    logger_provider.add_log_record_processor(processor)
    SdkOutput(tracer_provider, logger_provider).emit(RUN, SCORES)
    return [span.name for span in spans.get_finished_spans()], processor.records


def test_no_event_is_made_for_a_logger_that_wants_none() -> None:
    span_names, records = emitted(refused="gen_ai.evaluation.result")
    assert span_names == ["evaluate no_tool_errors", "evaluate says-sunny"]
    assert records == []


def test_a_logger_that_wants_the_events_gets_one_per_score_in_the_run_span_context() -> None:
    span_names, records = emitted(refused="something.else")
    assert span_names == ["evaluate no_tool_errors", "evaluate says-sunny"]
    assert [record.log_record.event_name for record in records] == ["gen_ai.evaluation.result"] * 2
    assert [dict(record.log_record.attributes or {})["gen_ai.evaluation.name"] for record in records] == [
        "no_tool_errors",
        "says-sunny",
    ]
    assert {(record.log_record.trace_id, record.log_record.span_id) for record in records} == {
        (RUN.trace_id, RUN.span_id)
    }
