"""The sidecar's conversation intake: OTLP log requests carrying turn records (`/v1/logs`, and the
gRPC LogsService), the turns of the conversations the Collector routes to this sidecar.

Turn records are read exactly (`conversations.turn_logs`); one that is malformed is rejected and
reported as a partial success, as a span with bad ids is. Other log records in the same request
(evaluation events, say) are accepted and ignored: a logs pipeline may carry anything.
"""

from __future__ import annotations

from google.protobuf.json_format import Parse, ParseError
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from otel_scorers.conversations.pipeline import Conversations
from otel_scorers.conversations.turn_logs import turns_from_request
from otel_scorers.sidecar.payload import Encoding, PayloadError
from otel_scorers.throttled_log import throttled


class ConversationIntake:
    def __init__(self, conversations: Conversations) -> None:
        self.conversations = conversations

    def export(self, data: bytes, encoding: Encoding = "protobuf") -> ExportLogsServiceResponse:
        """Take one logs export request; `PayloadError` (400) when it is not one."""
        request = ExportLogsServiceRequest()
        try:
            if encoding == "json":
                Parse(data, request, ignore_unknown_fields=True)
            else:
                request.ParseFromString(data)
        except (DecodeError, ParseError, UnicodeDecodeError) as exc:
            raise PayloadError(400, f"not an OTLP logs request: {exc}"[:300]) from None
        turns, rejected, problem = turns_from_request(request)
        counts = self.conversations.counts
        assert counts is not None  # an intake is made only where conversations are kept
        if turns:
            counts.add("turn_received", len(turns))
            self.conversations.add_turns(turns)
        response = ExportLogsServiceResponse()
        if rejected:
            counts.add("turn_rejected", rejected)
            throttled.warning("turn_rejected", "otel_scorers: turn records rejected: %s", problem)
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = problem
        return response
