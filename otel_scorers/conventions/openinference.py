"""OpenInference (`openinference.span.kind`): AGENT, TOOL, LLM spans with flattened messages.

One mapper for every framework OpenInference instruments, with the few rules that tell their
layouts apart: OpenAI Agents (a root AGENT "Agent workflow" that is the trace, not an agent;
handoff spans), LangChain/LangGraph (graph nodes marked AGENT; runs named in `metadata`;
ToolMessage results), smolagents (`{name}.run` AGENT spans, tool arguments under `kwargs`,
the `final_answer` tool that is the answer, managed agents started without a tool span) and
LlamaIndex (a CHAIN `{AgentClass}.run` workflow span, its steps naming the agent; see
`formats.llamaindex`) and Haystack (a CHAIN `Agent.run` span whose tools run without spans, so
its calls are read from the messages, written as Python reprs; see `formats.haystack`), DSPy (a
CHAIN `ReAct.forward` span, `{tool}.__call__` TOOL spans) and BeeAI (its emitter events written
as child spans with `metadata.path`, which are not components).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions import ag2, autogen
from otel_scorers.conventions.base import (
    Convention,
    Document,
    Markers,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats import ag2 as ag2_objects
from otel_scorers.conventions.formats import haystack, langchain, llamaindex
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    handoff_tool_name,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.frameworks import agent_in_span_name
from otel_scorers.conventions.openinference_frameworks import (
    beeai_call_event,
    beeai_event,
    dspy_agent_class,
    dspy_span,
    haystack_span,
)
from otel_scorers.conventions.openinference_scopes import (
    AUTOGEN,
    BEEAI_EVENT,
    BEEAI_JS_EVENT,
    DOCUMENT_KEY,
    DOCUMENTS,
    DSPY_RUN_SUFFIXES,
    DSPY_TOOL_SUFFIX,
    HANDOFF_PREFIX,
    HANDOFF_TOOL_PREFIX,
    HAYSTACK_PIPELINES,
    HAYSTACK_RUN_SUFFIXES,
    KIND,
    LANGCHAIN,
    LANGCHAIN_JS,
    LLAMA_INDEX,
    LLAMA_INDEX_PREPARE,
    LLAMA_INDEX_RUN_SUFFIX,
    OPENAI_AGENTS,
    OPENINFERENCE,
    REDACTED,
    SMOLAGENTS,
    SMOLAGENTS_MAX_STEPS,
)
from otel_scorers.conventions.openinference_text import (
    content_value,
    crewai_span,
    flattened_messages,
    llama_index_span,
    responses_output,
    run_input,
    run_output,
    tool_arguments,
)
from otel_scorers.conventions.openllmetry_bridged import rewritten_kind
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord


class OpenInferenceConvention(Convention):
    name = OPENINFERENCE
    # AutoGen's Swarm hands the conversation from agent to agent inside its CHAIN span: the trace
    # stays open until it ends, so the agents handed to join the run in-process too.
    # A Haystack pipeline names the agents it runs (`name_within`) and ends after them: it keeps
    # its trace open as a run span would, so that its agents are read with it.
    run_start_names: tuple[str, ...] = (
        "Swarm.run_stream",
        "Agent.run",
        "ReAct.forward",
        "ReAct.aforward",
        *HAYSTACK_PIPELINES,
    )
    run_start_markers: tuple[tuple[str, str | None], ...] = ((KIND, "AGENT"),)
    # LangChain's and LlamaIndex's instrumentations set every attribute (span kind included)
    # when a span ends.
    run_start_scopes: tuple[str, ...] = (LANGCHAIN, LANGCHAIN_JS, LLAMA_INDEX)

    markers = Markers(keys=frozenset({KIND}))

    def detect(self, span: SpanRecord) -> bool:
        return KIND in span.attributes

    def role(self, span: SpanRecord) -> SpanRole | None:
        attributes = span.attributes
        kind = attributes.get(KIND)
        if (BEEAI_EVENT in attributes or BEEAI_JS_EVENT in attributes) and beeai_event(span) is not None:
            # A BeeAI emitter event, under any scope: a record of its parent, but where the
            # event of a call's outcome is its only span (BeeAI for TypeScript).
            if beeai_call_event(span) is not None and kind in ("TOOL", "LLM"):
                return "tool" if kind == "TOOL" else "model"
            return None
        if kind == "LLM":
            if span.name.endswith(LLAMA_INDEX_PREPARE):  # a method of LlamaIndex's, under any scope
                return None
            return "model"
        if kind == "TOOL":
            return "tool"
        if kind == "RETRIEVER":
            return "retriever"
        if kind == "AGENT":
            if ag2.is_turn(span):
                return None  # a turn of an AG2 chat, under any scope: the chat is the run
            if "tool.name" in span.attributes:
                return "tool"  # a tool marked AGENT (LangChain's, when its name contains "agent")
            return "run" if _is_agent_run(span) else None
        # A LangChain run is marked AGENT only when its name contains "agent": an agent graph
        # named otherwise is a CHAIN span, a run by LangChain's metadata whichever reader claimed
        # it (`runs.span_roles`).
        if kind == "CHAIN" and llama_index_span(span):
            return "run" if _is_llama_index_run(span) else None
        # The name's ending first: a lookup for the many CHAIN spans that are not DSPy's.
        if kind == "CHAIN" and span.name.endswith(DSPY_RUN_SUFFIXES) and dspy_agent_class(span) is not None:
            return "run"
        if kind == "CHAIN" and haystack_span(span):
            return "run" if _haystack_agent_class(span) is not None else None
        return None

    def documents(self, span: SpanRecord) -> tuple[Document, ...]:
        """`retrieval.documents.{i}.document.content` (and `.id`), flattened, in index order."""
        found: dict[int, dict[str, str]] = {}
        for key, value in span.attributes.items():
            if not key.startswith(DOCUMENTS):
                continue
            match = DOCUMENT_KEY.fullmatch(key)
            text = as_str(value)
            if match is not None and text is not None and text not in REDACTED:
                found.setdefault(int(match.group(1)), {})[match.group(2)] = text
        return tuple(
            Document(fields["content"], fields.get("id"))
            for _, fields in sorted(found.items())
            if fields.get("content")
        )

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        if attributes.get(KIND) == "CHAIN" and llama_index_span(span):
            # The workflow span names no agent, its input is the workflow's state and its output
            # a shortened repr: the steps say who ran and what it answered (`step_content`).
            return RunSpanContent(
                model=as_str(attributes.get("llm.model_name")),
                conversation_id=as_str(attributes.get("session.id")),
            )
        return RunSpanContent(
            agent_name=_agent_name(span),
            input_text=run_input(span),
            output_text=run_output(span),
            model=as_str(attributes.get("llm.model_name")),
            input_tokens=as_int(attributes.get("llm.token_count.prompt")),
            output_tokens=as_int(attributes.get("llm.token_count.completion")),
            conversation_id=as_str(attributes.get("session.id")),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        name = as_str(attributes.get("tool.name")) or beeai_call_event(span) or span.name
        if "tool.name" not in attributes:
            name = name.removesuffix(DSPY_TOOL_SUFFIX)  # DSPy's `{tool}.__call__`, under any scope
        call_id = as_str(attributes.get("tool.id")) or as_str(attributes.get("tool_call.id"))
        if _handoff_span(span):
            name = handoff_tool_name(self.handoff_target(span) or "")
        # The bare generic `input` (`runs/generic_io.py`) before the parameters' declaration.
        arguments = tool_arguments(
            span, attributes.get("input.value", attributes.get("input", attributes.get("tool.parameters")))
        )
        result = content_value(attributes.get("output.value"))
        failed = False
        if llama_index_span(span):
            result, failed = llamaindex.tool_output(result)
        else:
            # A LangChain ToolMessage is read as the tool's result by every reader (`runs.tool_matching`).
            result = decode_json(result)
        succeeded = None
        if span.scope == ag2.SCOPE:
            # Read here too (`tool_matching` reads it for every reader), so that the call is
            # built once: AG2's `[success, {content}]`.
            result, succeeded = ag2_objects.tool_result(result)
        state, error = tool_state(span, result)
        if state == "ok" and succeeded is False:
            state, error = "error", str(result)
        if state == "ok" and failed:
            state, error = "error", str(result)
        return span_tool_call(
            span, name=name, call_id=call_id, arguments=arguments, result=result, state=state, error=error
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        # Under any scope a Haystack component's span is `{Component}.run`: the name first.
        if span.name.endswith(HAYSTACK_RUN_SUFFIXES) and haystack_span(span):
            # The flattened messages drop the call ids and the tool results; the reprs keep them.
            input_messages = haystack.component_messages(
                content_value(attributes.get("input.value")), "messages"
            )
            output = haystack.component_messages(content_value(attributes.get("output.value")), "replies")
        else:
            input_messages = flattened_messages(attributes, "llm.input_messages.")
            output = flattened_messages(attributes, "llm.output_messages.")
        if not output.captured:
            output = responses_output(attributes.get("output.value"))
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=input_messages,
            output=output,
            model=as_str(attributes.get("llm.model_name")),
            input_tokens=as_int(attributes.get("llm.token_count.prompt")),
            output_tokens=as_int(attributes.get("llm.token_count.completion")),
        )

    def name_within(self, run_span: SpanRecord, parent: SpanRecord) -> str | None:
        """A Haystack agent run by a pipeline: the name it was added under; run by another agent
        as a tool (`AgentTool`, directly under the caller's span): the tool's name."""
        if not (haystack_span(run_span) and haystack_span(parent)):
            return None
        attributes, around = run_span.attributes, parent.attributes
        if _haystack_agent_class(parent) is not None:
            return haystack.tool_agent_name(
                content_value(attributes.get("output.value")), content_value(around.get("output.value"))
            )
        if not parent.name.startswith(HAYSTACK_PIPELINES):
            return None
        return haystack.component_name(
            content_value(attributes.get("input.value")),
            content_value(attributes.get("output.value")),
            content_value(around.get("input.value")),
            content_value(around.get("output.value")),
        )

    def run_under_tool(self, span: SpanRecord) -> bool:
        """A LangGraph graph invoked from a tool: a span holding LangChain's metadata (the calling
        graph's) whose input is a graph's messages state."""
        if span.attributes.get(KIND) not in ("CHAIN", "AGENT") or not _metadata(span):
            return False
        return langchain.messages_of(content_value(span.attributes.get("input.value"))) is not None

    def handoff_target(self, span: SpanRecord) -> str | None:
        if span.scope == AUTOGEN:  # a Swarm's transfer_to_{agent} tool
            return autogen.handoff_target(
                span.attributes.get("tool.name"), span.attributes.get("tool.description")
            )
        # Under any other scope, AutoGen's by the description it gives the tool.
        target = autogen.default_handoff_target(
            span.attributes.get("tool.name"), span.attributes.get("tool.description")
        )
        if target is not None:
            return target
        if span.attributes.get("tool.name") == llamaindex.HANDOFF_TOOL and llama_index_span(span):
            arguments = tool_arguments(span, span.attributes.get("input.value"))
            return llamaindex.handoff_target(llamaindex.HANDOFF_TOOL, arguments)
        if not _handoff_span(span):
            return None
        # The SDK records the agent handed to: its name, or (the TypeScript SDK) `{"to_agent": name}`.
        target = content_value(span.attributes.get("output.value"))
        decoded = decode_json(target) if isinstance(target, str) and target.startswith("{") else None
        if isinstance(decoded, Mapping):
            target = decoded.get("to_agent")
        return target if isinstance(target, str) and target else span.name[len(HANDOFF_PREFIX) :]

    def internal_tool(self, span: SpanRecord) -> bool:
        if _handoff_span(span):
            return True  # OpenAI Agents: a handoff is an agent transition, not a tool call
        tool = as_str(span.attributes.get("tool.name")) or ""
        if span.scope == AUTOGEN or tool.startswith(autogen.HANDOFF_PREFIX):
            return self.handoff_target(span) is not None
        return span.attributes.get("tool.name") == llamaindex.HANDOFF_TOOL and llama_index_span(span)

    def sub_run_call(self, run_span: SpanRecord, parent: SpanRecord | None) -> ToolCall | None:
        """smolagents' managed agent: the manager's model calls it like a tool, but its run sits
        directly under the manager's step span, whose output is what the manager was told."""
        if parent is None or not (
            run_span.scope == SMOLAGENTS or SMOLAGENTS_MAX_STEPS in run_span.attributes
        ):
            return None
        result = content_value(run_span.attributes.get("output.value"))
        step_output = content_value(parent.attributes.get("output.value"))
        if isinstance(step_output, str) and (result is None or str(result) in step_output):
            result = step_output
        failed = run_span.status == "error"
        return ToolCall(
            name=_agent_name(run_span) or run_span.name,
            result=None if failed else result,
            state="error" if failed else ("ok" if run_span.ended else "incomplete"),
            error=run_span.status_message if failed else None,
            start_ns=run_span.start_ns,
            end_ns=run_span.end_ns,
        )

    def step_content(self, span: SpanRecord) -> RunSpanContent | None:
        """A LlamaIndex workflow step: the event it got (`input.value` `ev`, a Python repr) names
        the agent at work (`AgentInput` / `AgentSetup`) or holds its answer (`AgentOutput`)."""
        if span.attributes.get(KIND) != "CHAIN" or not llama_index_span(span):
            return None
        event = llamaindex.step_event(content_value(span.attributes.get("input.value")))
        if event is None:
            return None
        agent = llamaindex.repr_agent_name(event)
        if agent is not None:
            return RunSpanContent(agent_name=agent)
        answer = llamaindex.repr_answer(event)
        return RunSpanContent(output_text=answer) if answer is not None else None


def _is_llama_index_run(span: SpanRecord) -> bool:
    """An agent's workflow run: `{AgentClass}.run`, or any workflow run started with the agents'
    start event (a custom agent class)."""
    if not span.name.endswith(LLAMA_INDEX_RUN_SUFFIX):
        return False
    if llamaindex.is_agent_class(span.name, LLAMA_INDEX_RUN_SUFFIX):
        return True
    started = decode_json(content_value(span.attributes.get("input.value")))
    event = started.get("start_event") if isinstance(started, Mapping) else None
    return isinstance(event, str) and event.startswith("AgentWorkflowStartEvent(")


def _haystack_agent_class(span: SpanRecord) -> str | None:
    """The agent class of a Haystack `{Class}.run` span, when the class is an agent: Haystack's
    `Agent` or a class named like one; pipelines and other components are not runs."""
    for suffix in HAYSTACK_RUN_SUFFIXES:
        if span.name.endswith(suffix):
            name = span.name[: -len(suffix)]
            return name if name.endswith("Agent") else None
    return None


_metadata = langchain.span_metadata


def _is_agent_run(span: SpanRecord) -> bool:
    attributes = span.attributes
    if span.scope == OPENAI_AGENTS:
        # The root AGENT span is the whole trace ("Agent workflow"); agents carry agent.name, or
        # (releases before 2) only their node in the agents' graph, `graph.node.id`.
        return "agent.name" in attributes or "graph.node.id" in attributes
    # A graph node whose name contains "agent" is marked AGENT too (create_react_agent's model
    # node): a run is the graph itself, not one of its nodes, as LangChain's metadata says.
    return not langchain.is_graph_node(_metadata(span), span.name)


def _agent_name(span: SpanRecord) -> str | None:
    attributes = span.attributes
    if (recipient := ag2.chat_agent(span)) is not None:
        return recipient  # agent.name is the agent that started the chat
    name = as_str(attributes.get("agent.name")) or as_str(attributes.get("graph.node.name"))
    if name:
        return name
    if haystack_span(span):
        return _haystack_agent_class(span) or span.name or None  # Haystack agents have no name
    if dspy_span(span):
        return dspy_agent_class(span) or span.name or None  # nor have DSPy modules
    if crewai_span(span) and as_str(attributes.get("graph.node.id")):
        return as_str(attributes.get("graph.node.id"))  # the agent's role, on task and kickoff spans
    if span.scope == OPENAI_AGENTS and as_str(attributes.get("graph.node.id")):
        return as_str(attributes.get("graph.node.id"))  # releases before 2 write no agent.name
    if (rewritten := rewritten_kind(span)) is not None:
        return rewritten[1]  # OpenLLMetry's span, `{entity}.{kind}`: a graph's entity is the agent
    # Under any other scope, one not shown too: the agent its framework's span name names.
    return agent_in_span_name(span.name) or None


def _handoff_span(span: SpanRecord) -> bool:
    """An OpenAI Agents handoff span (`handoff to {agent}`): without a tool name, or (the
    TypeScript SDK's) with the `handoff_to_{agent}` one, not a tool of the same name."""
    if not span.name.startswith(HANDOFF_PREFIX):
        return False
    tool = span.attributes.get("tool.name")
    return tool is None or (isinstance(tool, str) and tool.startswith(HANDOFF_TOOL_PREFIX))
