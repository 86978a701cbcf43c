"""Run building, phase 3 (a run's tool calls): what the model was sent back for each call (the
`tool_call_response` parts of the later model calls' requests) completes or fails it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from otel_scorers.conventions.base import ModelCall
from otel_scorers.conventions.formats.messages import decode_content, is_mapping, tool_response_value
from otel_scorers.conventions.formats.python_repr import is_default_repr
from otel_scorers.conventions.frameworks import results_in_history, sent_back_error
from otel_scorers.conventions.later_requests import unread_request
from otel_scorers.model import ToolCall, ToolState, changed_tool_call
from otel_scorers.runs.run_parts import RunParts, framework_of_run
from otel_scorers.runs.run_text import reduced_answer


def results_sent_back(calls: list[ToolCall], models: Sequence[ModelCall], parts: RunParts) -> list[ToolCall]:
    """What the model was sent back for a call (the `tool_call_response` part with its call id
    in a later model call's input; JSON text decoded, as a tool span's own result is: a
    chat-completions `tool` message holds the text the tool's value was sent as) is its result
    when the tool span carries none (AutoGen's) or
    only the default text of what the tool returned (a generator OpenLIT's Agno spans record),
    and a failure when the part says the call failed (OpenInference's AgentChat TOOL spans stay
    OK when the tool raised). A call that no tool span recorded but whose response the model
    got has run (OpenLLMetry's CrewAI instrumentation writes no tool spans): it is finished,
    failed when the run's framework sends a failure that way (`frameworks.sent_back_error`).
    Where the framework writes its steps into the request as text instead of parts (smolagents'
    `Observation:` messages), that text answers such a call, or fails it (`_from_history`)."""
    # Loops rather than calls of `all`, `any` and `tool_response_parts`: asked of every run.
    for call in calls:
        if call.call_id is not None:
            break
    else:
        return calls
    if _settled(calls) and not _may_fail(models):
        return calls
    sent: dict[str, Mapping[str, Any]] = {}
    for model in models:
        for message in model.input.items:
            for response_part in message.get("parts", ()):
                if response_part.get("type") == "tool_call_response" and isinstance(
                    response_part.get("id"), str
                ):
                    sent.setdefault(response_part["id"], response_part)
    failures: list[tuple[str, Any, str]] = []
    for call in calls:
        if call.state == "incomplete" and call.call_id not in sent:  # a call left unanswered
            failures = _from_history(sent, models, parts)
            break
    found = []
    for call in calls:
        part = sent.get(call.call_id) if call.call_id is not None else None
        if part is None:
            failure = _failure_of(call, failures) if call.state == "incomplete" and failures else None
            found.append(
                changed_tool_call(call, state="error", error=failure) if failure is not None else call
            )
            continue
        if call.state == "incomplete":
            found.append(_answered(call, part, parts))
            continue
        # A generator's or an object's default text is not what the tool gave the model, nor is
        # the whole state of an agent run as a tool (Haystack's `AgentTool`) whose answer it was.
        if call.result is None or is_default_repr(call.result) or _answer_sent(call.result, part):
            call = changed_tool_call(call, result=decode_content(tool_response_value(part)))
        # A result object with an error (Haystack's `{"error": ...}` on its tool span) that the
        # framework sent the model as a failure is the call's failure.
        if call.state in ("ok", "result_error") and (
            part.get("error") is True
            or (call.state == "result_error" and sent_back_error(parts.framework, tool_response_value(part)))
        ):
            response = tool_response_value(part)
            call = changed_tool_call(call, state="error", error=str(response) if response else "error")
        found.append(call)
    return found


def _settled(calls: list[ToolCall]) -> bool:
    """No call waits for what the model was sent back: none unanswered, and each with an id has
    a result of its own that is the tool's (no default text, no agent's state): a part sent back
    for it could only fail it (`"error": true`, `_may_fail`)."""
    for call in calls:
        state = call.state
        if state == "incomplete" or state == "result_error":
            return False
        if call.call_id is None:
            continue
        result = call.result
        if result is None or is_default_repr(result) or (is_mapping(result) and "messages" in result):
            return False
    return True


def _may_fail(models: Sequence[ModelCall]) -> bool:
    """A request may hold a response part that says its call failed (`"error": true`): a request
    not read yet (`later_requests`) whose text holds a `true`, which JSON cannot escape, or a
    request read whose parts hold one."""
    for model in models:
        text = unread_request(model)
        if text is not None:
            if "true" in text:
                return True
            continue
        for message in model.input.items:
            for part in message.get("parts", ()):
                if part.get("error") is True and part.get("type") == "tool_call_response":
                    return True
    return False


def _answered(call: ToolCall, part: Mapping[str, Any], parts: RunParts) -> ToolCall:
    """A call no tool span recorded, finished by the response the model was sent for it: its
    result, or its failure when the part or the run's framework says it failed."""
    response = tool_response_value(part)
    error = sent_back_error(parts.framework, response)
    state: ToolState = "error" if error is not None or part.get("error") is True else "ok"
    return changed_tool_call(
        call,
        state=state,
        result=decode_content(response) if state == "ok" else None,
        error=(error or str(response)) if state == "error" else None,
    )


def _from_history(
    sent: dict[str, Mapping[str, Any]], models: Sequence[ModelCall], parts: RunParts
) -> list[tuple[str, Any, str]]:
    """What the run's framework wrote into later requests' text of the calls before them
    (`frameworks.results_in_history`: smolagents' `Observation:` messages), for calls no part
    answered: each result into `sent` as the part it stands for; the failures, (tool, arguments,
    error), returned."""
    failures: list[tuple[str, Any, str]] = []
    framework = framework_of_run(parts)
    for model in models:
        for found in results_in_history(framework, model.input.items):
            for call_id, text in found.by_id.items():
                sent.setdefault(call_id, {"type": "tool_call_response", "id": call_id, "response": text})
            failures.extend(found.failures)
    return failures


def _failure_of(call: ToolCall, failures: list[tuple[str, Any, str]]) -> str | None:
    """The error the framework told the model of a call of this tool given these arguments (each
    told failure is one call's: taken from the list once found)."""
    for index, (name, arguments, error) in enumerate(failures):
        if name == call.name and arguments == call.arguments:
            del failures[index]
            return error
    return None


def _answer_sent(result: Any, part: Mapping[str, Any]) -> bool:
    """The model was sent, as the call's result, the answer the structure the span recorded holds."""
    if not is_mapping(result) or "messages" not in result:
        return False
    response = tool_response_value(part)
    return isinstance(response, str) and reduced_answer(result) == response
