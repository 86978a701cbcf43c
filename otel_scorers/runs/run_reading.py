"""Run building, phase 3: a run's spans, given to it, read as one `AgentRun`.

Input and output come from the run span when it carries them, else from its first and last
model spans; tool calls from its tool spans matched to the model's requests (`tool_matching`);
`missing` and `unrecorded` say what the trace does not hold of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from otel_scorers.conventions import Convention
from otel_scorers.conventions.base import Document, ModelCall, RunSpanContent
from otel_scorers.conventions.formats import tool_definitions
from otel_scorers.conventions.formats.messages import last_assistant_text, last_user_text, tool_call_parts
from otel_scorers.conventions.formats.parsed_texts import ParsedTexts, parsed_so_far, parsing_once
from otel_scorers.conventions.frameworks import request_in_prompt, step_fields
from otel_scorers.conventions.genai import finished_for_tools, names_no_tool
from otel_scorers.model import AgentRun, TokenUsage, ToolCall, ToolDefinition
from otel_scorers.runs.called_handoffs import called_handoffs
from otel_scorers.runs.context import run_context
from otel_scorers.runs.conversation_id import run_conversation_id
from otel_scorers.runs.lazy_run import LaterParts, ReadFields, lazy_run
from otel_scorers.runs.model_calls import model_calls
from otel_scorers.runs.run_parts import RunParts, agent_name_of, content_of, framework_of_run, untraced_calls
from otel_scorers.runs.run_text import FROM_MODEL_CALLS, span_text
from otel_scorers.runs.tool_matching import missing_tool_content, run_tool_calls, without_answer_call
from otel_scorers.runs.withheld_values import captured_calls, captured_text
from otel_scorers.span_record import SpanRecord


def read_run(parts: RunParts, parsed: ParsedTexts | None = None) -> AgentRun:
    """The run of these parts, read from its spans when first read (`lazy_run`), each message
    text parsed once with those of `parsed` (the trace's, `parsed_once`; by default the
    block's it is built in)."""
    return lazy_run(partial(parsing_once, parsed if parsed is not None else parsed_so_far(), _fields, parts))


def _fields(parts: RunParts) -> ReadFields:
    content = content_of(parts)
    sources: dict[str, str] = {}
    models = model_calls(parts, sources)
    tool_calls, internal_parts = run_tool_calls(parts, models)
    run_input = captured_text(_input_text(content, models, parts, sources))
    run_output, unrecorded = _run_output(parts, content, models, internal_parts, sources)
    run_output = captured_text(run_output)
    tool_calls = captured_calls(without_answer_call(tool_calls, models, run_output))
    unnamed = False
    for call in tool_calls:  # a loop, not `any` over a generator: asked of every run
        if names_no_tool(call.name):
            unnamed = True
            break
    if unnamed:  # tool spans that do not say which tool ran: the run's calls are not known
        tool_calls = [call for call in tool_calls if not names_no_tool(call.name)]
    agent_name = content.agent_name or parts.first_turn_agent
    handoffs = list(parts.handoffs)
    if not handoffs:
        tool_calls, handoffs = called_handoffs(tool_calls, agent_name)
    missing = _missing(parts, content, models, tool_calls, run_input, run_output)
    if unnamed:
        missing |= {"tool_calls", "tool_errors"}
    untraced = untraced_calls(parts, bool(models))  # whatever the capture settings
    missing, unrecorded = missing | untraced, unrecorded | untraced
    calls = tuple(tool_calls)
    run_span = parts.span
    final = parts.final
    end_ns = (final.span.end_ns if final is not None else run_span.end_ns) or run_span.start_ns
    status = final.span.status if final is not None and final.span.status == "error" else run_span.status
    # `ReadFields`, in its order (`lazy_run.READ_FIELDS`).
    return (
        partial(_later_parts, parts, content, models, calls),
        run_span.trace_id,
        run_span.span_id,
        run_span.parent_span_id,
        agent_name,
        run_input,
        run_output,
        calls,
        run_span.start_ns,
        end_ns,
        status,
        run_span.attributes,
        run_span.resource,
        parts.convention.name,
        frozenset(missing),
        frozenset(unrecorded),
        tuple(handoffs),
        agent_name_of(final)
        if final is not None
        else parts.final_name or (handoffs[-1].to_agent if handoffs else None),
        sources,
    )


def _later_parts(
    parts: RunParts, content: RunSpanContent, models: Sequence[ModelCall], tool_calls: tuple[ToolCall, ...]
) -> LaterParts:
    """What only some scorers read of a run, read when one of them is first read (`lazy_run`)."""
    run_span = parts.span
    first_model_input = next((m.input.items for m in models if m.input.captured), ())
    input_messages = content.input.items or first_model_input
    output_messages = content.output.items or next(
        (m.output.items for m in reversed(models) if m.output.captured), ()
    )
    return LaterParts(
        input_messages=tuple(input_messages),
        output_messages=tuple(output_messages),
        models=_models(content, models),
        # Joined by handoffs: the run spans' token aggregates count one agent each, so the
        # model spans are summed instead.
        usage=_usage(content if parts.final is None else RunSpanContent(), models),
        conversation_id=run_conversation_id(parts, content),
        context=run_context(
            run_span.attributes,
            (span.attributes for _, span in sorted(parts.models, key=lambda pair: pair[1].start_ns)),
            (*content.input.items, *first_model_input),
            _retrievals(parts),
            tool_calls,
        ),
        tool_definitions=_declared_tools(parts),
    )


def _declared_tools(parts: RunParts) -> tuple[ToolDefinition, ...]:
    """The tools the run's agent and model spans declare, named as the run's framework names its
    calls (`Framework.as_declared`)."""
    declared = tool_definitions.merge(
        [
            parts.convention.tool_definitions(parts.span),
            *(convention.tool_definitions(span) for convention, span in parts.models),
        ]
    )
    framework = framework_of_run(parts)
    return framework.as_declared(declared) if framework is not None else declared


def _run_output(
    parts: RunParts,
    content: RunSpanContent,
    models: Sequence[ModelCall],
    internal_parts: set[int],
    sources: dict[str, str],
) -> tuple[str | None, set[str]]:
    """The run's answer, and {"output"} when the trace as written cannot hold it (rather than
    content capture being off), else an empty set."""
    # Joined by handoffs: the answer is the last agent's.
    last = parts.final or parts
    last_content = content_of(last) if parts.final is not None else content
    # The span wrapping the agent that answered last holds its answer, else the first's.
    around = last.wrapper if last.wrapper is not None else parts.wrapper
    run_output = _output_text(last_content, models, last, around, sources)
    if run_output == "" and _handed_off(models, internal_parts):
        run_output = None
    unrecorded: set[str] = set()
    if run_output == "" and _went_on_unrecorded(last.models, models):
        run_output = None
        unrecorded.add("output")
    if run_output is None and (
        _answer_unrecorded(last_content, models, last.span)
        or (
            # The run span holds a call written after it returned, and not the last one: the
            # last, the answer, came after the span ended (LiteLLM's callback writing onto it).
            not models and content.input.captured and parts.convention.written_after_return(parts.span)
        )
    ):
        unrecorded.add("output")
    return run_output, unrecorded


def _missing(
    parts: RunParts,
    content: RunSpanContent,
    models: Sequence[ModelCall],
    tool_calls: Sequence[ToolCall],
    run_input: str | None,
    run_output: str | None,
) -> set[str]:
    """What the trace does not hold of the run (`AgentRun.missing`)."""
    missing: set[str] = set()
    if run_input is None:
        missing.add("input")
    if run_output is None:
        missing.add("output")
    if content.agent_name is None and parts.first_turn_agent is None:
        missing.add("agent_name")
    if tool_calls:
        missing |= missing_tool_content(tool_calls)
    for convention, span in parts.tools:
        if convention.failure_unrecorded(span):
            missing.add("tool_errors")
            break
    if (
        parts.convention.calls_only_in_messages(parts.span)
        # No tool span, though a model call's response asked for tools: they were not traced.
        or (not parts.tools and any(finished_for_tools(span.attributes) for _, span in parts.models))
    ) and not any(m.output.captured for m in models):
        missing |= {"tool_calls", "tool_errors"}
    return missing


def _retrievals(parts: RunParts) -> list[tuple[int, str, tuple[Document, ...]]]:
    """(span id, name, documents) of the run's retriever spans, in start order."""
    found = []
    for convention, span in sorted(parts.retrievers, key=lambda pair: pair[1].start_ns):
        found.append((span.span_id, span.name, tuple(convention.documents(span))))
    return found


def _input_text(
    content: RunSpanContent, models: Sequence[ModelCall], parts: RunParts, sources: dict[str, str]
) -> str | None:
    """The user's request: the run span's (its structure reduced), the wrapping span's, else the
    last user message of the run's first model call (`run_text`), out of the prompt the run's
    framework made of it (`request_in_prompt`); `sources` notes where from."""
    found = span_text(content, "input")
    if found is None or found.text is None:
        wrapper = span_text(content_of(parts.wrapper), "input", wrapper=True) if parts.wrapper else None
        if wrapper is not None and wrapper.text is not None:
            found = wrapper
    if found is not None and found.text is not None:
        if found.source is not None:
            sources["input"] = found.source
        # A run span may hold the prompt its framework made of the request, as a model call does.
        return request_in_prompt(parts.framework, found.text)
    for model in models:
        if model.input.captured:
            text = last_user_text(model.input.items)
            if text is not None:
                sources["input"] = FROM_MODEL_CALLS
            return request_in_prompt(parts.framework, text) if text is not None else None
    if found is not None and found.unfound is not None:
        sources["input"] = found.unfound
    return None


def _output_text(
    content: RunSpanContent,
    models: Sequence[ModelCall],
    parts: RunParts,
    around: RunParts | None,
    sources: dict[str, str],
) -> str | None:
    """The agent's answer: the run span's (its structure reduced), the wrapping span's, else the
    last model call's assistant text (`run_text`); `sources` notes where from."""
    steps = step_fields(parts.framework)
    found = span_text(content, "output", steps=steps)
    if found is None or found.text is None:
        wrapper = span_text(content_of(around), "output", wrapper=True, steps=steps) if around else None
        if wrapper is not None and wrapper.text is not None:
            found = wrapper
    if found is not None and found.text is not None:
        if found.source is not None:
            sources["output"] = found.source
        return found.text
    captured = [model for model in models if model.output.captured]
    if captured:
        # Content was captured: a run whose last model turn has no text gave no answer (""),
        # unless it failed before the model could answer (a tool raised, say): then there is none.
        text = last_assistant_text(captured[-1].output.items)
        if text:
            sources["output"] = FROM_MODEL_CALLS
            return text
        # No part at all in the last turn: its content was not recorded, rather than empty.
        if parts.span.status == "error" or not any(m.get("parts") for m in captured[-1].output.items):
            return None
        return ""
    if found is not None and found.unfound is not None:
        sources["output"] = found.unfound
        return None
    if content.output.captured:
        return ""
    return None


def _answer_unrecorded(content: RunSpanContent, models: Sequence[ModelCall], run_span: SpanRecord) -> bool:
    """The run has no answer because its instrumentation writes none, not because content capture
    was off: the model calls' input messages were captured, yet none of them recorded its output
    and the run span holds none (OpenLLMetry's OpenAI Agents spans with a chat-completions model).
    A run that failed may have ended before the model answered: that says nothing of the kind."""
    if run_span.status == "error" or content.output.captured or content.output_text is not None:
        return False
    return any(m.input.captured for m in models) and not any(m.output.captured for m in models)


def _went_on_unrecorded(spans: Sequence[tuple[Convention, SpanRecord]], models: Sequence[ModelCall]) -> bool:
    """The run's last model call asked for tools, and its instrumentation writes model calls
    after they returned (`Convention.written_after_return`): the call that followed the tools
    came too late for the trace as read, so the answer is not recorded, not empty."""
    if not models or not tool_call_parts(models[-1].output.items):
        return False
    return any(convention.written_after_return(span) for convention, span in spans)


def _handed_off(models: Sequence[ModelCall], internal_parts: set[int]) -> bool:
    """The last model turn only asked for framework machinery (a handoff to another agent): the
    run passed the conversation on instead of answering, so it has no output of its own."""
    if not models or not internal_parts:
        return False
    last = len(tool_call_parts(models[-1].output.items))
    total = sum(len(tool_call_parts(model.output.items)) for model in models)
    return last > 0 and all(index in internal_parts for index in range(total - last, total))


def _models(content: RunSpanContent, models: Sequence[ModelCall]) -> tuple[str, ...]:
    names = [model.model for model in models if model.model]
    if not names and content.model:
        names = [content.model]
    return tuple(dict.fromkeys(names))


def _usage(content: RunSpanContent, models: Sequence[ModelCall]) -> TokenUsage:
    # The run span's aggregate, when it has one, already sums its children: never add both.
    if content.input_tokens is not None or content.output_tokens is not None:
        return TokenUsage(content.input_tokens, content.output_tokens)
    inputs = [model.input_tokens for model in models if model.input_tokens is not None]
    outputs = [model.output_tokens for model in models if model.output_tokens is not None]
    return TokenUsage(sum(inputs) if inputs else None, sum(outputs) if outputs else None)
