"""Turns as OTLP log records, so that the turns of one conversation, rebuilt by different replicas
or sidecars, meet in one place.

A turn record is a log record named `otel_scorers.conversation.turn`, in the trace context of the
turn's run span, whose attributes hold the turn (`gen_ai.conversation.id` among them). The
Collector's load-balancing exporter routes logs by that attribute (`routing_key: attributes`), so
every record of a conversation reaches the same sidecar, which keeps and scores it
(`collector-config/conversations.yaml`). Records are read back exactly: one that lacks a field
or holds the wrong kind is rejected and counted, never guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import LoggerProvider, get_logger_provider
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_scorers.conversation_turns import ToolSummary, Turn, bounded_conversation_id
from otel_scorers.gen_ai_names import GEN_AI_AGENT_NAME, GEN_AI_CONVERSATION_ID
from otel_scorers.span_record import OWN_SCOPE
from otel_scorers.version import __version__

TURN_EVENT = "otel_scorers.conversation.turn"
_AGENT = GEN_AI_AGENT_NAME
_INPUT = "otel_scorers.turn.input"
_OUTPUT = "otel_scorers.turn.output"
_TOOLS = "otel_scorers.turn.tools"
_START = "otel_scorers.turn.start_ns"
_END = "otel_scorers.turn.end_ns"
_STATUS = "otel_scorers.turn.status"
_ENDS = "otel_scorers.turn.ends_conversation"
_TRUNCATED = "otel_scorers.turn.truncated"
#: The sender cut the conversation id to its bounded form (counted where the turn is kept).
_ID_CUT = "otel_scorers.turn.id_cut"
_STATES = frozenset({"ok", "error", "incomplete", "result_error"})
_STATUSES = frozenset({"ok", "error", "unset"})


def turn_attributes(turn: Turn) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        GEN_AI_CONVERSATION_ID: turn.conversation_id,
        _START: turn.start_ns,
        _END: turn.end_ns,
        _STATUS: turn.status,
        _TOOLS: json.dumps([[tool.name, tool.state, tool.error] for tool in turn.tools], ensure_ascii=False),
    }
    if turn.agent_name is not None:
        attributes[_AGENT] = turn.agent_name
    if turn.input is not None:
        attributes[_INPUT] = turn.input
    if turn.output is not None:
        attributes[_OUTPUT] = turn.output
    if turn.ends_conversation:
        attributes[_ENDS] = True
    if turn.truncated:
        attributes[_TRUNCATED] = True
    if turn.id_cut:
        attributes[_ID_CUT] = True
    return attributes


class TurnLogWriter:
    """Sends turns as log records through a logger provider (the SDK's batching and exporters)."""

    def __init__(self, logger_provider: LoggerProvider | None = None) -> None:
        self._provider = logger_provider
        self._logger: Any = None

    def emit(self, turn: Turn) -> None:
        if self._logger is None:
            self._logger = (self._provider or get_logger_provider()).get_logger(OWN_SCOPE, __version__)
        run_span = SpanContext(
            turn.trace_id, turn.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
        )
        self._logger.emit(
            timestamp=turn.end_ns or None,
            context=trace.set_span_in_context(NonRecordingSpan(run_span)),
            event_name=TURN_EVENT,
            attributes=turn_attributes(turn),
        )


class BadTurnRecord(ValueError):
    pass


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return (
        getattr(value, kind) if kind in ("string_value", "int_value", "bool_value", "double_value") else None
    )


def _text(attributes: Mapping[str, Any], key: str, required: bool = False) -> str | None:
    value = attributes.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadTurnRecord(f"{key} must be a string, got {value!r}"[:200])
    return value


def _whole(attributes: Mapping[str, Any], key: str) -> int:
    value = attributes.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadTurnRecord(f"{key} must be an integer, got {value!r}"[:200])
    return value


def _tools(text: str | None) -> tuple[ToolSummary, ...]:
    try:
        items = json.loads(text or "[]")
    except ValueError:
        raise BadTurnRecord(f"{_TOOLS} is not JSON") from None
    tools = []
    for item in items if isinstance(items, list) else [None]:
        if not (
            isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and item[1] in _STATES
        ):
            raise BadTurnRecord(f"{_TOOLS} holds {item!r}, not [name, state, error]"[:200])
        tools.append(ToolSummary(item[0], item[1], item[2] if isinstance(item[2], str) else None))
    return tuple(tools)


def turn_from_record(attributes: Mapping[str, Any], trace_id: bytes, span_id: bytes) -> Turn:
    if len(trace_id) != 16 or len(span_id) != 8:
        raise BadTurnRecord("a turn record needs its run span's trace and span ids")
    status = attributes.get(_STATUS, "unset")
    if status not in _STATUSES:
        raise BadTurnRecord(f"{_STATUS} must be ok, error or unset, got {status!r}"[:200])
    conversation_id = _text(attributes, GEN_AI_CONVERSATION_ID, required=True)
    assert conversation_id is not None
    if not conversation_id:
        raise BadTurnRecord(f"{GEN_AI_CONVERSATION_ID} is empty")
    conversation_id, id_cut = bounded_conversation_id(conversation_id)  # a record's id, bounded as a run's
    return Turn(
        conversation_id=conversation_id,
        trace_id=int.from_bytes(trace_id, "big"),
        span_id=int.from_bytes(span_id, "big"),
        start_ns=_whole(attributes, _START),
        end_ns=_whole(attributes, _END),
        agent_name=_text(attributes, _AGENT),
        input=_text(attributes, _INPUT),
        output=_text(attributes, _OUTPUT),
        tools=_tools(_text(attributes, _TOOLS)),
        status=status,
        ends_conversation=attributes.get(_ENDS) is True,
        truncated=attributes.get(_TRUNCATED) is True,
        id_cut=id_cut or attributes.get(_ID_CUT) is True,
    )


def turns_from_request(request: ExportLogsServiceRequest) -> tuple[list[Turn], int, str]:
    """The turn records of a logs export request; other log records are ignored. Returns the
    turns, how many turn records were rejected, and the first problem found."""
    turns: list[Turn] = []
    rejected, problem = 0, ""
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if record.event_name != TURN_EVENT:
                    continue
                attributes = {item.key: _value(item.value) for item in record.attributes}
                try:
                    turns.append(turn_from_record(attributes, record.trace_id, record.span_id))
                except BadTurnRecord as exc:
                    rejected += 1
                    problem = problem or str(exc)
    return turns, rejected, problem
