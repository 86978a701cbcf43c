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

import re
from collections.abc import Mapping
from typing import Any

from otel_scorers.conventions import ag2, autogen
from otel_scorers.conventions.base import (
    Convention,
    Document,
    Message,
    Messages,
    ModelCall,
    RunSpanContent,
    SpanRole,
)
from otel_scorers.conventions.formats import crewai, haystack, langchain, llamaindex
from otel_scorers.conventions.formats.messages import (
    as_int,
    as_str,
    decode_json,
    genai_messages,
    handoff_tool_name,
    last_assistant_text,
    last_user_text,
    span_tool_call,
    tool_state,
)
from otel_scorers.model import ToolCall
from otel_scorers.span_record import SpanRecord

KIND = "openinference.span.kind"
#: What OpenInference's TraceConfig(hide_inputs/hide_outputs) writes instead of content.
REDACTED = frozenset({"__REDACTED__", "[REDACTED]"})

_OPENAI_AGENTS = "openinference.instrumentation.openai_agents"
_SMOLAGENTS = "openinference.instrumentation.smolagents"
_AUTOGEN = "openinference.instrumentation.autogen_agentchat"
_LANGCHAIN = "openinference.instrumentation.langchain"
#: CrewAI's two modes: wrapped methods (the default) and `use_event_listener=True`, whose spans
#: come from CrewAI's event bus (`{role}.{task}.execute`, `{model}.llm_call`).
_CREWAI = frozenset(
    {"openinference.instrumentation.crewai", "openinference.instrumentation.crewai._event_listener"}
)
_LLAMA_INDEX = "openinference.instrumentation.llama_index"
#: Haystack's Agent is a CHAIN span `{AgentClass}.run` (or `.run_async`) that runs its tools
#: without tool spans: its calls are only in its messages (`formats.haystack`).
_HAYSTACK = "openinference.instrumentation.haystack"
_HAYSTACK_RUN_SUFFIXES = (".run", ".run_async")
#: Its pipelines' spans: their input and output name the components they ran.
_HAYSTACK_PIPELINES = ("Pipeline.run", "AsyncPipeline.run")
#: DSPy: an agent module (`dspy.ReAct`) is a CHAIN span `ReAct.forward`; its tools are TOOL spans
#: `{tool}.__call__` with `{"kwargs": {...}}` as input.
#: BeeAI writes a component's emitter events (a tool's `error`, the agent's `final_answer`) as
#: child spans, marked by the event's `metadata.path`: records of their parent, not components.
_BEEAI = "openinference.instrumentation.beeai"
_BEEAI_EVENT = "metadata.path"
_DSPY = "openinference.instrumentation.dspy"
_DSPY_RUN_SUFFIXES = (".forward", ".aforward")
_DSPY_AGENTS = ("ReAct", "CodeAct")
_DSPY_TOOL_SUFFIX = ".__call__"
#: What a DSPy agent's Prediction holds besides the signature's outputs.
_DSPY_STEPS = frozenset({"trajectory", "reasoning"})
_LLAMA_INDEX_RUN_SUFFIX = ".run"
#: LlamaIndex's LLM span that only builds the request of the LLM span beside it.
_LLAMA_INDEX_PREPARE = "._prepare_chat_with_tools"
_LANGGRAPH_INTEGRATIONS = frozenset({"langgraph", "langchain_create_agent"})
_HANDOFF_PREFIX = "handoff to "
_SMOLAGENTS_RUN_SUFFIX = ".run"
_MESSAGE_KEY = re.compile(r"(\d+)\.message\.(.+)")
#: AutoGen AgentChat's instrumentation flattens a tool-results message as `{i}.function.{k}`.
_FUNCTION_RESULT_KEY = re.compile(r"(\d+)\.(function\.\d+)")
_DOCUMENTS = "retrieval.documents."
_DOCUMENT_KEY = re.compile(r"retrieval\.documents\.(\d+)\.document\.(content|id)")


class OpenInferenceConvention(Convention):
    name = "openinference"
    # AutoGen's Swarm hands the conversation from agent to agent inside its CHAIN span: the trace
    # stays open until it ends, so the agents handed to join the run in-process too.
    # A Haystack pipeline names the agents it runs (`name_within`) and ends after them: it keeps
    # its trace open as a run span would, so that its agents are read with it.
    run_start_names: tuple[str, ...] = (
        "Swarm.run_stream",
        "Agent.run",
        "ReAct.forward",
        "ReAct.aforward",
        *_HAYSTACK_PIPELINES,
    )
    run_start_markers: tuple[tuple[str, str | None], ...] = ((KIND, "AGENT"),)
    # LangChain's and LlamaIndex's instrumentations set every attribute (span kind included)
    # when a span ends.
    run_start_scopes: tuple[str, ...] = (_LANGCHAIN, _LLAMA_INDEX)

    def detect(self, span: SpanRecord) -> bool:
        return KIND in span.attributes

    def role(self, span: SpanRecord) -> SpanRole | None:
        kind = span.attributes.get(KIND)
        if span.scope == _BEEAI and _BEEAI_EVENT in span.attributes:
            return None
        if kind == "LLM":
            if span.scope == _LLAMA_INDEX and span.name.endswith(_LLAMA_INDEX_PREPARE):
                return None
            return "model"
        if kind == "TOOL":
            return "tool"
        if kind == "RETRIEVER":
            return "retriever"
        if kind == "AGENT":
            if span.scope == ag2.SCOPE and ag2.is_turn(span):
                return None  # a turn of an AG2 chat: the chat is the run
            if span.scope == _LANGCHAIN and "tool.name" in span.attributes:
                return "tool"  # a LangChain tool whose name contains "agent" is marked AGENT
            return "run" if _is_agent_run(span) else None
        if kind == "CHAIN" and span.scope == _LANGCHAIN:
            # A LangChain run is marked AGENT only when its name contains "agent": an agent
            # graph named otherwise is a CHAIN whose name is its `lc_agent_name`, or, unnamed
            # ("LangGraph"), a graph that is not a node of another graph.
            metadata = _metadata(span)
            if metadata.get("lc_agent_name") == span.name:
                return "run"
            graph = metadata.get("ls_integration") in _LANGGRAPH_INTEGRATIONS
            return "run" if graph and "langgraph_node" not in metadata else None
        if kind == "CHAIN" and span.scope == _LLAMA_INDEX:
            return "run" if _is_llama_index_run(span) else None
        if kind == "CHAIN" and span.scope == _DSPY:
            return "run" if _dspy_agent_class(span) is not None else None
        if kind == "CHAIN" and span.scope == _HAYSTACK:
            return "run" if _haystack_agent_class(span) is not None else None
        return None

    def documents(self, span: SpanRecord) -> tuple[Document, ...]:
        """`retrieval.documents.{i}.document.content` (and `.id`), flattened, in index order."""
        found: dict[int, dict[str, str]] = {}
        for key, value in span.attributes.items():
            if not key.startswith(_DOCUMENTS):
                continue
            match = _DOCUMENT_KEY.fullmatch(key)
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
        if span.scope == _LLAMA_INDEX and attributes.get(KIND) == "CHAIN":
            # The workflow span names no agent, its input is the workflow's state and its output
            # a shortened repr: the steps say who ran and what it answered (`step_content`).
            return RunSpanContent(
                model=as_str(attributes.get("llm.model_name")),
                conversation_id=as_str(attributes.get("session.id")),
            )
        return RunSpanContent(
            agent_name=_agent_name(span),
            input_text=_run_input(span),
            output_text=_run_output(span),
            model=as_str(attributes.get("llm.model_name")),
            input_tokens=as_int(attributes.get("llm.token_count.prompt")),
            output_tokens=as_int(attributes.get("llm.token_count.completion")),
            conversation_id=as_str(attributes.get("session.id")),
        )

    def tool_call(self, span: SpanRecord) -> ToolCall:
        attributes = span.attributes
        name = as_str(attributes.get("tool.name")) or span.name
        if span.scope == _DSPY:
            name = name.removesuffix(_DSPY_TOOL_SUFFIX)
        call_id = as_str(attributes.get("tool.id")) or as_str(attributes.get("tool_call.id"))
        if span.name.startswith(_HANDOFF_PREFIX) and "tool.name" not in attributes:
            name = handoff_tool_name(self.handoff_target(span) or "")
        arguments = _tool_arguments(span, attributes.get("input.value"))
        result = _content(attributes.get("output.value"))
        message = langchain.tool_message(result)
        failed = False
        if span.scope == _LLAMA_INDEX:
            result, failed = llamaindex.tool_output(result)
        elif message is not None:
            call_id = call_id or as_str(message.get("tool_call_id"))
            result = decode_json(message.get("content"))
        else:
            result = decode_json(result)
        succeeded = None
        if span.scope == ag2.SCOPE:
            result, succeeded = ag2.tool_result(result)
        state, error = tool_state(span, result)
        if state == "ok" and succeeded is False:
            state, error = "error", str(result)
        if state == "ok" and message is not None and message.get("status") == "error":
            state, error = "error", str(result)
        if state == "ok" and failed:
            state, error = "error", str(result)
        return span_tool_call(
            span, name=name, call_id=call_id, arguments=arguments, result=result, state=state, error=error
        )

    def model_call(self, span: SpanRecord) -> ModelCall:
        attributes = span.attributes
        if span.scope == _HAYSTACK:
            # The flattened messages drop the call ids and the tool results; the reprs keep them.
            input_messages = haystack.component_messages(_content(attributes.get("input.value")), "messages")
            output = haystack.component_messages(_content(attributes.get("output.value")), "replies")
        else:
            input_messages = flattened_messages(attributes, "llm.input_messages.")
            output = flattened_messages(attributes, "llm.output_messages.")
        if not output.captured:
            output = _responses_output(attributes.get("output.value"))
        return ModelCall(
            span_id=span.span_id,
            start_ns=span.start_ns,
            input=input_messages,
            output=output,
            model=as_str(attributes.get("llm.model_name")),
            input_tokens=as_int(attributes.get("llm.token_count.prompt")),
            output_tokens=as_int(attributes.get("llm.token_count.completion")),
        )

    def prompt_input(self, run_span: SpanRecord, text: str) -> str:
        """A CrewAI task whose span kept no TaskOutput (it failed): the task in its model prompt."""
        if run_span.scope in _CREWAI:
            return crewai.task_in_prompt(text) or text
        return text

    def name_within(self, run_span: SpanRecord, parent: SpanRecord) -> str | None:
        """A Haystack agent run by a pipeline: the name it was added under; run by another agent
        as a tool (`AgentTool`, directly under the caller's span): the tool's name."""
        if run_span.scope != _HAYSTACK or parent.scope != _HAYSTACK:
            return None
        attributes, around = run_span.attributes, parent.attributes
        if _haystack_agent_class(parent) is not None:
            return haystack.tool_agent_name(
                _content(attributes.get("output.value")), _content(around.get("output.value"))
            )
        if not parent.name.startswith(_HAYSTACK_PIPELINES):
            return None
        return haystack.component_name(
            _content(attributes.get("input.value")),
            _content(attributes.get("output.value")),
            _content(around.get("input.value")),
            _content(around.get("output.value")),
        )

    def calls_only_in_messages(self, run_span: SpanRecord) -> bool:
        """Haystack's Agent runs its tools without tool spans."""
        return run_span.scope == _HAYSTACK

    def run_under_tool(self, span: SpanRecord) -> bool:
        """A LangGraph graph invoked from a tool: a LangChain span whose input is a graph's
        messages state."""
        if span.scope != _LANGCHAIN or span.attributes.get(KIND) not in ("CHAIN", "AGENT"):
            return False
        return langchain.messages_of(_content(span.attributes.get("input.value"))) is not None

    def handoff_target(self, span: SpanRecord) -> str | None:
        if span.scope == _AUTOGEN:  # a Swarm's transfer_to_{agent} tool
            return autogen.handoff_target(
                span.attributes.get("tool.name"), span.attributes.get("tool.description")
            )
        if span.scope == _LLAMA_INDEX:
            arguments = _tool_arguments(span, span.attributes.get("input.value"))
            return llamaindex.handoff_target(as_str(span.attributes.get("tool.name")), arguments)
        if not span.name.startswith(_HANDOFF_PREFIX) or "tool.name" in span.attributes:
            return None
        target = _content(span.attributes.get("output.value"))  # the SDK records the agent handed to
        return target if isinstance(target, str) and target else span.name[len(_HANDOFF_PREFIX) :]

    def internal_tool(self, span: SpanRecord) -> bool:
        if span.name.startswith(_HANDOFF_PREFIX) and "tool.name" not in span.attributes:
            return True  # OpenAI Agents: a handoff is an agent transition, not a tool call
        if span.scope == _AUTOGEN:
            return self.handoff_target(span) is not None
        if span.scope == _LLAMA_INDEX:
            return span.attributes.get("tool.name") == llamaindex.HANDOFF_TOOL
        return False

    def sub_run_call(self, run_span: SpanRecord, parent: SpanRecord | None) -> ToolCall | None:
        """smolagents' managed agent: the manager's model calls it like a tool, but its run sits
        directly under the manager's step span, whose output is what the manager was told."""
        if run_span.scope != _SMOLAGENTS or parent is None:
            return None
        result = _content(run_span.attributes.get("output.value"))
        step_output = _content(parent.attributes.get("output.value"))
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
        if span.scope != _LLAMA_INDEX or span.attributes.get(KIND) != "CHAIN":
            return None
        event = llamaindex.step_event(_content(span.attributes.get("input.value")))
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
    if not span.name.endswith(_LLAMA_INDEX_RUN_SUFFIX):
        return False
    if llamaindex.is_agent_class(span.name, _LLAMA_INDEX_RUN_SUFFIX):
        return True
    started = decode_json(_content(span.attributes.get("input.value")))
    event = started.get("start_event") if isinstance(started, Mapping) else None
    return isinstance(event, str) and event.startswith("AgentWorkflowStartEvent(")


def _dspy_agent_class(span: SpanRecord) -> str | None:
    """The agent module of a DSPy `{Module}.forward` span: `ReAct`, `CodeAct` or a subclass
    named like one; other modules (`Predict`, `ChainOfThought`, programs) are not runs."""
    for suffix in _DSPY_RUN_SUFFIXES:
        if span.name.endswith(suffix):
            name = span.name[: -len(suffix)]
            return name if name.endswith(_DSPY_AGENTS) else None
    return None


def _haystack_agent_class(span: SpanRecord) -> str | None:
    """The agent class of a Haystack `{Class}.run` span, when the class is an agent: Haystack's
    `Agent` or a class named like one; pipelines and other components are not runs."""
    for suffix in _HAYSTACK_RUN_SUFFIXES:
        if span.name.endswith(suffix):
            name = span.name[: -len(suffix)]
            return name if name.endswith("Agent") else None
    return None


def _metadata(span: SpanRecord) -> Mapping[str, Any]:
    metadata = decode_json(span.attributes.get("metadata"))
    return metadata if isinstance(metadata, Mapping) else {}


def _is_agent_run(span: SpanRecord) -> bool:
    attributes = span.attributes
    if span.scope == _OPENAI_AGENTS:
        # The root AGENT span is the whole trace ("Agent workflow"); agents carry agent.name.
        return "agent.name" in attributes
    if span.scope == _LANGCHAIN:
        # A graph node whose name contains "agent" is marked AGENT too (create_react_agent's
        # model node): a run is the graph itself, not one of its nodes.
        metadata = _metadata(span)
        return metadata.get("lc_agent_name") == span.name or "langgraph_node" not in metadata
    return True


def _agent_name(span: SpanRecord) -> str | None:
    attributes = span.attributes
    if span.scope == ag2.SCOPE and (recipient := ag2.chat_agent(span)) is not None:
        return recipient  # agent.name is the agent that started the chat
    name = as_str(attributes.get("agent.name")) or as_str(attributes.get("graph.node.name"))
    if name:
        return name
    if span.scope in _CREWAI and as_str(attributes.get("graph.node.id")):
        return as_str(attributes.get("graph.node.id"))  # the agent's role, on task and kickoff spans
    if span.scope == _SMOLAGENTS and span.name.endswith(_SMOLAGENTS_RUN_SUFFIX):
        return span.name[: -len(_SMOLAGENTS_RUN_SUFFIX)] or None
    if span.scope == _AUTOGEN:
        return autogen.agent_name_of(span.name) or span.name or None
    if span.scope == _HAYSTACK:
        return _haystack_agent_class(span) or span.name or None  # Haystack agents have no name
    if span.scope == _DSPY:
        return _dspy_agent_class(span) or span.name or None  # nor have DSPy modules
    return span.name or None


def _content(value: Any) -> Any:
    """An input/output value, None when content capture hid it."""
    if value is None or (isinstance(value, str) and value in REDACTED):
        return None
    return value


def _run_input(span: SpanRecord) -> str | None:
    if span.scope in _CREWAI and (task := _crewai_input(span)) is not None:
        return task
    value = _content(span.attributes.get("input.value"))
    if value is None:
        return None
    if span.scope == _HAYSTACK:
        return last_user_text(haystack.component_messages(value, "messages").items)
    if (
        span.scope == _DSPY
        and isinstance(arguments := decode_json(value), Mapping)
        and "input_args" in arguments
    ):
        return _only_text(arguments["input_args"])
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return decoded
    if isinstance(decoded, Mapping):
        # smolagents' run(task=...), AG2's initiate_chat(message=...) and the like
        for key in ("task", "input", "question", "query", "message"):
            if isinstance(decoded.get(key), str):
                return str(decoded[key])
        messages = langchain.messages_of(decoded)
        if messages:
            return last_user_text(messages)
    return None


def _crewai_input(span: SpanRecord) -> str | None:
    """A task span's input holds the agent (or, from the event bus, the whole task prompt), not
    the task: the task description is in the TaskOutput it returned, or in `task_description`.
    A kickoff's input holds the messages it was given."""
    if _content(span.attributes.get("input.value")) is None and "input.value" in span.attributes:
        return None  # inputs hidden (TraceConfig): `task_description` is written regardless
    if isinstance(span.attributes.get("task_description"), str):
        return str(span.attributes["task_description"])
    task = crewai.output_field(decode_json(_content(span.attributes.get("output.value"))), "description")
    if task is not None:
        return task
    kickoff = decode_json(_content(span.attributes.get("input.value")))
    messages = kickoff.get("messages") if isinstance(kickoff, Mapping) else None
    if isinstance(messages, str):
        return messages
    if isinstance(messages, list):
        return last_user_text(genai_messages(messages).items)  # [{role, content}, ...]
    return None


def _run_output(span: SpanRecord) -> str | None:
    value = _content(span.attributes.get("output.value"))
    if value is None:
        return None
    if span.scope == _HAYSTACK:
        last = haystack.last_message(value)
        return last_assistant_text([last]) if last is not None else None
    if span.scope == _DSPY and isinstance(prediction := decode_json(value), Mapping):
        return _only_text({key: item for key, item in prediction.items() if key not in _DSPY_STEPS})
    decoded = decode_json(value)
    if span.scope in _CREWAI and (answer := crewai.output_field(decoded, "raw")) is not None:
        return answer  # TaskOutput / LiteAgentOutput
    if isinstance(decoded, str):
        return decoded
    messages = langchain.messages_of(decoded)
    if messages:
        # The final state's last AI message, even when it is empty: that is what the run answered.
        for message in reversed(messages):
            if message.get("role") == "assistant":
                return "".join(part["content"] for part in message["parts"] if part.get("type") == "text")
    return None


def _only_text(fields: Any) -> str | None:
    """The one text field of a DSPy signature's inputs or outputs (`question -> answer`); None
    when there are several, which no one of them answers alone."""
    if not isinstance(fields, Mapping) or len(fields) != 1:
        return None
    (value,) = fields.values()
    return value if isinstance(value, str) else None


def _tool_arguments(span: SpanRecord, value: Any) -> Any:
    value = _content(value)
    if value is None:
        return None
    decoded = decode_json(value)
    if span.scope == _LLAMA_INDEX:
        return llamaindex.kwargs_of(decoded)
    if (
        span.scope in (_SMOLAGENTS, _DSPY)
        and isinstance(decoded, Mapping)
        and isinstance(decoded.get("kwargs"), Mapping)
        and not decoded.get("args")
    ):
        return dict(decoded["kwargs"])  # recorded as {"args", "kwargs", ...} / {"kwargs"}
    if span.scope == _BEEAI and isinstance(decoded, Mapping) and set(decoded) <= {"input", "options"}:
        return decoded.get("input")  # BeeAI records a tool's run(input, options)
    return ag2.tool_arguments(decoded) if span.scope == ag2.SCOPE else decoded


def flattened_messages(attributes: Mapping[str, Any], prefix: str) -> Messages:
    """`llm.input_messages.{i}.message.*` keys as GenAI-shaped messages."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _MESSAGE_KEY.fullmatch(key, len(prefix)) or _FUNCTION_RESULT_KEY.fullmatch(key, len(prefix))
        if match is None:
            continue
        found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    if not found:
        return Messages()
    return Messages(tuple(_message(found[index]) for index in sorted(found)), captured=True)


def _indexed(fields: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Sub-lists (`contents.{j}.*`, `tool_calls.{k}.*`) in index order, whatever the first index."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix) :].partition(".")
            if index.isdigit():
                items.setdefault(int(index), {})[rest] = value
    return dict(sorted(items.items()))


def _message(fields: Mapping[str, Any]) -> Message:
    role = str(fields.get("role") or "")
    text = fields.get("content")
    if not isinstance(text, str):
        texts = [
            item.get("message_content.text")
            for item in _indexed(fields, "contents.").values()
            if item.get("message_content.type", "text") == "text"
        ]
        text = "".join(t for t in texts if isinstance(t, str)) if texts else None
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": fields.get("tool_call_id"), "response": text})
    elif role == "function":
        parts.extend(autogen.function_results(_indexed(fields, "function.")))
    elif text is not None:
        parts.append({"type": "text", "content": text})
    for call in _indexed(fields, "tool_calls.").values():
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("tool_call.id"),
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments", {}),
            }
        )
    message: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(fields.get("name"), str):
        message["name"] = fields["name"]
    return message


def _responses_output(value: Any) -> Messages:
    """A model span without flattened output messages (OpenAI Agents streaming) may still hold
    the Responses API's `output` items in `output.value`."""
    decoded = decode_json(_content(value))
    responses = decoded if isinstance(decoded, list) else [decoded]
    parts: list[dict[str, Any]] = []
    for response in responses:
        if not isinstance(response, Mapping) or not isinstance(response.get("output"), list):
            continue
        for item in response["output"]:
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "function_call":
                parts.append(
                    {
                        "type": "tool_call",
                        "id": item.get("call_id"),
                        "name": item.get("name"),
                        "arguments": item.get("arguments"),
                    }
                )
            elif item.get("type") == "message":
                for block in item.get("content") or ():
                    if isinstance(block, Mapping) and block.get("type") == "output_text":
                        parts.append({"type": "text", "content": block.get("text")})
    if not parts:
        return Messages()
    return Messages(({"role": "assistant", "parts": parts},), captured=True)
