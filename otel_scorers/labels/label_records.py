"""Human labels on the wire and in files.

On the wire a label is a `gen_ai.evaluation.result` log record, as the project's own results
are, marked as a person's by `otel_scorers.evaluation.source = "human"`, in the trace context of
the labelled run's span (or carrying `gen_ai.conversation.id` for a conversation):

| attribute | holds |
|---|---|
| `otel_scorers.evaluation.source` | `"human"` (required: what makes it a label) |
| `gen_ai.evaluation.name` | the scorer the verdict is about (required) |
| `gen_ai.evaluation.score.value` | the person's value (a number) |
| `gen_ai.evaluation.score.label` | the person's label (`pass`, `fail`, ...); a value, a label or both |
| `gen_ai.evaluation.explanation` | the person's comment |
| `otel_scorers.evaluation.reviewer` | who labelled it |
| `gen_ai.conversation.id` | a conversation's label, when the record has no trace context |

In a file (`otel-scorers calibrate --labels labels.jsonl`), one JSON object a line with the keys
`scorer`, `trace_id` and `span_id` (hex, as in the traces) or `conversation_id`, `value`,
`label`, `reviewer`, `comment`. A record or line that is not a valid label is rejected with
what is wrong, never guessed at; other log records are ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from opentelemetry import trace
from opentelemetry._logs import LoggerProvider, get_logger_provider
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_scorers.gen_ai_names import (
    GEN_AI_CONVERSATION_ID,
    GEN_AI_EVALUATION_EXPLANATION,
    GEN_AI_EVALUATION_NAME,
    GEN_AI_EVALUATION_RESULT,
    GEN_AI_EVALUATION_SCORE_LABEL,
    GEN_AI_EVALUATION_SCORE_VALUE,
)
from otel_scorers.labels.join_records import Label
from otel_scorers.runs.otlp_files import MAX_BLANK_LINES  # blank lines in a row, as in trace files
from otel_scorers.version import __version__

EVENT = GEN_AI_EVALUATION_RESULT
SOURCE = "otel_scorers.evaluation.source"
HUMAN = "human"
REVIEWER = "otel_scorers.evaluation.reviewer"
NAME = GEN_AI_EVALUATION_NAME
VALUE = GEN_AI_EVALUATION_SCORE_VALUE
LABEL = GEN_AI_EVALUATION_SCORE_LABEL
EXPLANATION = GEN_AI_EVALUATION_EXPLANATION
#: The scope labels are sent under by `LabelLogWriter` (any scope will do for the receiver).
LABEL_SCOPE = "otel_scorers.labels"


class BadLabel(ValueError):
    pass


def label_attributes(label: Label) -> dict[str, Any]:
    attributes: dict[str, Any] = {SOURCE: HUMAN, NAME: label.scorer}
    if label.value is not None:
        attributes[VALUE] = label.value
    if label.label is not None:
        attributes[LABEL] = label.label
    if label.comment:
        attributes[EXPLANATION] = label.comment
    if label.reviewer:
        attributes[REVIEWER] = label.reviewer
    if label.conversation_id:
        attributes[GEN_AI_CONVERSATION_ID] = label.conversation_id
    return attributes


class LabelLogWriter:
    """Sends labels as log records through a logger provider (the SDK's batching and OTLP
    exporter take them to a Collector, and on to the sidecar's `/v1/logs`)."""

    def __init__(self, logger_provider: LoggerProvider | None = None) -> None:
        self._provider = logger_provider
        self._logger: Any = None

    def emit(self, label: Label) -> None:
        if self._logger is None:
            self._logger = (self._provider or get_logger_provider()).get_logger(LABEL_SCOPE, __version__)
        context = None
        if label.trace_id and label.span_id:
            run_span = SpanContext(
                label.trace_id, label.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
            )
            context = trace.set_span_in_context(NonRecordingSpan(run_span))
        self._logger.emit(context=context, event_name=EVENT, attributes=label_attributes(label))


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return (
        getattr(value, kind) if kind in ("string_value", "int_value", "bool_value", "double_value") else None
    )


def label_from_attributes(attributes: Mapping[str, Any], trace_id: int = 0, span_id: int = 0) -> Label:
    """A label from a record's attributes and trace context; `BadLabel` saying what is wrong."""
    scorer = attributes.get(NAME)
    if not isinstance(scorer, str) or not scorer:
        raise BadLabel(f"{NAME} must name the scorer, got {scorer!r}"[:200])
    value = attributes.get(VALUE)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise BadLabel(f"{VALUE} must be a number, got {value!r}"[:200])
    label = attributes.get(LABEL)
    if label is not None and not isinstance(label, str):
        raise BadLabel(f"{LABEL} must be a string, got {label!r}"[:200])
    texts = {key: attributes.get(key) for key in (EXPLANATION, REVIEWER, GEN_AI_CONVERSATION_ID)}
    for key, text in texts.items():
        if text is not None and not isinstance(text, str):
            raise BadLabel(f"{key} must be a string, got {text!r}"[:200])
    try:
        return Label(
            scorer,
            trace_id,
            span_id,
            texts[GEN_AI_CONVERSATION_ID] or None,
            float(value) if value is not None else None,
            label,
            texts[REVIEWER],
            texts[EXPLANATION],
        )
    except ValueError as exc:
        raise BadLabel(str(exc)) from None


def labels_from_request(request: ExportLogsServiceRequest) -> tuple[list[Label], int, str]:
    """The labels in a logs export request (records marked as a person's); other records are
    ignored. Returns the labels, how many label records were rejected, and the first problem."""
    labels: list[Label] = []
    rejected, problem = 0, ""
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if not record.attributes:
                    continue
                attributes = {item.key: _value(item.value) for item in record.attributes}
                if attributes.get(SOURCE) != HUMAN:
                    continue
                try:
                    if (record.trace_id and len(record.trace_id) != 16) or (
                        record.span_id and len(record.span_id) != 8
                    ):
                        raise BadLabel("a label's trace and span ids must be 16 and 8 bytes")
                    labels.append(
                        label_from_attributes(
                            attributes,
                            int.from_bytes(record.trace_id, "big") if record.trace_id else 0,
                            int.from_bytes(record.span_id, "big") if record.span_id else 0,
                        )
                    )
                except BadLabel as exc:
                    rejected += 1
                    problem = problem or str(exc)
    return labels, rejected, problem


def _hex_id(value: Any, key: str, digits: int) -> int:
    if value is None:
        return 0
    if not isinstance(value, str) or len(value) != digits:
        raise BadLabel(f"{key} must be {digits} hex digits, got {value!r}"[:200])
    try:
        return int(value, 16)
    except ValueError:
        raise BadLabel(f"{key} must be {digits} hex digits, got {value!r}"[:200]) from None


_FILE_KEYS = frozenset(
    {"scorer", "trace_id", "span_id", "conversation_id", "value", "label", "reviewer", "comment"}
)


def label_from_json(item: Any) -> Label:
    if not isinstance(item, dict):
        raise BadLabel(f"a label is a JSON object, got {type(item).__name__}")
    unknown = sorted(set(item) - _FILE_KEYS)
    if unknown:
        raise BadLabel(f"unknown key(s) {', '.join(unknown)}; a label has {', '.join(sorted(_FILE_KEYS))}")
    value = item.get("value")
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
    ):
        raise BadLabel(f"value must be a finite number, got {value!r}"[:200])
    attributes = {
        NAME: item.get("scorer"),
        VALUE: value,
        LABEL: item.get("label"),
        EXPLANATION: item.get("comment"),
        REVIEWER: item.get("reviewer"),
        GEN_AI_CONVERSATION_ID: item.get("conversation_id"),
    }
    return label_from_attributes(
        attributes, _hex_id(item.get("trace_id"), "trace_id", 32), _hex_id(item.get("span_id"), "span_id", 16)
    )


#: Longest line of a labels file: a label with a comment cut to 1,000 characters is far shorter.
MAX_LABEL_LINE_BYTES = 1024 * 1024


def read_labels(path: str | Path) -> list[Label]:
    """Every label of a JSON-lines file, read a line at a time; a `ValueError` naming the file,
    line and problem for the first bad one (nothing is read past a file that cannot be trusted)."""
    labels: list[Label] = []
    try:
        with Path(path).open("rb") as file:
            number = blank = 0
            while line := file.readline(MAX_LABEL_LINE_BYTES + 1):
                number += 1
                if len(line) > MAX_LABEL_LINE_BYTES:
                    raise ValueError(
                        f"{path}:{number}: not a label: longer than {MAX_LABEL_LINE_BYTES:,} bytes"
                    )
                if not line.strip():
                    blank += 1
                    if blank > MAX_BLANK_LINES:
                        raise ValueError(
                            f"{path}:{number}: more than {MAX_BLANK_LINES:,} blank lines in a row"
                        )
                    continue
                blank = 0
                try:  # orjson: nesting past 1,024 levels is an error, never a RecursionError
                    labels.append(label_from_json(orjson.loads(line)))
                except (orjson.JSONDecodeError, BadLabel) as exc:
                    raise ValueError(f"{path}:{number}: not a label: {exc}") from None
    except OSError as exc:
        raise ValueError(f"cannot read labels from {path}: {exc}") from None
    return labels


def labels_json(labels: Iterable[Label]) -> str:
    """Labels as a JSON-lines file's text (what `read_labels` reads)."""
    lines = []
    for label in labels:
        item: dict[str, Any] = {"scorer": label.scorer}
        if label.trace_id and label.span_id:
            item["trace_id"] = f"{label.trace_id:032x}"
            item["span_id"] = f"{label.span_id:016x}"
        for key in ("conversation_id", "value", "label", "reviewer", "comment"):
            if getattr(label, key) is not None:
                item[key] = getattr(label, key)
        lines.append(json.dumps(item))
    return "\n".join(lines) + "\n"
