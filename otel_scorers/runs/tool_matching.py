"""Run building, phase 3 (a run's tool calls): tool spans matched to the model's tool-call parts.

Tool spans are matched to the tool-call parts of the model's output by call id, or by order and
name when ids are absent; a requested call that no finished tool span answers is `incomplete`.
What the model was sent back for a call completes a tool span that recorded less.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from otel_scorers.conventions import Convention
from otel_scorers.conventions.base import ModelCall
from otel_scorers.conventions.formats import ag2, converse, langchain, llamaindex, mcp
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    handoff_tool_name,
    is_mapping,
    result_error_text,
    result_has_error,
)
from otel_scorers.conventions.formats.python_repr import decoded_value
from otel_scorers.conventions.formats.recorded_call import call_arguments, unwrapped
from otel_scorers.conventions.formats.typed_value import typed_call_values
from otel_scorers.conventions.frameworks import (
    Framework,
    framework_of_call,
    loop_tool,
    returned_error,
)
from otel_scorers.conventions.labelled_names import labelled_call
from otel_scorers.model import ToolCall, changed_tool_call
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.generic_io import tool_call_io
from otel_scorers.runs.requested_calls import call_start, match_requested_calls
from otel_scorers.runs.run_parts import RunParts, framework_of_run
from otel_scorers.runs.run_text import reduced_answer
from otel_scorers.runs.sent_back import results_sent_back
from otel_scorers.runs.unnamed_responses import answered_in_place
from otel_scorers.span_record import SpanRecord

#: The keys of a function response (Gemini's `FunctionResponse`): the call's id and tool, and
#: what the tool returned.
_FUNCTION_RESPONSE = frozenset({"id", "name", "response"})


def run_tool_calls(parts: RunParts, models: Sequence[ModelCall]) -> tuple[list[ToolCall], set[int]]:
    """The run's tool calls, and the indexes of the model's tool-call parts that framework
    machinery answered (`match_requested_calls`)."""
    framework = framework_of_run(parts) if parts.tools else None
    tools = [
        _tool_call(
            convention,
            span,
            _executions(parts.executions, span.span_id) if parts.executions else (),
            span.span_id in parts.handoff_tools,
            framework,
        )
        for convention, span in parts.tools
    ]
    handoff_names = _handoff_names(parts)
    if handoff_names:  # a tool span recording a handoff's call (`transfer_to_{agent}`): machinery
        tools = [(call, internal or call.name in handoff_names) for call, internal in tools]
    if parts.sub_runs:
        tools.extend((call, False) for call in parts.sub_runs)
    if len(tools) > 1:  # a sort calls its key for every item, even alone
        tools.sort(key=lambda pair: call_start(pair[0]))
    internal_parts: set[int] = set()
    tool_calls = [
        _failed_without_result(_as_the_tool_saw_it(call))
        for call in results_sent_back(
            answered_in_place(
                match_requested_calls(tools, models, internal_parts, handoff_names), models, parts.framework
            ),
            models,
            parts,
        )
    ]
    return tool_calls, internal_parts


def _executions(
    executions: Mapping[int, Sequence[tuple[Convention, SpanRecord]]], span_id: int
) -> Sequence[tuple[Convention, SpanRecord]]:
    """The tool spans inside a tool span, at any depth: a call's execution may be seen by more
    than one lower layer (an MCP client's span, and the server's inside it)."""
    found = list(executions.get(span_id, ()))
    index = 0
    # Each span is inside one tool span: the walk ends, bounded as a trace's depth is.
    while index < len(found) and index < MAX_DEPTH:
        found.extend(executions.get(found[index][1].span_id, ()))
        index += 1
    return found


def _handoff_names(parts: RunParts) -> frozenset[str]:
    """The tool names of the run's handoffs (the model asked for `transfer_to_{agent}`): framework
    machinery, not tool calls, whether a tool span recorded the call or none did."""
    if not parts.handoffs:  # most runs: no names to make
        return frozenset()
    return frozenset(handoff_tool_name(handoff.to_agent) for handoff in parts.handoffs if handoff.to_agent)


def _as_the_tool_saw_it(call: ToolCall) -> ToolCall:
    """The call's arguments and result as the tool saw them, also when its instrumentation wrote
    a Python repr or a framework's message object (`python_repr.decoded_value`), recorded the
    function's call (`recorded_call`), a LlamaIndex `ToolOutput` (whose `is_error` says the
    call failed) or AG2's `execute_function` (the model's request in, `[success, {content}]`
    out: `formats/ag2.py`), whichever reader claimed the span."""
    arguments, result = call.arguments, call.result
    # Most calls, as the tool saw them already: no text as a result that could be a repr, a
    # message object or JSON (`decoded_value`), and arguments that are none of the shapes read
    # below (a recorded call's `args` and `kwargs`, AG2's request's `arguments`): no reading
    # below changes them.
    if (
        result is None
        or (type(result) is str and result[:1] not in ("{", "[", "") and "tool_call_id=" not in result)
    ) and (
        arguments is None
        or (
            type(arguments) is dict
            and "args" not in arguments
            and "kwargs" not in arguments
            and "arguments" not in arguments
        )
    ):
        return call
    arguments = decoded_value(call.arguments) if isinstance(call.arguments, str) else call.arguments
    arguments = ag2.tool_arguments(call_arguments(arguments), call.name)
    result = decoded_value(call.result) if call.result is not None else None
    failed = False
    if (response := mcp.content_response(result) or converse.tool_result(result)) is not None:
        # A response of content items (MCP's, AgentScope's `ToolResponse`, a Converse
        # `toolResult`): what the tool returned.
        result, failure = response
        if failure is not None:
            return changed_tool_call(call, arguments=arguments, result=None, state="error", error=failure)
    if is_mapping(result) and "messages" in result and (answer := reduced_answer(result)) is not None:
        result = answer  # an agent's whole state, returned by a tool that ran it: its answer
    elif is_mapping(result):
        result, failed = llamaindex.tool_output(unwrapped(result))
    elif isinstance(result, list):
        # Message parts of text (the GenAI conventions', MCP's items), else AG2's `[success, {content}]`.
        result, succeeded = ag2.tool_result(mcp.text_parts_value(result))
        failed = succeeded is False
    if arguments is call.arguments and result is call.result:
        return call
    if failed and call.state == "ok":
        return changed_tool_call(call, arguments=arguments, result=result, state="error", error=str(result))
    return changed_tool_call(call, arguments=arguments, result=result)


def _tool_call(
    convention: Convention,
    span: SpanRecord,
    executions: Sequence[tuple[Convention, SpanRecord]],
    handed_off: bool = False,
    run_framework: Framework | None = None,
) -> tuple[ToolCall, bool]:
    """The span's call, and whether it is machinery rather than the agent's tool: a handoff
    (its reader's, or one the shared rule read: `handed_off`), or a loop-ending tool of its
    framework (`Framework.loop_tools`). A call whose execution failed failed, though the caller's
    span may not say so (an MCP server's error, which the calling framework hands the model as a
    result), and so did one whose result is its framework's text for a failure
    (`frameworks.returned_error`). Named, and its arguments read, as its framework calls it
    (`Framework.as_called`)."""
    call = labelled_call(convention.tool_call(span), span)
    arguments, result = call.arguments, call.result
    # `tool_call_io`'s and `_unwrapped_result`'s cheap checks in line, for the many calls whose
    # reader found arguments that are an object of no recorded call (no `kwargs`), not typed
    # (`typed_call_values`), and a result of text that is no object, or none, holding no error.
    if not (
        isinstance(arguments, dict)
        and "kwargs" not in arguments
        and (type(arguments) is not dict or len(arguments) != 2)
        and (result is not None or call.state != "ok")
        and call.state != "result_error"
        and (result is None or (type(result) is str and not result.startswith('{"')))
    ):
        call = _unwrapped_result(tool_call_io(call, span))
        arguments, result = call.arguments, call.result
    # `_langchain_recorded`'s and `_returned`'s cheap checks in line: most calls are neither.
    if (
        (isinstance(arguments, dict) and "input_str" in arguments)
        or (isinstance(result, dict) and not _MESSAGE_KEYS.isdisjoint(result))
        or (isinstance(result, str) and "tool_call_id" in result)
    ):
        call = _langchain_recorded(call)
    framework = framework_of_call(span, call, run_framework)
    if framework is not None:
        call = framework.as_called(call)
    result = call.result
    if framework is not None or isinstance(result, dict):
        result = _returned(call, framework)
    if result is not call.result:
        call = changed_tool_call(call, result=result)
    if call.state == "ok" and (error := returned_error(framework, result)):
        # The framework's text for a tool that raised, returned as its result (Qwen-Agent's).
        call = changed_tool_call(call, state="error", error=error)
    if call.state == "ok":
        for inner_convention, inner in executions:
            if mcp.records_tools_call(inner.attributes):  # asked whether it failed, not what it returned
                error = mcp.execution_failure(inner)
            else:
                inner_call = inner_convention.tool_call(inner)
                error = (inner_call.error or "error") if inner_call.state == "error" else None
            if error is not None:
                call = changed_tool_call(call, state="error", error=error)
                break
    return call, handed_off or convention.internal_tool(span) or loop_tool(
        framework, span, call.name, call.result
    )


def _unwrapped_result(call: ToolCall) -> ToolCall:
    """The call with the value its result wraps in a one-field object (`{"result": ...}`,
    `{"output": ...}`: `recorded_call.unwrapped`), before any reading of what the tool returned,
    whichever reader claimed the span; an error the wrapped value holds is the result's error."""
    arguments, result = typed_call_values(call.arguments, call.result)  # whichever reader claimed it
    if arguments is not call.arguments or result is not call.result:
        call = changed_tool_call(call, arguments=arguments, result=result)
    result = call.result
    if isinstance(result, str):
        if not result.startswith('{"'):  # the cheap check, for the many results of text
            return call
        result = decode_json(result)
    inner = unwrapped(result)
    if inner is result:
        return call
    if call.state == "ok" and result_has_error(inner):  # as its reader reads a result's error
        return changed_tool_call(call, result=inner, state="result_error", error=result_error_text(inner))
    return changed_tool_call(call, result=inner)


#: The keys one of which a serialised ToolMessage, or a `Command` carrying one, has at its top
#: (`langchain.tool_message`).
_MESSAGE_KEYS = frozenset({"tool_call_id", "data", "kwargs", "output", "update"})


def _langchain_recorded(call: ToolCall) -> ToolCall:
    """The call as the tool saw it when its span recorded what LangChain's callbacks pass, whichever
    reader claimed it: the arguments of a tool's start (`{"input_str", "inputs", "kwargs"}`), and a
    result that is a ToolMessage in any of its serialised shapes (`langchain.tool_message`): its
    content, the call id it answers, and a failure when its `status` is `error`."""
    arguments, result = call.arguments, call.result
    # Decoded JSON is a dict: the cheap checks first, for the many calls that are not LangChain's.
    started = (
        langchain.tool_start(arguments) if isinstance(arguments, dict) and "input_str" in arguments else None
    )
    message = (
        langchain.tool_message(result)
        if (isinstance(result, dict) and not _MESSAGE_KEYS.isdisjoint(result))
        or (isinstance(result, str) and "tool_call_id" in result)
        else None
    )
    if started is None and message is None:
        return call
    call_id = call.call_id
    if started is not None:
        arguments, call_id = started[0], call_id or started[1]
    state, error = call.state, call.error
    if message is not None:
        result = decode_json(message.get("content"))
        found_id = message.get("tool_call_id")
        call_id = call_id or (found_id if isinstance(found_id, str) else None)
        if state == "ok" and message.get("status") == "error":
            state, error = "error", str(result)
        elif state == "ok" and result_has_error(result):
            state, error = "result_error", result_error_text(result)
    return changed_tool_call(
        call, call_id=call_id, arguments=arguments, result=result, state=state, error=error
    )


def _returned(call: ToolCall, framework: Framework | None) -> Any:
    """What the tool returned, when its span recorded the function response the framework made
    of it for the model: the object naming the call (its tool, its id) around the `response`
    (Gemini's `FunctionResponse`, which ADK's tool spans hold under OpenInference), and the object
    the framework wraps a plain value in (`Framework.unwrapped`)."""
    result = call.result
    # Decoded JSON: a dict, so the cheap check (no ABC) is the whole check.
    if (
        isinstance(result, dict)
        and "response" in result
        and result.get("name") == call.name
        and result.keys() <= _FUNCTION_RESPONSE
    ):
        result = result["response"]
    return framework.unwrapped(result) if framework is not None else result


def without_answer_call(
    calls: list[ToolCall], models: Sequence[ModelCall], answer: str | None
) -> list[ToolCall]:
    """The run's tool calls without the one that delivered its answer: a tool the framework ends
    its loop with (a `final_answer` of any name), whose call is the run's last, that no model
    call followed, and whose argument is the run's answer. It is how the agent answered, not a
    tool it used. A tool whose result alone is the answer (returned to the user directly) was
    called with arguments of its own: it stays. The call may have no span of its own, only the
    model's request (`incomplete`): an instrumentation that records no tool calls (OpenTelemetry's
    smolagents one) leaves the answering tool asked for and never answered."""
    if not calls or not answer:
        return calls
    last = calls[-1]
    # Model calls are in start order: the last one says whether any came after the call.
    if (
        last.start_ns is None
        or (models and models[-1].start_ns > last.start_ns)
        or last.state not in ("ok", "incomplete")
    ):
        return calls
    arguments = last.arguments
    values = arguments.values() if isinstance(arguments, Mapping) else (arguments,)
    wanted = answer.strip()
    if any(isinstance(value, str) and value.strip() == wanted for value in values):
        return calls[:-1]
    return calls


def missing_tool_content(calls: Sequence[ToolCall]) -> set[str]:
    """Tool arguments and results the trace did not carry: none of the finished calls has any
    (one call without arguments or result is just a tool that takes or returns nothing)."""
    # One walk, not lists and `all` over generators: asked of every run with tool calls.
    finished = succeeded = with_arguments = with_results = False
    for call in calls:
        if call.state == "incomplete":
            continue
        finished = True
        with_arguments = with_arguments or call.arguments is not None
        if call.state == "ok":
            succeeded = True
            with_results = with_results or call.result is not None
    missing = set()
    if finished and not with_arguments:
        missing.add("tool_arguments")
    if succeeded and not with_results:
        missing.add("tool_results")
    return missing


def _failed_without_result(call: ToolCall) -> ToolCall:
    """A failed call returned nothing: what a framework records as its result (the error text it
    sends the model, a retry prompt) describes the failure, so it is the error, not a result."""
    if call.state != "error" or call.result is None:
        return call
    error = call.error if call.error is not None else str(call.result)
    return changed_tool_call(call, result=None, error=error)
