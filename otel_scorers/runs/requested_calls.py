"""Run building, phase 3 (a run's tool calls): the tool calls the model asked for, paired with the
tool spans that answered them.

A tool span answers the request with its call id, or else the first unanswered one of its name,
or else the one request given exactly its arguments; a request no span answers is an
`incomplete` call, or machinery when it names one of the run's handoffs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from otel_scorers.conventions.base import ModelCall
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import is_mapping, tool_call_parts
from otel_scorers.model import ToolCall, changed_tool_call


def call_start(call: ToolCall) -> int:
    """When the call started, 0 when unknown: the order of a run's tool calls."""
    return call.start_ns or 0


def match_requested_calls(
    tools: list[tuple[ToolCall, bool]],
    models: Sequence[ModelCall],
    internal_parts: set[int] | None = None,
    handoffs: frozenset[str] = frozenset(),
) -> list[ToolCall]:
    """Pair tool spans with the model's tool-call parts; unanswered parts become incomplete calls.

    `tools` pairs each call with whether it is framework machinery (`Convention.internal_tool`): such a
    call answers its part, then is left out (its part's index into `internal_parts`), as is an unanswered
    part naming one of the run's `handoffs`. Calls that start together keep the model's order.
    """
    requested, repeated = _requested(tools, models)
    if not requested:
        return [call for call, internal in tools if not internal]
    unmatched = list(range(len(requested)))
    # Ids are strings; anything else (a malformed part) cannot match and must not break the run.
    by_id = {
        part["id"]: index for index, (_, part) in enumerate(requested) if isinstance(part.get("id"), str)
    }
    matched: list[tuple[ToolCall, int]] = []
    for call, internal in tools:
        index = by_id.get(call.call_id) if call.call_id else None
        if index is None or index not in unmatched:
            index = next((i for i in unmatched if requested[i][1].get("name") == call.name), None)
        if index is None and call.call_id is None and not repeated:
            index = _asked_with_its_arguments(call, requested, unmatched)
            call = replace(call, name=str(requested[index][1].get("name"))) if index is not None else call
        if index is None:
            if not internal:
                matched.append((call, len(requested)))
            continue
        unmatched.remove(index)
        if internal:
            if internal_parts is not None:
                internal_parts.add(index)
            continue
        part = requested[index][1]
        arguments = part.get("arguments")
        if isinstance(arguments, (str, bytes)):  # `decode_json`'s own check, in line
            arguments = decode_json(arguments)
        # The model's arguments are an object; a tool span may hold a bare value (a LangChain
        # one-argument tool) or nothing: the object says more (`is_mapping` only of a non-dict).
        if arguments is not None and (
            call.arguments is None
            or (
                (type(arguments) is dict or is_mapping(arguments))
                and not (type(call.arguments) is dict or is_mapping(call.arguments))
            )
        ):
            call = changed_tool_call(call, arguments=arguments)
        if call.call_id is None and isinstance(part.get("id"), str):
            call = changed_tool_call(call, call_id=part["id"])
        matched.append((call, index))
    # Requests read from the history answer tool spans only: what none answered may be another's.
    if not repeated:
        matched.extend(_unanswered(requested, unmatched, handoffs, internal_parts))
    if len(matched) > 1:  # a sort calls its key for every item, even alone
        matched.sort(key=lambda pair: (call_start(pair[0]), pair[1]))
    return [call for call, _ in matched]


def _requested(
    tools: list[tuple[ToolCall, bool]], models: Sequence[ModelCall]
) -> tuple[list[tuple[int, Mapping[str, Any]]], bool]:
    """The tool-call parts the model calls asked for, with when, and whether they were read
    from the requests' history (no call's output records what it asked for)."""
    # `tool_call_parts` of each call's output, in line: asked of every run.
    requested: list[tuple[int, Mapping[str, Any]]] = [
        (model.start_ns, part)
        for model in models
        for message in model.output.items
        for part in message.get("parts", ())
        if part.get("type") == "tool_call"
    ]
    # Only spans that miss what a request holds are worth reading every request's history for.
    if requested or not any(
        call.arguments is None or call.result is None for call, internal in tools if not internal
    ):
        return requested, False
    return _requested_in_history(models), True


def _requested_in_history(models: Sequence[ModelCall]) -> list[tuple[int, Mapping[str, Any]]]:
    """The calls the model asked for, as the requests after them repeat them (the assistant's
    tool-call parts of their history), for model calls whose outputs record none (OpenLLMetry's
    OpenAI Agents spans of a chat-completions model: the request, never the reply): those the
    run's first request already held are earlier turns', not the run's."""
    if len(models) < 2:
        return []
    ordered = sorted(models, key=lambda model: model.start_ns)
    before = {part.get("id") for part in tool_call_parts(ordered[0].input.items)}
    found: list[tuple[int, Mapping[str, Any]]] = []
    for model in ordered[1:]:
        for part in tool_call_parts(model.input.items):
            call_id = part.get("id")
            if isinstance(call_id, str) and call_id not in before:
                before.add(call_id)
                found.append((model.start_ns, part))
    return found


def _asked_with_its_arguments(
    call: ToolCall, requested: Sequence[Any], unmatched: Sequence[int]
) -> int | None:
    """The one unanswered request given exactly the arguments of a tool span named by no request:
    named by what implements the tool (MLflow's AG2 autolog: the function registered as it)."""
    if not is_mapping(call.arguments) or any(part.get("name") == call.name for _, part in requested):
        return None
    found = [i for i in unmatched if decode_json(requested[i][1].get("arguments")) == call.arguments]
    return found[0] if len(found) == 1 else None


def _unanswered(
    requested: Sequence[tuple[int, Mapping[str, Any]]],
    unmatched: Sequence[int],
    handoffs: frozenset[str],
    internal_parts: set[int] | None,
) -> list[tuple[ToolCall, int]]:
    """The requested calls no tool span answered, as incomplete calls with their part's index;
    those naming one of the run's handoffs are machinery (their index into `internal_parts`)."""
    found = []
    for index in unmatched:
        start_ns, part = requested[index]
        if part.get("name") in handoffs:
            if internal_parts is not None:
                internal_parts.add(index)
            continue
        call = ToolCall(
            name=str(part.get("name") or ""),
            call_id=part.get("id") if isinstance(part.get("id"), str) else None,
            arguments=decode_json(part.get("arguments")),
            state="incomplete",
            start_ns=start_ns,
        )
        found.append((call, index))
    return found
