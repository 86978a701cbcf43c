"""OpenLLMetry / Traceloop (`traceloop.*`): decorator spans, GenAI or indexed LLM messages.

Decorated functions are `{name}.{kind}` spans with `traceloop.span.kind` (workflow, agent,
task, tool) and their arguments and return value in `traceloop.entity.input`/`output`. LLM
spans carry GenAI JSON messages (current) or indexed keys `gen_ai.prompt.{i}.*` /
`gen_ai.completion.{i}.*` (legacy). Its LangChain instrumentation adds a LangGraph layout: an
`invoke_agent {graph}` root without content over a `{graph}.workflow` span that has it, a
sub-agent as an `execute_task {graph}` span, tool spans whose arguments and result wrap what
the tool got and returned, and a one-span `create_agent {name}` trace that is not a run. Its
Agno instrumentation names a team's `workflow` span in `agno.team.name` and writes a tool's
output as the repr of Agno's `ToolResult` (`formats.agno`), its only record of a failure.
Its LlamaIndex instrumentation writes an agent run as a `{AgentClass}.workflow` span whose `task`
steps name the agent and hold its answer, and a tool call as the `call_tool` step, which
carries `tool.name` (see `formats.llamaindex`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import (
    UNNAMED_AGENT,
    Convention,
    Document,
    Markers,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats import agno, langchain, llamaindex
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.messages import (
    as_str,
    genai_messages,
    handoff_tool_name,
    span_tool_call,
    tool_state,
)
from otel_scorers.conventions.genai import (
    OPERATION,
    answering_model,
    handoff_to,
    input_tokens,
    name_suffix,
    operation_role,
    output_tokens,
)
from otel_scorers.conventions.openllmetry_frameworks import (
    CREW_ID,
    CREWAI_SCOPE,
    CREWAI_TASK_AGENT,
    CREWAI_TASK_DESCRIPTION,
    HANDOFF_KIND,
    HAYSTACK_PIPELINE,
    HAYSTACK_SCOPE,
    LLAMA_INDEX,
    LLAMA_INDEX_KINDS,
    LLAMA_INDEX_NESTED_RUN,
    LLAMA_INDEX_RETRIEVER,
    LLAMA_INDEX_RUN_SUFFIX,
    OPENAI_AGENTS_SCOPE,
    agno_span,
    crewai_span,
    llama_index_span,
)
from otel_scorers.conventions.openllmetry_text import (
    entity_input_text,
    entity_output_text,
    indexed_messages,
    tool_call_arguments,
    unwrapped_output,
)
from otel_scorers.gen_ai_names import (
    GEN_AI_AGENT_NAME,
    GEN_AI_COMPLETION_,
    GEN_AI_COMPLETION_0_ROLE,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROMPT_,
    GEN_AI_PROMPT_0_ROLE,
    GEN_AI_TASK_STATUS,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_WORKFLOW_NODES,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

SPAN_KIND = "traceloop.span.kind"

ENTITY_NAME = "traceloop.entity.name"
#: On LLM spans inside a traced workflow.
ENTITY_PATH, WORKFLOW_NAME = "traceloop.entity.path", "traceloop.workflow.name"


ENTITY_INPUT = "traceloop.entity.input"


ENTITY_OUTPUT = "traceloop.entity.output"


LC_AGENT_NAME = "traceloop.association.properties.lc_agent_name"


#: On the content-less `invoke_agent {graph}` root of the LangGraph layout (no traceloop keys).
WORKFLOW_NODES = GEN_AI_WORKFLOW_NODES


#: OpenLLMetry's name for a text completion, besides the GenAI operations (`text_completion`).
_COMPLETION = "completion"


AGNO_TEAM_NAME = "agno.team.name"


class OpenLLMetryConvention(Convention):
    name = "openllmetry"
    run_start_names: tuple[str, ...] = ()
    run_start_markers: tuple[tuple[str, str | None], ...] = (
        (SPAN_KIND, "workflow"),
        (SPAN_KIND, "agent"),
    )
    # Its LangChain and LlamaIndex instrumentations label a run span after it started.
    run_start_scopes: tuple[str, ...] = ("opentelemetry.instrumentation.langchain", LLAMA_INDEX)

    markers = Markers(
        keys=frozenset(
            {
                SPAN_KIND,
                ENTITY_NAME,
                ENTITY_PATH,
                WORKFLOW_NAME,
                GEN_AI_PROMPT_0_ROLE,
                GEN_AI_COMPLETION_0_ROLE,
                WORKFLOW_NODES,
                CREW_ID,
            }
        ),
        scopes=frozenset({CREWAI_SCOPE}),  # its crew span, which is not a GenAI `invoke_agent` run
    )

    def detect(self, span: SpanRecord) -> bool:
        attributes = span.attributes
        return (
            SPAN_KIND in attributes
            or ENTITY_NAME in attributes
            or ENTITY_PATH in attributes
            or WORKFLOW_NAME in attributes
            or GEN_AI_PROMPT_0_ROLE in attributes
            or GEN_AI_COMPLETION_0_ROLE in attributes
            or WORKFLOW_NODES in attributes
            or span.scope == CREWAI_SCOPE  # its crew span, which is not a GenAI `invoke_agent` run
            or CREW_ID in attributes  # the same, by the crew's id, under any scope
        )

    def role(self, span: SpanRecord) -> SpanRole | None:
        attributes = span.attributes
        kind = attributes.get(SPAN_KIND)
        if kind == HANDOFF_KIND:
            return "tool"  # a handoff, read as such (`handoff_target`), not a tool call
        if kind == "workflow" and (
            span.scope in (OPENAI_AGENTS_SCOPE, HAYSTACK_SCOPE)
            or attributes.get(ENTITY_NAME) == HAYSTACK_PIPELINE
        ):
            # The SDK's trace around a Runner.run, a Haystack pipeline's run (of every component:
            # none, one or several agents, whose own runs are not traced; known by its name under
            # any scope): its agents are the runs, joined from their model calls where no span
            # marks them (`runs.call_chains`).
            return None
        if crewai_span(span):
            # A run is an agent's work on one task: the task span holds the task and the answer
            # (whatever the content setting); the agent span inside it names the agent only.
            return "run" if kind == "task" else None
        operation = operation_role(span)
        if kind == "tool" or operation == "tool":
            return "tool"
        if kind in LLAMA_INDEX_KINDS and llama_index_span(span):
            if kind == "task" and "tool.name" in attributes:
                return "tool"  # the agent's `call_tool` step: the tool's own span may be dropped
            if kind == "task" and span.name.endswith(LLAMA_INDEX_RETRIEVER):
                return "retriever"
            if kind == "task" and span.name == LLAMA_INDEX_NESTED_RUN:
                return "run"  # its steps name the agent and hold its answer, as a workflow's do
            if kind == "workflow":
                # Query engines, ingestion and embeddings are workflows too: not agent runs.
                return "run" if llamaindex.is_agent_class(span.name, LLAMA_INDEX_RUN_SUFFIX) else None
        if kind in ("workflow", "agent"):
            return "run"
        if kind == "task":
            # A sub-agent graph run from a tool is a task named after the agent it runs.
            name = attributes.get(ENTITY_NAME)
            return "run" if name is not None and name == attributes.get(LC_AGENT_NAME) else None
        if (
            operation == "model"
            or attributes.get(OPERATION) == _COMPLETION
            or GEN_AI_PROMPT_0_ROLE in attributes
            or GEN_AI_COMPLETION_0_ROLE in attributes
        ):
            return "model"
        # The LangGraph root `invoke_agent {graph}` holds nothing: its `{graph}.workflow`
        # child is the run. `create_agent` spans build an agent and run nothing.
        return None

    def run_needs_work(self, span: SpanRecord) -> bool:
        # In every language a `workflow` is the outermost traced span, agent or not; `agent`
        # and `task` spans are read as runs only where they name an agent.
        return span.attributes.get(SPAN_KIND) == "workflow"

    def run_under_tool(self, span: SpanRecord) -> bool:
        """A LangGraph graph invoked from a tool: a task whose input is a graph's messages state."""
        attributes = span.attributes
        return (
            attributes.get(SPAN_KIND) == "task"
            and langchain.messages_of(attributes.get(ENTITY_INPUT)) is not None
        )

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        attributes = span.attributes
        if llama_index_span(span):
            # The workflow span holds no content and its entity name is the class's: the steps
            # say who ran and what it answered (`step_content`).
            return RunSpanContent(conversation_id=as_str(attributes.get(GEN_AI_CONVERSATION_ID)))
        if crewai_span(span):
            return RunSpanContent(
                agent_name=as_str(attributes.get(CREWAI_TASK_AGENT)),
                input_text=as_str(attributes.get(CREWAI_TASK_DESCRIPTION)),
                output_text=entity_output_text(attributes.get(ENTITY_OUTPUT)),
            )
        # A sub-graph's task inherits the calling graph's `lc_agent_name`: its own name is the task's.
        task_name = as_str(attributes.get(ENTITY_NAME)) if attributes.get(SPAN_KIND) == "task" else None
        return RunSpanContent(
            agent_name=task_name
            or as_str(attributes.get(LC_AGENT_NAME))
            or as_str(attributes.get(GEN_AI_AGENT_NAME))
            or as_str(attributes.get(AGNO_TEAM_NAME))
            or as_str(attributes.get(ENTITY_NAME))
            or as_str(attributes.get("traceloop.workflow.name")),
            input_text=entity_input_text(attributes.get(ENTITY_INPUT)),
            output_text=entity_output_text(attributes.get(ENTITY_OUTPUT)),
            conversation_id=as_str(attributes.get(GEN_AI_CONVERSATION_ID)),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        if (target := self.handoff_target(span)) is not None and span.attributes.get(
            SPAN_KIND
        ) == HANDOFF_KIND:
            # Named as the model asks for it, so that it answers that request.
            name = handoff_tool_name(target) if target else span.name
            return span_tool_call(span, name=name, call_id=None, arguments=None, result=None)
        if SPAN_KIND in attributes and "tool.name" in attributes and llama_index_span(span):
            return _llama_index_tool_call(span)
        raw_arguments = decode_json(attributes.get(GEN_AI_TOOL_CALL_ARGUMENTS, attributes.get(ENTITY_INPUT)))
        arguments, call_id = tool_call_arguments(raw_arguments)
        raw_result = attributes.get(GEN_AI_TOOL_CALL_RESULT, attributes.get(ENTITY_OUTPUT))
        # Agno's `ToolResult` text, known by its form (`status='...' result=...`) under any scope.
        agno_result = agno.tool_result(raw_result)
        # A LangChain ToolMessage (`{"output": ToolMessage, "kwargs"}` here) is read as the tool's
        # result by every reader (`runs.tool_matching`).
        result: Any = (
            agno_result.result if agno_result is not None else unwrapped_output(decode_json(raw_result))
        )
        state, error = tool_state(span, result)
        if state == "ok" and agno_result is not None and agno_result.failed:
            state, error = "error", agno_result.error or agno_result.status
        if state == "ok" and attributes.get(GEN_AI_TASK_STATUS) == "failure":
            state, error = "error", str(attributes.get("error.type") or "failure")
        return span_tool_call(
            span,
            name=as_str(attributes.get(GEN_AI_TOOL_NAME))
            or as_str(attributes.get(ENTITY_NAME))
            or name_suffix(span.name, "execute_tool")
            or span.name.removesuffix(".tool"),
            call_id=as_str(attributes.get(GEN_AI_TOOL_CALL_ID)) or call_id,
            arguments=arguments,
            result=result,
            state=state,
            error=error,
        )

    def calls_only_in_messages(self, run_span: SpanRecord) -> bool:
        # Its CrewAI instrumentation writes no tool spans, known by its CrewAI ids under any scope.
        return crewai_span(run_span) or super().calls_only_in_messages(run_span)

    def failure_unrecorded(self, span: SpanRecord) -> bool:
        """Agno catches what a tool raised and ends its span OK: only the `ToolResult` in the
        output, written with content capture on, says that the call failed. So does LlamaIndex's
        `call_tool` step: only its `ToolCallResult` (`is_error`) says so."""
        return (
            (agno_span(span) or ("tool.name" in span.attributes and llama_index_span(span)))
            and span.ended
            and span.status != "error"
            and ENTITY_OUTPUT not in span.attributes
            and GEN_AI_TOOL_CALL_RESULT not in span.attributes
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        input_messages = genai_messages(attributes.get(GEN_AI_INPUT_MESSAGES))
        if not input_messages.captured:
            input_messages = indexed_messages(attributes, GEN_AI_PROMPT_)
        output_messages = genai_messages(attributes.get(GEN_AI_OUTPUT_MESSAGES))
        if not output_messages.captured:
            output_messages = indexed_messages(attributes, GEN_AI_COMPLETION_)
        model = answering_model(attributes)
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=input_messages,
            output=output_messages,
            model=None if model == "unknown" else model,
            input_tokens=input_tokens(attributes),
            output_tokens=output_tokens(attributes),
        )

    def documents(self, span: SpanRecord) -> tuple[Document, ...]:
        """A LlamaIndex retriever's nodes, from its output (a retriever's inner `_retrieve`
        span repeats them: the run's context keeps each text once)."""
        nodes = llamaindex.retrieved_nodes(span.attributes.get(ENTITY_OUTPUT))
        return tuple(Document(text, node_id) for text, node_id in nodes)

    def internal_tool(self, span: SpanRecord) -> bool:
        if span.attributes.get(SPAN_KIND) == HANDOFF_KIND:
            return True
        return span.attributes.get("tool.name") == llamaindex.HANDOFF_TOOL and llama_index_span(span)

    def handoff_target(self, span: SpanRecord) -> str | None:
        if span.attributes.get(SPAN_KIND) == HANDOFF_KIND:
            return handoff_to(span) or UNNAMED_AGENT
        if span.attributes.get("tool.name") != llamaindex.HANDOFF_TOOL or not llama_index_span(span):
            return None
        call = _llama_index_call_result(span)
        return llamaindex.handoff_target(as_str(span.attributes.get("tool.name")), call.get("tool_kwargs"))

    def step_content(self, span: SpanRecord) -> RunSpanContent | None:
        """A LlamaIndex workflow step: its output event (JSON) names the agent at work, the first
        one, an `AgentInput`, holds the user's request, and the last one, a `StopEvent`, the
        run's answer. A CrewAI agent span names its agent,
        for a task span that does not."""
        kind = span.attributes.get(SPAN_KIND)
        if kind == "agent" and crewai_span(span):
            return RunSpanContent(agent_name=as_str(span.attributes.get(GEN_AI_AGENT_NAME)))
        if kind != "task" or not llama_index_span(span):
            return None
        output = decode_json(span.attributes.get(ENTITY_OUTPUT))
        answer = llamaindex.json_answer(output)
        agent = llamaindex.json_agent_name(output)
        request = llamaindex.json_input(output)
        if answer is None and agent is None and request is None:
            return None
        return RunSpanContent(agent_name=agent, input_text=request, output_text=answer)


def _llama_index_call_result(span: SpanRecord) -> Mapping[str, Any]:
    """The `ToolCallResult` a LlamaIndex `call_tool` step returned (content capture on)."""
    output = decode_json(span.attributes.get(ENTITY_OUTPUT))
    return output if isinstance(output, Mapping) else {}


def _llama_index_tool_call(span: SpanRecord) -> ToolCall:
    """A LlamaIndex `call_tool` step. Its `tool.arguments` is written even with content capture
    off; the arguments are read from the step's output, as the result is, so that both follow
    the capture setting."""
    call = _llama_index_call_result(span)
    arguments = call.get("tool_kwargs")
    result, failed = llamaindex.tool_output(call.get("tool_output"))
    state, error = tool_state(span, result)
    if state == "ok" and failed:
        state, error = "error", str(result)
    return span_tool_call(
        span,
        name=as_str(span.attributes.get("tool.name")) or span.name,
        call_id=as_str(call.get("tool_id")),
        arguments=dict(arguments) if isinstance(arguments, Mapping) else None,
        result=result if call else None,
        state=state,
        error=error,
    )
