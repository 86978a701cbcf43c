"""What the model was sent back for a call it asked for without an id, read by its place.

A model's tool-call part written without an id (Qwen-Agent's calls, as LoongSuite records its
messages: `"id": null`) cannot be matched to a response by id. Where a later model call's input
holds the assistant message with that request, and the message right after it holds as many
responses as the request had calls, each response answers the call in its place. A call no tool
span recorded (an agent's call inside a tool's sub-agent) is then finished: its result what the
model was sent, failed when the run's framework sends a failure that way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from otel_scorers.conventions.base import ModelCall
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import decode_content, tool_response_value
from otel_scorers.conventions.frameworks import Framework, sent_back_error
from otel_scorers.model import ToolCall, ToolState, changed_tool_call


def answered_in_place(
    calls: list[ToolCall], models: Sequence[ModelCall], framework: Framework | None
) -> list[ToolCall]:
    """`calls` with each unanswered call without an id finished by the response in its place."""
    for call in calls:
        if call.call_id is None and call.state == "incomplete":
            break
    else:
        return calls  # most runs: a loop, not a generator, for them
    responses = _responses_in_place(models)
    if not responses:
        return calls
    found: list[ToolCall] = []
    for call in calls:
        if call.call_id is not None or call.state != "incomplete":
            found.append(call)
            continue
        index = next(
            (
                i
                for i, (name, arguments, _) in enumerate(responses)
                if name == call.name and arguments == call.arguments
            ),
            None,
        )
        if index is None:
            found.append(call)
            continue
        response = tool_response_value(responses.pop(index)[2])
        error = sent_back_error(framework, response)
        state: ToolState = "error" if error is not None else "ok"
        found.append(
            changed_tool_call(
                call,
                state=state,
                result=decode_content(response) if state == "ok" else None,
                error=error,
            )
        )
    return found


def _responses_in_place(models: Sequence[ModelCall]) -> list[tuple[Any, Any, Mapping[str, Any]]]:
    """(tool, arguments, response part) of each tool-call part without an id that the message
    after it answers, part for part, in the input of the last model call that holds any: each
    call's input repeats the conversation before it."""
    for model in reversed(models):
        items = model.input.items
        found: list[tuple[Any, Any, Mapping[str, Any]]] = []
        for message, following in pairwise(items):
            requested = [part for part in message.get("parts", ()) if part.get("type") == "tool_call"]
            if not requested or any(part.get("id") for part in requested):
                continue
            answers = [
                part for part in following.get("parts", ()) if part.get("type") == "tool_call_response"
            ]
            if len(answers) == len(requested):
                found.extend(
                    (part.get("name"), _arguments(part.get("arguments")), answer)
                    for part, answer in zip(requested, answers, strict=True)
                )
        if found:
            return found
    return []


def _arguments(value: Any) -> Any:
    return decode_json(value) if isinstance(value, str) else value
