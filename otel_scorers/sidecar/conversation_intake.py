"""The sidecar's conversation intake: OTLP log requests carrying turn records (`/v1/logs`, and the
gRPC LogsService), the turns of the conversations the Collector routes to this sidecar.

Turn records are read exactly (`conversations.turn_logs`); one that is malformed is rejected and
reported as a partial success, as a span with bad ids is. With `labels`, the same requests carry
people's labels too (`label_records`: evaluation results marked as a person's), for the judge's
agreement with them. Other log records in the same request (the project's own evaluation events,
say) are accepted and ignored: a logs pipeline may carry anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from otel_scorers.conversation_turns import Turn
from otel_scorers.conversations.source import Conversations
from otel_scorers.conversations.turn_logs import turns_from_request
from otel_scorers.labels.agreement import Agreement
from otel_scorers.labels.join_records import Label
from otel_scorers.labels.label_records import labels_from_request
from otel_scorers.otlp.decode import hex_ids_as_base64
from otel_scorers.sidecar.payload import Encoding, PayloadError
from otel_scorers.throttled_log import throttled


@dataclass
class LogsRead:
    """What a logs request holds, read off the event loop when it is large: its turn records
    and its labels, each with what was rejected."""

    turns: tuple[list[Turn], int, str] | None
    labels: tuple[list[Label], int, str] | None


class ConversationIntake:
    def __init__(self, conversations: Conversations | None, labels: Agreement | None = None) -> None:
        self.conversations = conversations
        self.labels = labels

    def export(self, data: bytes, encoding: Encoding = "protobuf") -> ExportLogsServiceResponse:
        """Take one logs export request; `PayloadError` (400) when it is not one."""
        return self.take(self.read(data, encoding))

    def read(self, data: bytes, encoding: Encoding = "protobuf") -> LogsRead:
        """The request's turn records and labels, read (pure: any thread); `PayloadError` (400)
        when it is not a logs request. OTLP/JSON ids are read as the specification writes them,
        in hex, or in protobuf's base64."""
        request = ExportLogsServiceRequest()
        try:
            if encoding == "json":
                ParseDict(hex_ids_as_base64(orjson.loads(data)), request, ignore_unknown_fields=True)
            else:
                request.ParseFromString(data)
        except (
            DecodeError,
            ParseError,
            UnicodeDecodeError,
            orjson.JSONDecodeError,
            TypeError,
            ValueError,
        ) as exc:
            raise PayloadError(400, f"not an OTLP logs request: {exc}"[:300]) from None
        return LogsRead(
            turns_from_request(request) if self.conversations is not None else None,
            labels_from_request(request) if self.labels is not None else None,
        )

    def take(self, read: LogsRead) -> ExportLogsServiceResponse:
        """What was read handed to the conversations and the agreement (on the event loop)."""
        response = ExportLogsServiceResponse()
        if self.conversations is not None and read.turns is not None:
            turns, rejected, problem = read.turns
            counts = self.conversations.counts
            assert counts is not None  # conversations come here only where they are kept
            if turns:
                counts.add("turn_received", len(turns))
                self.conversations.add_turns(turns)
            if rejected:
                counts.add("turn_rejected", rejected)
                throttled.warning("turn_rejected", "otel_scorers: turn records rejected: %s", problem)
                response.partial_success.rejected_log_records = rejected
                response.partial_success.error_message = problem
        if self.labels is not None and read.labels is not None:
            labels, rejected, problem = read.labels
            refused = 0  # read as labels, but out of range or beyond the bounds (`label_gate`)
            if labels:
                admitted = self.labels.add_labels(labels)
                refused, problem = admitted.refused, problem or admitted.problem
            if rejected:
                self.labels.reject(rejected)
            if rejected or refused:
                throttled.warning("label_rejected", "otel_scorers: label records rejected: %s", problem)
                response.partial_success.rejected_log_records += rejected + refused
                response.partial_success.error_message = response.partial_success.error_message or problem
        return response
