"""The OpenTelemetry GenAI semantic conventions: `invoke_agent`, `execute_tool`, `chat` spans.

Messages are read from the span's `gen_ai.input.messages` / `gen_ai.output.messages`, else from
the event forms older versions and some instrumentations use (`genai_events`).

The readings are functions as well as `GenAIConvention`'s methods: the conventions of
frameworks whose tracing writes GenAI spans (AutoGen, AG2, Semantic Kernel, Strands, ...) use
them as their own and differ only where their framework does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions.base import (
    UNNAMED_AGENT,
    Convention,
    Document,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats import haystack, langchain, mcp
from otel_scorers.conventions.formats.messages import (
    as_str,
    decode_content,
    handoff_tool_name,
    span_tool_call,
)

# Read here and by the other readers as this module's (`genai_values` holds them).
from otel_scorers.conventions.genai_values import NAMESPACE_OUTPUT as NAMESPACE_OUTPUT
from otel_scorers.conventions.genai_values import answering_model as answering_model
from otel_scorers.conventions.genai_values import input_tokens as input_tokens
from otel_scorers.conventions.genai_values import later_request, token_count
from otel_scorers.conventions.genai_values import output_tokens as output_tokens
from otel_scorers.conventions.genai_values import span_messages as span_messages
from otel_scorers.conventions.inferred_kinds import MODEL_KINDS
from otel_scorers.conventions.later_requests import deferred_call
from otel_scorers.gen_ai_names import (
    GEN_AI_AGENT_NAME,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_HANDOFF_FROM_AGENT,
    GEN_AI_HANDOFF_TO_AGENT,
    GEN_AI_OPERATION_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RETRIEVAL_DOCUMENTS,
    GEN_AI_SYSTEM,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_COMPLETION_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_PROMPT_TOKENS,
    GEN_AI_WORKFLOW_NAME,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

OPERATION = GEN_AI_OPERATION_NAME
#: What a span is, by its `gen_ai.operation.name`.
OPERATION_ROLES: Mapping[str, SpanRole] = {
    "invoke_agent": "run",
    "execute_tool": "tool",
    "chat": "model",
    "generate_content": "model",
    "text_completion": "model",
    "retrieval": "retriever",
}
#: Agents working together (a team, a graph, a crew) as one operation, named by
#: `gen_ai.workflow.name`. It plays no role by itself: a workflow that asks a model itself,
#: outside any run, is a run (`runs.span_roles`); one that only holds agents' runs is not.
WORKFLOW = "invoke_workflow"
#: What OpenLIT records a framework's pipeline was given (its `gen_ai.framework.*` attributes):
#: by component, `{component: inputs}`, as a Haystack pipeline is run.
PIPELINE_INPUT = "gen_ai.framework.pipeline.input_data"


def names_no_operation_model(attributes: Mapping[str, Any]) -> bool:
    """A model call as semantic conventions before v1.27 wrote it: they defined no other span, and
    named no operation (`gen_ai.operation.name` came with v1.27), so a span carrying both keys they
    required of it, `gen_ai.system` and `gen_ai.request.model`, and no operation is one."""
    return GEN_AI_SYSTEM in attributes and GEN_AI_REQUEST_MODEL in attributes and OPERATION not in attributes


#: Span-name prefixes followed by the agent's name: GenAI's `invoke_agent {gen_ai.agent.name}`,
#: and the other names of the operation a framework's own spans use (Google ADK 1.x's
#: `agent_run [{agent}]`, the name in brackets).
AGENT_RUN_PREFIXES = ("invoke_agent ", "agent_run ", "run_agent ")


#: The span-name form of a tool call (`execute_tool {gen_ai.tool.name}`), which says what the span
#: is when its attributes do not: OpenLIT writes only `error.type` on a tool span that failed.
TOOL_SPAN_PREFIX = "execute_tool "


def operation_role(span: SpanRecord) -> SpanRole | None:
    """The role the span's GenAI operation gives it (its span-name form for a tool call without
    the attribute); None for other operations."""
    operation = span.attributes.get(OPERATION)
    if operation is None and span.name.startswith(TOOL_SPAN_PREFIX):
        return "tool"
    # A malformed value (a list, say) names no operation and must not break the lookup.
    return OPERATION_ROLES.get(operation) if isinstance(operation, str) else None


def handoff_to(span: SpanRecord) -> str | None:
    """The agent a span that records a handoff hands the conversation to (`UNNAMED_AGENT` when it
    does not say): a span carrying `gen_ai.handoff.from_agent` / `.to_agent`, whatever its
    operation is called (OpenLLMetry's `handoff`, OpenTelemetry's own OpenAI Agents
    instrumentation's `agent_handoff`); None for any other span."""
    attributes = span.attributes
    if GEN_AI_HANDOFF_TO_AGENT not in attributes and GEN_AI_HANDOFF_FROM_AGENT not in attributes:
        return None
    return as_str(attributes.get(GEN_AI_HANDOFF_TO_AGENT)) or UNNAMED_AGENT


def role(span: SpanRecord) -> SpanRole | None:
    """The span's operation's role (`operation_role`, written out: it is asked of every span); a
    handoff is read as a tool span (`handoff_to`), the machinery of the run it sits in, not a
    tool call of it."""
    attributes = span.attributes
    operation = attributes.get(OPERATION)
    if type(operation) is str:
        found = OPERATION_ROLES.get(operation)
        if found == "run" and langchain.names_its_node(span, attributes.get(GEN_AI_AGENT_NAME)):
            return None  # a graph's node recorded as an agent: its spans are the graph's run's
        if found is not None:
            return found
        if operation in MODEL_KINDS:
            return "model"  # an operation no convention lists named as a model call (`call_llm`)
    elif operation is None:
        if span.name.startswith(TOOL_SPAN_PREFIX):
            return "tool"
        # An MCP client's or server's `tools/call`, by its method alone (a span that names its
        # GenAI operation says what it is by that).
        if mcp.records_tools_call(attributes):
            return "tool"
        if names_no_operation_model(attributes):
            return "model"
    if GEN_AI_HANDOFF_TO_AGENT in attributes or GEN_AI_HANDOFF_FROM_AGENT in attributes:
        return "tool"
    return None


def run_content(span: SpanRecord) -> RunSpanContent:
    attributes = span.attributes
    input_messages, output_messages = span_messages(span)
    # Each value as `as_str` and the token counts read it, the common ones in line: a run span
    # names its agent, and holds no token counts or conversation id more often than not.
    agent_name = attributes.get(GEN_AI_AGENT_NAME)
    if type(agent_name) is not str or not agent_name:
        agent_name = (
            as_str(agent_name)
            or agent_named(span.name)
            or as_str(attributes.get(GEN_AI_WORKFLOW_NAME))
            or _pipeline_component(attributes)
            or _unit_of_work_name(span)
        )
    model = attributes.get(GEN_AI_REQUEST_MODEL)
    if type(model) is not str or not model:
        model = as_str(model)
    conversation_id = attributes.get(GEN_AI_CONVERSATION_ID)
    if conversation_id is not None:
        conversation_id = as_str(conversation_id)
    return RunSpanContent(
        agent_name,
        input_messages,
        output_messages,
        None,
        None,
        model,
        token_count(attributes, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_PROMPT_TOKENS, input_tokens),
        token_count(attributes, GEN_AI_USAGE_OUTPUT_TOKENS, GEN_AI_USAGE_COMPLETION_TOKENS, output_tokens),
        conversation_id,
    )


def _pipeline_component(attributes: Mapping[str, Any]) -> str | None:
    """A pipeline named nowhere: the one component it gave the request to does the work."""
    pipeline_input = attributes.get(PIPELINE_INPUT)
    return haystack.input_component(pipeline_input) if pipeline_input is not None else None


def tool_call(span: SpanRecord, raw_arguments: Any = None, raw_result: Any = None) -> ToolCall:
    """An `execute_tool` span's call. `raw_arguments` and `raw_result` are what a layout that
    predates the GenAI names holds instead of `gen_ai.tool.call.arguments` / `.result`. A span
    recording an MCP `tools/call` is read as MCP says (`formats/mcp.py`)."""
    attributes = span.attributes
    if mcp.records_tools_call(attributes):
        return mcp.tool_call(span)
    # `as_str` in line for the name and the id, which most tool spans hold: one is read for
    # every tool call of every run.
    name = attributes.get(GEN_AI_TOOL_NAME)
    if type(name) is not str or not name:
        name = as_str(name)
    if name is None:
        named = _tool_named(span)
        name = named if named is not None else span.name
    call_id = attributes.get(GEN_AI_TOOL_CALL_ID)
    if type(call_id) is not str or not call_id:
        call_id = as_str(call_id)
    return span_tool_call(
        span,
        name=name,
        call_id=call_id,
        arguments=decode_content(attributes.get(GEN_AI_TOOL_CALL_ARGUMENTS, raw_arguments)),
        result=decode_content(attributes.get(GEN_AI_TOOL_CALL_RESULT, raw_result)),
    )


def _tool_named(span: SpanRecord) -> str | None:
    """The tool the span's `execute_tool {tool}` name names; "" (no name) when what follows is
    the model it was asked with (OpenLIT's Pydantic AI `execute_tool {model}`, a step of the
    agent's loop run after each model response): which tool ran, if any, is not in the span. A
    handoff is named as the model asks for it (`transfer_to_{agent}`), so that it answers that
    request."""
    target = handoff_to(span)
    if target is not None:
        return handoff_tool_name(target) if target else None
    named = name_suffix(span.name, "execute_tool")
    if named is not None and named == span.attributes.get(GEN_AI_REQUEST_MODEL):
        return UNNAMED_TOOL
    return named


#: The name of a tool call whose span does not say which tool ran (`runs.run_reading` leaves
#: such calls out, and lists the run's tool calls as missing).
UNNAMED_TOOL = ""
#: What a tracer writes for a tool's name when it did not find one (AgentOps' `tool.name`).
_PLACEHOLDER_NAMES = frozenset({UNNAMED_TOOL, "unknown"})


def names_no_tool(name: str) -> bool:
    """The call's name does not say which tool ran: none (`UNNAMED_TOOL`), a tracer's placeholder
    for a name it did not find (`unknown`), or a Python special
    method of the object that implements it (`SimpleTool.__call__`: a function tracer such as
    MLflow's autolog names the span after the method it wrapped, and a class such as smolagents'
    `SimpleTool` implements every tool made from a function), unless a model's request gave it
    the tool's name (`runs.requested_calls`)."""
    if name in _PLACEHOLDER_NAMES:
        return True
    method = name.rpartition(".")[2]
    return "." in name and len(method) > 4 and method.startswith("__") and method.endswith("__")


def model_call(span: SpanRecord) -> ModelCall:
    attributes = span.attributes
    # A request its trace has not read (a later call's: the conversation so far) is read when
    # its messages are first read (`later_requests`).
    later = later_request(span)
    # The values most model spans hold, read in line: a model's name and two token counts
    # (`answering_model`, `input_tokens`, `output_tokens` decide every other value, three calls
    # each, for every model call of every run).
    model = attributes.get(GEN_AI_RESPONSE_MODEL)
    if type(model) is not str or not model:
        model = answering_model(attributes)
    used = attributes.get(GEN_AI_USAGE_INPUT_TOKENS)
    if type(used) is not int:
        used = input_tokens(attributes)
    answered = attributes.get(GEN_AI_USAGE_OUTPUT_TOKENS)
    if type(answered) is not int:
        answered = output_tokens(attributes)
    if later is not None:
        return deferred_call(span.span_id, span.start_ns, *later, model, used, answered)
    input_messages, output_messages = span_messages(span)
    return ModelCall(span.span_id, span.start_ns, input_messages, output_messages, model, used, answered)


def documents(span: SpanRecord) -> tuple[Document, ...]:
    """`gen_ai.retrieval.documents`: a JSON list of `{id, score, content}`; documents recorded
    without their content (ids and scores only) give nothing to ground on."""
    return retrieval_documents(span.attributes.get(GEN_AI_RETRIEVAL_DOCUMENTS))


class GenAIConvention(Convention):
    name = "genai"
    # A workflow may be a run (`WORKFLOW`), and a span named as an agent's run is (`agent_run
    # [weather_agent]`) that its reader gives no role: the trace is kept from its start.
    run_start_names: tuple[str, ...] = ("invoke_agent", *AGENT_RUN_PREFIXES[1:], WORKFLOW)
    # A span naming an agent may be its run by an operation no convention lists
    # (`runs.span_roles`): the trace is kept from its start too.
    run_start_markers: tuple[tuple[str, str | None], ...] = (
        (OPERATION, "invoke_agent"),
        (OPERATION, WORKFLOW),
        (GEN_AI_AGENT_NAME, None),
    )

    def detect(self, span: SpanRecord) -> bool:
        attributes = span.attributes
        # MCP's spans by their protocol's keys (`formats/mcp.py`): a `tools/call` is a tool call.
        return (
            OPERATION in attributes
            or span.name.startswith(TOOL_SPAN_PREFIX)
            or mcp.is_protocol_span(span)
            or names_no_operation_model(attributes)
        )

    role = staticmethod(role)
    run_content = staticmethod(run_content)
    tool_call = staticmethod(tool_call)
    model_call = staticmethod(model_call)
    documents = staticmethod(documents)
    handoff_target = staticmethod(handoff_to)

    def internal_tool(self, span: SpanRecord) -> bool:
        return handoff_to(span) is not None

    def run_at_top(self, span: SpanRecord) -> bool:
        return unit_of_work(span.attributes)


#: Operations that are no agent's unit of work: a workflow holds runs, creating an agent runs none.
_NOT_RUNS = frozenset({WORKFLOW, "create_agent"})


def _unit_of_work_name(span: SpanRecord) -> str | None:
    """A unit of work's name: its span's, less the operation GenAI's span names begin with."""
    if not unit_of_work(span.attributes):
        return None
    return name_suffix(span.name, span.attributes[OPERATION]) or span.name or None


def unit_of_work(attributes: Mapping[str, Any]) -> bool:
    """An operation no convention lists on a span that names no agent (`chain`, LangSmith's run
    type): the application's own unit of work, at the top of a trace the run of the model calls
    under it that no run holds (`runs/top_runs.py`), named as its span is (the function traced),
    less the operation a GenAI span name begins with."""
    operation = attributes.get(OPERATION)
    return (
        type(operation) is str
        and operation not in OPERATION_ROLES
        and operation not in _NOT_RUNS
        and GEN_AI_AGENT_NAME not in attributes
    )


#: The finish reasons of a response that asks for tools: the GenAI conventions' `tool_call`, and
#: the providers' own as instrumentations copy them (OpenAI's `tool_calls` and `function_call`,
#: Anthropic's and Bedrock's `tool_use`).
TOOL_CALL_FINISH_REASONS = frozenset({"tool_call", "tool_calls", "function_call", "tool_use"})


def finished_for_tools(attributes: Mapping[str, Any]) -> bool:
    """The model span says its response asked for tools (`gen_ai.response.finish_reasons`), which
    it records whether or not the content is captured."""
    reasons = attributes.get(GEN_AI_RESPONSE_FINISH_REASONS)
    if isinstance(reasons, str):
        reasons = (reasons,)
    if not isinstance(reasons, (list, tuple)):
        return False
    return any(isinstance(reason, str) and reason.lower() in TOOL_CALL_FINISH_REASONS for reason in reasons)


def agent_named(span_name: str) -> str | None:
    """The agent a span's name names as an agent run's operation followed by the agent's name
    (`AGENT_RUN_PREFIXES`), brackets around it taken off; None for any other name."""
    if not span_name.startswith(AGENT_RUN_PREFIXES):  # most names: one look
        return None
    for prefix in AGENT_RUN_PREFIXES:
        if span_name.startswith(prefix) and len(span_name) > len(prefix):
            named = span_name[len(prefix) :]
            return named[1:-1] if len(named) > 2 and named[0] == "[" and named[-1] == "]" else named
    return None


def name_suffix(span_name: str, operation: str) -> str | None:
    prefix = operation + " "
    return span_name[len(prefix) :] or None if span_name.startswith(prefix) else None


def retrieval_documents(value: Any) -> tuple[Document, ...]:
    """The documents of a `gen_ai.retrieval.documents` value (JSON string or list), with text."""
    documents = decode_content(value)
    if not isinstance(documents, list):
        return ()
    found = []
    for document in documents:
        if not isinstance(document, Mapping):
            continue
        text = document.get("content", document.get("text"))
        if isinstance(text, str) and text:
            found.append(Document(text, as_str(document.get("id"))))
    return tuple(found)
