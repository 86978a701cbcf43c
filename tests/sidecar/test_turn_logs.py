"""Turn records: a turn written through the SDK's logger and encoded by its OTLP encoder reads back
as the same turn; a malformed record is rejected, never guessed at."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_scorers.conversation_turns import ToolSummary, Turn
from otel_scorers.conversations.turn_logs import TURN_EVENT, TurnLogWriter, turns_from_request

from ..conftest import Telemetry

TURN = Turn(
    "conv-1",
    0x5B8EFFF798038103D269B633813FC60C,
    0x1234,
    start_ns=1_700_000_000_000_000_000,
    end_ns=1_700_000_000_500_000_000,
    agent_name="trip",
    input="Book a hotel in Lisbon",
    output="Booked Hotel Baixa.",
    tools=(ToolSummary("search", "ok"), ToolSummary("book", "error", "card declined")),
    status="ok",
    ends_conversation=True,
)


def _request(telemetry: Telemetry) -> ExportLogsServiceRequest:
    request: ExportLogsServiceRequest = encode_logs(telemetry.logs.get_finished_logs())
    return ExportLogsServiceRequest.FromString(request.SerializeToString())


def test_a_turn_record_reads_back_as_the_turn_it_was_written_from(telemetry: Telemetry) -> None:
    TurnLogWriter(telemetry.logger_provider).emit(TURN)
    (record,) = telemetry.logs.get_finished_logs()
    assert record.log_record.event_name == TURN_EVENT
    assert record.log_record.trace_id == TURN.trace_id and record.log_record.span_id == TURN.span_id
    turns, rejected, _ = turns_from_request(_request(telemetry))
    assert turns == [TURN] and rejected == 0


def test_a_turn_record_with_a_field_of_the_wrong_kind_is_rejected_and_other_logs_ignored(
    telemetry: Telemetry,
) -> None:
    TurnLogWriter(telemetry.logger_provider).emit(TURN)
    logger = telemetry.logger_provider.get_logger("app")
    logger.emit(event_name="app.event", attributes={"gen_ai.conversation.id": "conv-1"})
    request = _request(telemetry)
    record = request.resource_logs[0].scope_logs[0].log_records[0]
    for attribute in record.attributes:
        if attribute.key == "otel_scorers.turn.start_ns":
            attribute.value.string_value = "yesterday"
    turns, rejected, problem = turns_from_request(request)
    assert turns == [] and rejected == 1 and "otel_scorers.turn.start_ns" in problem
