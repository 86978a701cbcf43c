"""Run building, phase 1: model calls of a vocabulary nobody described inside a reader's runs.

In a trace in which a reader found runs, the spans no reader claims are not read by a vocabulary
inferred from them (`conventions.inferred_reader`: the trace is that reader's). One that carries a
kind key naming a model call (MLflow's autolog writing `mlflow.spanType = "LLM"` and its messages
on the client spans it records inside AutoGen's own agent spans) is still a model call, read by
the keys under the kind key's prefix (`conventions.model_call_reader`).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import Convention, SpanRole, model_call_reader
from otel_scorers.span_record import SpanRecord


def marked_model_calls(
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    claimed: Mapping[int, Convention],
) -> None:
    """In a trace whose readers found runs and no model call, give the model role to each span no
    reader claimed (in neither `roles` nor `claimed`) whose kind key names a model call."""
    if not roles or any(role == "model" for _, role in roles.values()):
        return  # the runs' model calls are their readers'
    if not any(role == "run" for _, role in roles.values()):
        return
    for span_id, span in by_id.items():
        if span_id not in roles and span_id not in claimed and (reader := model_call_reader(span)):
            roles[span_id] = (reader, "model")
