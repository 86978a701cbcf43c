"""Run building, phase 3 (a run's model calls): each model span read once per call, by the reader
that claimed it, completed by what other readers and lower layers see of the same call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from otel_scorers.conventions import Convention, also_reading, model_call_reader
from otel_scorers.conventions.base import Messages, ModelCall
from otel_scorers.conventions.formats import langchain
from otel_scorers.conventions.formats.messages import tool_call_parts
from otel_scorers.runs.model_spans import one_per_call
from otel_scorers.runs.run_parts import RunParts
from otel_scorers.runs.run_text import FROM_CONVERSATION_AROUND
from otel_scorers.span_record import SpanRecord


def model_calls(parts: RunParts, sources: dict[str, str]) -> list[ModelCall]:
    """The run's model calls in start order, one per call (`one_per_call`); when it has none, those
    of the conversation the span around it keeps (`sources` then says its tool calls came from it)."""
    if parts.models or parts.around is None:
        layers = parts.model_layers
        if not layers:  # most runs: no lower layer completes any of their calls
            # A loop, each call's reader asked in line: most calls hold their messages, and need
            # no other reader (`_model_call`).
            calls = []
            for convention, span in one_per_call(parts.models, parts.handed_within):
                call = convention.model_call(span)
                calls.append(
                    call
                    # The answer first: a later request is read only when asked (`later_requests`).
                    if call.output.captured or call.input.captured
                    else _read_elsewhere(call, convention, span)
                )
            return calls
        return [
            _with_lower_layers(_model_call(convention, span), layers.get(span.span_id, ()))
            for convention, span in one_per_call(parts.models, parts.handed_within)
        ]
    models = _held_conversation(parts.around)
    if any(tool_call_parts(model.output.items) for model in models):
        sources["tool_calls"] = FROM_CONVERSATION_AROUND
    return models


def _model_call(convention: Convention, span: SpanRecord) -> ModelCall:
    """The call as the reader that claimed its span reads it; when that finds no messages, with
    those another library's keys on the same span hold (`conventions.also_reading`: MLflow's
    `mlflow.spanInputs` on a Semantic Kernel model span, whose own content goes to log records),
    described or not (`conventions.model_call_reader`)."""
    call = convention.model_call(span)
    if call.input.captured or call.output.captured:
        return call
    return _read_elsewhere(call, convention, span)


def _read_elsewhere(call: ModelCall, convention: Convention, span: SpanRecord) -> ModelCall:
    """`call`, which the span's reader read without messages, with those another reader finds
    on the same span (`_model_call`)."""
    for other in (*also_reading(span, convention), model_call_reader(span)):
        if other is not None and other.role(span) == "model":
            found = other.model_call(span)
            if found.input.captured or found.output.captured:
                return replace(call, input=found.input, output=found.output)
    return call


def _with_lower_layers(call: ModelCall, layers: Sequence[tuple[Convention, SpanRecord]]) -> ModelCall:
    """The call as its outer span says it, with the model, the token counts and the messages it
    does not hold taken from the same call seen by a lower layer (DSPy's `Predict` module over
    its `LM`; a framework's generator component, recorded without messages, over the client's
    call)."""
    if not layers or (
        None not in (call.model, call.input_tokens, call.output_tokens)
        and call.input.captured
        and call.output.captured
    ):
        return call
    for convention, span in layers:
        lower = convention.model_call(span)
        call = replace(
            call,
            model=call.model or lower.model,
            input_tokens=call.input_tokens if call.input_tokens is not None else lower.input_tokens,
            output_tokens=call.output_tokens if call.output_tokens is not None else lower.output_tokens,
            input=call.input if call.input.captured else lower.input,
            output=call.output if call.output.captured else lower.output,
        )
    return call


def _held_conversation(around: tuple[Convention, SpanRecord]) -> list[ModelCall]:
    """The model calls of the conversation the span around a run keeps as its output (a
    framework's task result, `{"messages": [...]}`), when the run has none of its own: one per
    assistant turn, sent what came before it. Their tool requests, answered by the tool messages
    that follow, are the run's tool calls (`tool_matching`)."""
    convention, span = around
    output = convention.run_content(span).output_text
    messages = langchain.messages_of(output) if output and "messages" in output else None
    if not messages:
        return []
    return [
        ModelCall(
            span.span_id,
            span.start_ns + index,  # the turns' order: the conversation records no times
            input=Messages(tuple(messages[:index]), captured=True),
            output=Messages((message,), captured=True),
        )
        for index, message in enumerate(messages)
        if message.get("role") == "assistant"
    ]
