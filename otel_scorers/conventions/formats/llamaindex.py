"""What LlamaIndex's agent workflows write, as OpenInference and OpenLLMetry both record it.

An agent run (`FunctionAgent`, `ReActAgent`, a multi-agent `AgentWorkflow`) is one workflow
run: a span named after the agent's class (`FunctionAgent.run` in OpenInference,
`FunctionAgent.workflow` in OpenLLMetry) that names no agent and holds no user text. Its steps
(`setup_agent`, `run_agent_step`, `parse_agent_output`, `call_tool`, ...) carry the workflow's
events: `current_agent_name` is the agent at work, the final `AgentOutput` / `StopEvent` holds
the answer. OpenInference writes an event as its Python repr (inside `{"ctx", "ev"}`), OpenLLMetry
as JSON. A tool's result is a `ToolOutput`: the text the model is given, and `is_error`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from otel_scorers.conventions.formats.json_values import decode_json, python_literal
from otel_scorers.conventions.formats.messages import as_str, is_mapping

#: The tool `AgentWorkflow` gives each agent that may hand the conversation to another.
HANDOFF_TOOL = "handoff"
#: The workflow every LlamaIndex agent class derives from, when used with several agents.
_AGENT_WORKFLOW = "AgentWorkflow"
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
#: The agent field that ends an `AgentInput(...)` / `AgentSetup(...)` repr.
_AGENT_AT_END = re.compile(rf"current_agent_name=({_STRING})\)\s*$")
_TEXT_BLOCK = re.compile(rf"TextBlock\(block_type='text', text=({_STRING})")
#: Spaces before `Answer:` on its own line; not `\s*`, which would search a run of newlines from
#: each newline in it (quadratic: seconds on 20,000).
_REACT_ANSWER = re.compile(r"(?:^|\n)[^\S\n]*Answer:\s*")


#: The classes whose methods LlamaIndex's agent runs are spans of, `{Class}.{method}` whichever
#: instrumentation wrote them: its workflow agents and their steps, its tools, and the query
#: engines, retrievers, node parsers and embeddings (`...Embedding`) a tool may run, which are
#: workflows too but not agents. They name a span as LlamaIndex's when its scope does not.
_SPAN_CLASSES = frozenset(
    {
        "BaseWorkflowAgent",
        _AGENT_WORKFLOW,
        "FunctionAgent",
        "ReActAgent",
        "CodeActAgent",
        "FunctionTool",
        "QueryEngineTool",
        "RetrieverQueryEngine",
        "VectorIndexRetriever",
        "CompactAndRefine",
        "SentenceSplitter",
        "TokenTextSplitter",
        "ReActOutputParser",
    }
)
_EMBEDDING = "Embedding"


@lru_cache(maxsize=1024)  # span names repeat: each is split once
def names_its_class(span_name: str) -> bool:
    """The span is named `{Class}.{method}` after one of LlamaIndex's classes (`_SPAN_CLASSES`)."""
    class_name, dot, _ = span_name.partition(".")
    return bool(dot) and (class_name in _SPAN_CLASSES or class_name.endswith(_EMBEDDING))


def is_agent_class(span_name: str, suffix: str) -> bool:
    """A workflow span `{Class}{suffix}` whose class is an agent: LlamaIndex's agents are named
    `...Agent` (FunctionAgent, ReActAgent, CodeActAgent, and subclasses named that way) or are
    an `AgentWorkflow`; other workflows (query engines, ingestion, embeddings) are not runs."""
    if not span_name.endswith(suffix):
        return False
    class_name = span_name[: -len(suffix)]
    return class_name.endswith("Agent") or class_name == _AGENT_WORKFLOW


def _string(literal: str) -> str | None:
    value = python_literal(literal, None)
    return value if isinstance(value, str) else None


def repr_agent_name(event: str) -> str | None:
    """`current_agent_name` of an `AgentInput(...)` / `AgentSetup(...)` repr (OpenInference)."""
    if not event.startswith(("AgentInput(", "AgentSetup(")):
        return None
    match = _AGENT_AT_END.search(event[-512:])
    return _string(match.group(1)) if match else None


def repr_answer(event: str) -> str | None:
    """The response text of an `AgentOutput(...)` repr (OpenInference): its text blocks."""
    if not event.startswith("AgentOutput(response=ChatMessage("):
        return None
    response, found, _ = event.partition("]), structured_response=")
    if not found:
        return None
    texts = [_string(match.group(1)) for match in _TEXT_BLOCK.finditer(response)]
    return react_answer("".join(text for text in texts if text is not None))


def step_event(input_value: Any) -> str | None:
    """The event a step span got, from OpenInference's `{"ctx": ..., "ev": "<repr>"}` input."""
    decoded = decode_json(input_value)
    return as_str(decoded.get("ev")) if is_mapping(decoded) else None


def json_agent_name(output: Any) -> str | None:
    """`current_agent_name` of an event written as JSON (OpenLLMetry's step outputs)."""
    return as_str(output.get("current_agent_name")) if is_mapping(output) else None


def json_input(output: Any) -> str | None:
    """The user's request in the event a run's first step returns (`AgentInput`), written as JSON
    (OpenLLMetry): the last user message of its `input` list."""
    messages = output.get("input") if is_mapping(output) else None
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if is_mapping(message) and message.get("role") == "user":
            return message_text(message)
    return None


def json_answer(output: Any) -> str | None:
    """The answer in the `StopEvent` a run's last step returns, written as JSON (OpenLLMetry):
    `{"result": {"response": {"blocks": [{"text": ...}]}, ...}}`."""
    if not is_mapping(output) or not is_mapping(output.get("result")):
        return None
    response = output["result"].get("response")
    text = message_text(response)
    return react_answer(text) if text is not None else None


def message_text(message: Any) -> str | None:
    """The text of a `ChatMessage` as JSON: its text blocks, or its `content`."""
    if not is_mapping(message):
        return None
    blocks = message.get("blocks")
    if isinstance(blocks, list):
        texts = [block.get("text") for block in blocks if is_mapping(block)]
        return "".join(text for text in texts if isinstance(text, str))
    return as_str(message.get("content"))


def react_answer(text: str) -> str:
    """A ReActAgent's model writes `Thought: ... Answer: <answer>`; its run answers the part after
    `Answer:`. Any other text is the answer as it is."""
    if not text.lstrip().startswith("Thought:"):
        return text
    matches = list(_REACT_ANSWER.finditer(text))
    return text[matches[-1].end() :].strip() if matches else text


def tool_output(value: Any) -> tuple[Any, bool]:
    """(result, failed) of a `ToolOutput` as JSON: the text the model was given (a tool's return
    value as `str()` writes it, so a dict arrives as its repr, read back as data) and `is_error`.
    A query engine's `Response` as JSON (`{"response", "source_nodes", "metadata"}`, what a
    `QueryEngineTool` returned) is the text it gave the model, `str(response)`: its `response`.
    Anything else is the result as it is."""
    decoded = decode_json(value)
    if not is_mapping(decoded) or "blocks" not in decoded or "raw_output" not in decoded:
        if is_mapping(decoded) and "source_nodes" in decoded and isinstance(decoded.get("response"), str):
            return decoded["response"], False
        return decoded, False
    failed = decoded.get("is_error") is True
    text = message_text(decoded)
    if text is None:
        return decoded.get("raw_output"), failed
    return decode_json(text), failed


def kwargs_of(value: Any) -> Any:
    """A tool's arguments from `{"kwargs": {...}}` (how both record a tool's call), without the
    workflow `ctx` that LlamaIndex passes to tools that take one."""
    decoded = decode_json(value)
    if is_mapping(decoded) and is_mapping(decoded.get("kwargs")) and not decoded.get("args"):
        return {key: item for key, item in decoded["kwargs"].items() if key != "ctx"}
    return decoded


def handoff_target(tool_name: str | None, arguments: Any) -> str | None:
    """The agent an `AgentWorkflow` handoff passes the conversation to (`to_agent`)."""
    if tool_name != HANDOFF_TOOL or not is_mapping(arguments):
        return None
    return as_str(arguments.get("to_agent"))


def retrieved_nodes(value: Any) -> list[tuple[str, str | None]]:
    """(text, node id) of what a retriever returned, written as JSON (OpenLLMetry): a list of
    `NodeWithScore`, each a JSON string or object `{"node": {"id_", "text", ...}, "score"}`."""
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return []
    found = []
    for item in decoded:
        scored = decode_json(item)
        node = scored.get("node") if is_mapping(scored) else None
        text = as_str(node.get("text")) if is_mapping(node) else None
        if node is not None and text is not None:
            found.append((text, as_str(node.get("id_"))))
    return found
