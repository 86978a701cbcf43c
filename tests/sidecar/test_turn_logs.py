"""Turn records: a turn written through the SDK's logger and encoded by its OTLP encoder reads back
as the same turn; a malformed record is rejected, never guessed at."""

from __future__ import annotations

from dataclasses import replace

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_scorers.conversation_turns import MAX_CONVERSATION_ID, ToolSummary, Turn
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


def test_a_turn_records_long_conversation_id_is_read_bounded_and_flagged_and_ids_stay_apart(
    telemetry: Telemetry,
) -> None:
    long_ids = ["y" * 100_000 + "-a", "y" * 100_000 + "-b"]
    writer = TurnLogWriter(telemetry.logger_provider)
    for n, long_id in enumerate(long_ids):
        writer.emit(replace(TURN, conversation_id=long_id, span_id=n + 1))
    turns, rejected, _ = turns_from_request(_request(telemetry))
    assert rejected == 0 and all(turn.id_cut for turn in turns)
    assert [len(turn.conversation_id) for turn in turns] == [MAX_CONVERSATION_ID] * 2
    assert turns[0].conversation_id != turns[1].conversation_id
    # A turn cut where it was rebuilt says so in its record, for the sidecar that keeps it.
    (bounded,) = turns[:1]
    telemetry.logs.clear()
    writer.emit(bounded)
    (again,), _, _ = turns_from_request(_request(telemetry))
    assert again == bounded
