"""Spans of one trace to `AgentRun`s: the rules every convention shares.

Each tool and model span belongs to its nearest run ancestor, so a sub-agent is its own run and
the outer run sees only the tool call that started it. Input and output come from the run span
when it carries them, else from its first and last model spans. Tool spans are matched to the
tool-call parts of the model's output by call id, or by order and name when ids are absent;
a requested call that no finished tool span answers is `incomplete`. When the run span names no
agent or holds no request or answer, the spans inside it that play no role may
(`Convention.step_content`): the first one's agent and request, the last one's answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from otel_scorers.conventions import Convention, SpanRole, detect
from otel_scorers.conventions.base import (
    UNNAMED_AGENT,
    Document,
    ModelCall,
    RunSpanContent,
    framework_tool,
)
from otel_scorers.conventions.formats import tool_definitions
from otel_scorers.conventions.formats.messages import (
    decode_json,
    last_assistant_text,
    last_user_text,
    tool_call_parts,
    tool_response_parts,
    tool_response_value,
)
from otel_scorers.model import AgentRun, Handoff, TokenUsage, ToolCall, ToolState
from otel_scorers.runs.ancestry import MAX_DEPTH, nearest_marked
from otel_scorers.runs.context import run_context
from otel_scorers.runs.conversation_id import conversation_id_of
from otel_scorers.span_record import OWN_SCOPE, SpanRecord


@dataclass(slots=True)
class _RunParts:
    span: SpanRecord
    convention: Convention
    tools: list[tuple[Convention, SpanRecord]] = field(default_factory=list)
    models: list[tuple[Convention, SpanRecord]] = field(default_factory=list)
    retrievers: list[tuple[Convention, SpanRecord]] = field(default_factory=list)
    #: Sub-agent runs started without a tool span, as the tool calls this run sees.
    sub_runs: list[ToolCall] = field(default_factory=list)
    #: Agents this run's conversation was handed to, in order, and the run that answered last.
    handoffs: list[Handoff] = field(default_factory=list)
    final: _RunParts | None = None
    #: The agent of the first turn a conversation absorbed (`Convention.absorbs_turns`).
    first_turn_agent: str | None = None
    #: What the run's own spans without a role said of it, in start order (`step_content`).
    steps: list[tuple[int, RunSpanContent]] = field(default_factory=list)
    #: The agent that answered last, when handoffs happened inside the run span itself.
    final_name: str | None = None
    #: Tool spans inside a tool span of the run, by the outer one's span id: that call's
    #: execution seen by a lower layer, which may know that it failed.
    executions: dict[int, list[tuple[Convention, SpanRecord]]] = field(default_factory=dict)
    #: The agent's name as the span around the run gives it (`Convention.name_within`).
    given_name: str | None = None


def build_runs(spans: Iterable[SpanRecord], only: Iterable[int] | None = None) -> list[AgentRun]:
    """Every run in `spans` (one trace), or only those whose run span id is in `only`."""
    by_id, roles, unroled = _roles(spans)
    runs: dict[int, _RunParts] = {
        span_id: _RunParts(by_id[span_id], convention)
        for span_id, (convention, role) in roles.items()
        if role == "run"
    }
    if not runs:
        return []
    parents = {span_id: span.parent_span_id for span_id, span in by_id.items()}
    _absorb_turns(runs, roles, parents)
    _name_within_parents(runs, by_id)
    # Each span's nearest run, shared by every walk up the tree below.
    owners: dict[int, _RunParts | None] = {}
    _give_roled_spans(runs, roles, by_id, parents, owners)
    _give_steps(runs, unroled, by_id, parents, owners)
    outer: dict[int, _RunParts | None] = {}
    for span_id, parts in runs.items():
        outer[span_id] = nearest_marked(parts.span.parent_span_id, parents, runs, owners)
        _add_sub_run_call(parts, by_id, roles, outer[span_id])

    wanted = set(only) if only is not None else None
    ordered = _join_handoffs(sorted(runs.values(), key=lambda parts: parts.span.start_ns), outer)
    return [_build(parts) for parts in ordered if wanted is None or parts.span.span_id in wanted]


def _roles(
    spans: Iterable[SpanRecord],
) -> tuple[dict[int, SpanRecord], dict[int, tuple[Convention, SpanRole]], dict[int, Convention]]:
    """The trace's spans by id (but the project's own), the role each plays as its convention
    detects it, and the convention of each span that plays none."""
    by_id: dict[int, SpanRecord] = {}
    roles: dict[int, tuple[Convention, SpanRole]] = {}
    unroled: dict[int, Convention] = {}
    for span in spans:
        if span.scope == OWN_SCOPE:
            continue
        by_id[span.span_id] = span
        found = detect(span)
        if found is None:
            continue
        role = found.role(span)
        if role is not None:
            roles[span.span_id] = (found, role)
        else:
            unroled[span.span_id] = found

    # An agent graph invoked from a tool may carry nothing that marks it a run: its place does.
    for span_id, span in by_id.items():
        parent_role = roles.get(span.parent_span_id) if span.parent_span_id is not None else None
        if span_id in roles or parent_role is None or parent_role[1] != "tool":
            continue
        convention = unroled.get(span_id)
        if convention is not None and convention.run_under_tool(span):
            roles[span_id] = (convention, "run")
            del unroled[span_id]
    return by_id, roles, unroled


def _name_within_parents(runs: Mapping[int, _RunParts], by_id: Mapping[int, SpanRecord]) -> None:
    """The agent's name as the span around each run gives it (`Convention.name_within`)."""
    for parts in runs.values():
        parent_id = parts.span.parent_span_id
        parent = by_id.get(parent_id) if parent_id is not None else None
        if parent is not None:
            parts.given_name = parts.convention.name_within(parts.span, parent)


def _give_roled_spans(
    runs: Mapping[int, _RunParts],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    by_id: Mapping[int, SpanRecord],
    parents: Mapping[int, int | None],
    owners: dict[int, _RunParts | None],
) -> None:
    """Each tool, model and retriever span to its nearest run."""
    # A model span inside another model span of the same run is the same call seen by a lower
    # layer (a framework's LLM span over an instrumented client's): only the outer one counts.
    # So is a tool span inside another tool span: the call's execution seen by a lower layer (an
    # MCP server continuing the caller's trace, a tool that calls a traced function).
    model_or_run = {
        span_id: role == "model" for span_id, (_, role) in roles.items() if role in ("model", "run")
    }
    tool_or_run = {
        span_id: span_id if role == "tool" else None
        for span_id, (_, role) in roles.items()
        if role in ("tool", "run")
    }
    in_model: dict[int, bool | None] = {}
    in_tool: dict[int, int | None] = {}
    for span_id, (convention, role) in roles.items():
        if role == "run":
            continue
        span = by_id[span_id]
        owner = nearest_marked(span.parent_span_id, parents, runs, owners)
        if owner is None:
            continue
        if role == "model" and nearest_marked(span.parent_span_id, parents, model_or_run, in_model):
            continue
        if role == "tool" and (
            outer_tool := nearest_marked(span.parent_span_id, parents, tool_or_run, in_tool)
        ):
            owner.executions.setdefault(outer_tool, []).append((convention, span))
            continue
        target = owner.tools if role == "tool" else owner.retrievers if role == "retriever" else owner.models
        target.append((convention, span))


def _give_steps(
    runs: Mapping[int, _RunParts],
    unroled: Mapping[int, Convention],
    by_id: Mapping[int, SpanRecord],
    parents: Mapping[int, int | None],
    owners: dict[int, _RunParts | None],
) -> None:
    """What each span without a role says of its nearest run (`Convention.step_content`)."""
    for span_id, convention in unroled.items():
        span = by_id[span_id]
        step = convention.step_content(span)
        if step is None:
            continue
        owner = nearest_marked(span.parent_span_id, parents, runs, owners)
        if owner is not None:
            owner.steps.append((span.start_ns, step))


def _absorb_turns(
    runs: dict[int, _RunParts],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    parents: Mapping[int, int | None],
) -> None:
    """Runs nested in a conversation that absorbs its turns, not through a tool span, are turns
    of it: they leave `runs`, so their spans belong to the conversation."""
    conversations = {span_id for span_id, parts in runs.items() if parts.convention.absorbs_turns(parts.span)}
    if not conversations:
        return
    for span_id, parts in sorted(runs.items(), key=lambda item: item[1].span.start_ns):
        current = parts.span.parent_span_id
        walked = {span_id}  # parent ids that loop end the walk at the first span seen twice
        for _ in range(MAX_DEPTH):
            if current is None or current in walked or roles.get(current, (None, None))[1] == "tool":
                break
            walked.add(current)
            if current in runs:
                outer = runs[current]
                if current in conversations:
                    if outer.first_turn_agent is None:
                        outer.first_turn_agent = parts.convention.run_content(parts.span).agent_name
                    del runs[span_id]
                break
            current = parents.get(current)


def _join_handoffs(ordered: list[_RunParts], outer: Mapping[int, _RunParts | None]) -> list[_RunParts]:
    """A run whose agent hands the conversation to another agent goes on in that agent's run
    (the next run of that agent beside it, in the same outer run): as the user sees it they
    are one run, that starts with the first agent and ends with the last one's answer. The later
    runs' spans join the first; they are not runs of their own."""
    joined: set[int] = set()
    for index, head in enumerate(ordered):
        if head.span.span_id in joined:
            continue
        current = head
        while (handoff := _last_handoff(current)) is not None:
            target, start_ns = handoff
            follower = next(
                (
                    parts
                    for parts in ordered[index + 1 :]
                    if parts.span.span_id not in joined
                    and parts is not current
                    # Inside the same outer run (none, for top-level runs), not inside the one
                    # handing over: siblings, or turns the framework delivers through message
                    # spans of their own (AutoGen's runtime).
                    and outer.get(parts.span.span_id) is outer.get(current.span.span_id)
                    and parts.span.start_ns >= start_ns
                    and (target == UNNAMED_AGENT or _agent_name(parts) == target)
                ),
                None,
            )
            if follower is None:
                if current is head:
                    _handoffs_within(head)
                break
            joined.add(follower.span.span_id)
            target = target or _agent_name(follower) or UNNAMED_AGENT
            head.handoffs.append(Handoff(_agent_name(current), target, start_ns))
            head.tools.extend(follower.tools)
            head.models.extend(follower.models)
            head.retrievers.extend(follower.retrievers)
            head.sub_runs.extend(follower.sub_runs)
            head.executions.update(follower.executions)
            head.final = current = follower
    return [parts for parts in ordered if parts.span.span_id not in joined]


def _handoffs_within(parts: _RunParts) -> None:
    """Handoffs to agents that have no run of their own: the agents take turns inside the one
    run span (LlamaIndex's `AgentWorkflow`). Each hands on from the agent handed to before."""
    agent = _agent_name(parts)
    found = []
    for convention, span in parts.tools:
        target = convention.handoff_target(span)
        if target:  # an unnamed agent has no turn inside the run span to hand to
            found.append((span.start_ns, target))
    for start_ns, target in sorted(found):
        parts.handoffs.append(Handoff(agent, target, start_ns))
        agent = target
    if found:
        parts.final_name = agent


def _last_handoff(parts: _RunParts) -> tuple[str, int] | None:
    """(agent handed to, when) of the run's last handoff tool span, if it has one."""
    found: tuple[str, int] | None = None
    for convention, span in parts.tools:
        target = convention.handoff_target(span)
        if target is not None and (found is None or span.start_ns >= found[1]):
            found = (target, span.start_ns)
    return found


def _agent_name(parts: _RunParts) -> str | None:
    return _content(parts).agent_name


def _content(parts: _RunParts) -> RunSpanContent:
    """The run span's content, with what its steps say where the run span says nothing."""
    content = parts.convention.run_content(parts.span)
    if parts.given_name is not None:
        content = replace(content, agent_name=parts.given_name)
    if not parts.steps or (
        content.agent_name is not None and content.output_text is not None and content.input_text is not None
    ):
        return content
    steps = [step for _, step in sorted(parts.steps, key=lambda pair: pair[0])]
    agent = next((step.agent_name for step in steps if step.agent_name is not None), None)
    request = next((step.input_text for step in steps if step.input_text is not None), None)
    answer = next((step.output_text for step in reversed(steps) if step.output_text is not None), None)
    return replace(
        content,
        agent_name=content.agent_name if content.agent_name is not None else agent,
        input_text=content.input_text if content.input_text is not None else request,
        output_text=content.output_text if content.output_text is not None else answer,
    )


def _add_sub_run_call(
    parts: _RunParts,
    by_id: Mapping[int, SpanRecord],
    roles: Mapping[int, tuple[Convention, SpanRole]],
    outer: _RunParts | None,
) -> None:
    """A run nested in another run's spans, not under a tool span, may be the answer to one of
    the outer model's tool-call parts (a managed agent): its convention says what call it was."""
    if outer is None:
        return
    parent_id = parts.span.parent_span_id
    parent = by_id.get(parent_id) if parent_id is not None else None
    if parent is not None and roles.get(parent.span_id, (None, None))[1] == "tool":
        return
    call = parts.convention.sub_run_call(parts.span, parent)
    if call is not None:
        outer.sub_runs.append(call)


def _build(parts: _RunParts) -> AgentRun:
    run_span = parts.span
    content = _content(parts)
    models = sorted((convention.model_call(span) for convention, span in parts.models), key=_start)
    tool_calls, internal_parts = _run_tool_calls(parts, models)
    run_input = _input_text(content, models, parts)
    run_output, unrecorded = _run_output(parts, content, models, internal_parts)
    missing = _missing(parts, content, models, tool_calls, run_input, run_output)
    first_model_input = next((m.input.items for m in models if m.input.captured), ())
    input_messages = content.input.items or first_model_input
    output_messages = content.output.items or next(
        (m.output.items for m in reversed(models) if m.output.captured), ()
    )
    context = run_context(
        run_span.attributes,
        (span.attributes for _, span in sorted(parts.models, key=lambda pair: pair[1].start_ns)),
        (*content.input.items, *first_model_input),
        _retrievals(parts),
        tool_calls,
    )
    final = parts.final
    end_ns = (final.span.end_ns if final is not None else run_span.end_ns) or run_span.start_ns
    status = final.span.status if final is not None and final.span.status == "error" else run_span.status
    return AgentRun(
        trace_id=run_span.trace_id,
        span_id=run_span.span_id,
        parent_span_id=run_span.parent_span_id,
        agent_name=content.agent_name or parts.first_turn_agent,
        input=run_input,
        output=run_output,
        tool_calls=tuple(tool_calls),
        input_messages=tuple(input_messages),
        output_messages=tuple(output_messages),
        models=_models(content, models),
        # Joined by handoffs: the run spans' token aggregates count one agent each, so the
        # model spans are summed instead.
        usage=_usage(content if parts.final is None else RunSpanContent(), models),
        start_ns=run_span.start_ns,
        end_ns=end_ns,
        status=status,
        conversation_id=content.conversation_id or conversation_id_of(run_span.attributes),
        attributes=run_span.attributes,
        resource=run_span.resource,
        convention=parts.convention.name,
        missing=frozenset(missing),
        unrecorded=frozenset(unrecorded),
        context=context,
        handoffs=tuple(parts.handoffs),
        final_agent=_agent_name(final) if final is not None else parts.final_name,
        tool_definitions=tool_definitions.merge(
            [
                parts.convention.tool_definitions(run_span),
                *(convention.tool_definitions(span) for convention, span in parts.models),
            ]
        ),
    )


def _run_tool_calls(parts: _RunParts, models: Sequence[ModelCall]) -> tuple[list[ToolCall], set[int]]:
    """The run's tool calls, and the indexes of the model's tool-call parts that framework
    machinery answered (`_match_requested_calls`)."""
    tools = sorted(
        [
            _tool_call(convention, span, parts.executions.get(span.span_id, ()))
            for convention, span in parts.tools
        ]
        + [(call, False) for call in parts.sub_runs],
        key=lambda pair: _start_call(pair[0]),
    )
    internal_parts: set[int] = set()
    tool_calls = [
        _failed_without_result(call)
        for call in _results_sent_back(
            _match_requested_calls(tools, models, parts.span, internal_parts), models, parts
        )
    ]
    return tool_calls, internal_parts


def _run_output(
    parts: _RunParts, content: RunSpanContent, models: Sequence[ModelCall], internal_parts: set[int]
) -> tuple[str | None, set[str]]:
    """The run's answer, and {"output"} when the trace as written cannot hold it (rather than
    content capture being off), else an empty set."""
    # Joined by handoffs: the answer is the last agent's.
    last = parts.final or parts
    last_content = _content(last) if parts.final is not None else content
    run_output = _output_text(last_content, models, last.span)
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
    parts: _RunParts,
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
    missing |= _missing_tool_content(tool_calls)
    if any(convention.failure_unrecorded(span) for convention, span in parts.tools):
        missing.add("tool_errors")
    if parts.convention.calls_only_in_messages(parts.span) and not any(m.output.captured for m in models):
        missing |= {"tool_calls", "tool_errors"}
    return missing


def _tool_call(
    convention: Convention, span: SpanRecord, executions: Sequence[tuple[Convention, SpanRecord]]
) -> tuple[ToolCall, bool]:
    """The span's call, and whether it is machinery rather than the agent's tool: a handoff, or
    a loop-ending tool of its framework (`FRAMEWORK_TOOLS`). A call whose execution failed
    failed, though the caller's span may not say so (an MCP server's error, which the calling
    framework hands the model as a result)."""
    call = convention.tool_call(span)
    if call.state == "ok":
        for inner_convention, inner in executions:
            inner_call = inner_convention.tool_call(inner)
            if inner_call.state == "error":
                call = replace(call, state="error", error=inner_call.error or "error")
                break
    return call, convention.internal_tool(span) or framework_tool(span, call.name)


def _retrievals(parts: _RunParts) -> list[tuple[int, str, tuple[Document, ...]]]:
    """(span id, name, documents) of the run's retriever spans, in start order."""
    found = []
    for convention, span in sorted(parts.retrievers, key=lambda pair: pair[1].start_ns):
        found.append((span.span_id, span.name, tuple(convention.documents(span))))
    return found


def _missing_tool_content(calls: Sequence[ToolCall]) -> set[str]:
    """Tool arguments and results the trace did not carry: none of the finished calls has any
    (one call without arguments or result is just a tool that takes or returns nothing)."""
    finished = [call for call in calls if call.state != "incomplete"]
    missing = set()
    if finished and all(call.arguments is None for call in finished):
        missing.add("tool_arguments")
    succeeded = [call for call in finished if call.state == "ok"]
    if succeeded and all(call.result is None for call in succeeded):
        missing.add("tool_results")
    return missing


def _results_sent_back(
    calls: list[ToolCall], models: Sequence[ModelCall], parts: _RunParts
) -> list[ToolCall]:
    """What the model was sent back for a call (the `tool_call_response` part with its call id
    in a later model call's input) is its result when the tool span carries none (AutoGen's),
    and a failure when the part says the call failed (OpenInference's AgentChat TOOL spans stay
    OK when the tool raised). A call that no tool span recorded but whose response the model
    got has run (OpenLLMetry's CrewAI instrumentation writes no tool spans): it is finished,
    failed when the run's convention reads the response as a failure
    (`Convention.sent_back_error`)."""
    if all(call.call_id is None for call in calls):
        return calls
    sent: dict[str, Mapping[str, Any]] = {}
    for model in models:
        for response_part in tool_response_parts(model.input.items):
            if isinstance(response_part.get("id"), str):
                sent.setdefault(response_part["id"], response_part)
    found = []
    for call in calls:
        part = sent.get(call.call_id) if call.call_id is not None else None
        if part is None:
            found.append(call)
            continue
        if call.state == "incomplete":
            response = tool_response_value(part)
            error = parts.convention.sent_back_error(parts.span, response)
            state: ToolState = "error" if error is not None or part.get("error") is True else "ok"
            found.append(
                replace(
                    call,
                    state=state,
                    result=response if state == "ok" else None,
                    error=(error or str(response)) if state == "error" else None,
                )
            )
            continue
        if call.result is None:
            call = replace(call, result=tool_response_value(part))
        if part.get("error") is True and call.state == "ok":
            response = tool_response_value(part)
            call = replace(call, state="error", error=str(response) if response else "error")
        found.append(call)
    return found


def _failed_without_result(call: ToolCall) -> ToolCall:
    """A failed call returned nothing: what a framework records as its result (the error text it
    sends the model, a retry prompt) describes the failure, so it is the error, not a result."""
    if call.state != "error" or call.result is None:
        return call
    error = call.error if call.error is not None else str(call.result)
    return replace(call, result=None, error=error)


def _start(model: ModelCall) -> int:
    return model.start_ns


def _start_call(call: ToolCall) -> int:
    return call.start_ns or 0


def _input_text(content: RunSpanContent, models: Sequence[ModelCall], parts: _RunParts) -> str | None:
    if content.input_text is not None:
        return content.input_text
    if content.input.captured:
        text = last_user_text(content.input.items)
        if text is not None:
            return text
    for model in models:
        if model.input.captured:
            text = last_user_text(model.input.items)
            return parts.convention.prompt_input(parts.span, text) if text is not None else None
    return None


def _output_text(content: RunSpanContent, models: Sequence[ModelCall], run_span: SpanRecord) -> str | None:
    if content.output_text is not None:
        return content.output_text
    if content.output.captured:
        text = last_assistant_text(content.output.items)
        if text is not None:
            return text
    captured = [model for model in models if model.output.captured]
    if captured:
        # Content was captured: a run whose last model turn has no text gave no answer (""),
        # unless it failed before the model could answer (a tool raised, say): then there is none.
        text = last_assistant_text(captured[-1].output.items)
        return text if text is not None else (None if run_span.status == "error" else "")
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


def _match_requested_calls(
    tools: list[tuple[ToolCall, bool]],
    models: Sequence[ModelCall],
    run_span: SpanRecord,
    internal_parts: set[int] | None = None,
) -> list[ToolCall]:
    """Pair tool spans with the model's tool-call parts; unanswered parts become incomplete calls.

    `tools` pairs each call with whether it is framework machinery (`Convention.internal_tool`): such a
    call answers its part, then is left out (its part's index goes into `internal_parts`).
    Calls that start together keep the order in which the model asked for them.
    """
    requested: list[tuple[int, Mapping[str, Any]]] = [
        (model.start_ns, part) for model in models for part in tool_call_parts(model.output.items)
    ]
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
        arguments = decode_json(part.get("arguments"))
        # The model's arguments are an object; a tool span may hold a bare value (a LangChain
        # one-argument tool) or nothing: the object says more.
        if arguments is not None and (
            call.arguments is None
            or (isinstance(arguments, Mapping) and not isinstance(call.arguments, Mapping))
        ):
            call = replace(call, arguments=arguments)
        if call.call_id is None and isinstance(part.get("id"), str):
            call = replace(call, call_id=part["id"])
        matched.append((call, index))
    for index in unmatched:
        start_ns, part = requested[index]
        call = ToolCall(
            name=str(part.get("name") or ""),
            call_id=part.get("id") if isinstance(part.get("id"), str) else None,
            arguments=decode_json(part.get("arguments")),
            state="incomplete",
            start_ns=start_ns,
        )
        matched.append((call, index))
    matched.sort(key=lambda pair: (_start_call(pair[0]), pair[1]))
    return [call for call, _ in matched]


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
