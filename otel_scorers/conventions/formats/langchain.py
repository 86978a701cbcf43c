"""LangChain's serialised messages and ToolMessages, as instrumentations of LangChain record them.

Three message shapes reach a trace: the raw invoke input (`{"role", "content"}` or a
`["user", "text"]` pair), `message_to_dict` output (`{"type": "human", "data": {...}}`,
OpenInference) and `dumpd` output (`{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
"kwargs": {...}}`, OpenLLMetry). All become GenAI-shaped messages, their tool calls in LangChain's
form (`{"name", "args"}`) or the chat-completions one (`{"function": {"name", "arguments"}}`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from otel_scorers.conventions.base import Message
from otel_scorers.conventions.formats import autogen
from otel_scorers.conventions.formats.json_values import decode_json, python_literal
from otel_scorers.conventions.formats.messages import is_mapping
from otel_scorers.conventions.formats.python_repr import constructed_fields
from otel_scorers.span_record import SpanRecord

#: The span attribute that holds a LangChain run's metadata as JSON (OpenInference, MLflow).
METADATA = "metadata"
#: The keys of LangChain's metadata that say what a span is in an agent graph: the agent's name
#: (`lc_agent_name`), the integration that made the graph (`ls_integration`), and the graph's node
#: a span runs in (`langgraph_node`). Instrumentations that flatten the metadata write each under
#: a prefix of their own (`langfuse.observation.metadata.lc_agent_name`,
#: `traceloop.association.properties.langgraph_node`).
GRAPH_KEYS = ("lc_agent_name", "ls_integration", "langgraph_node")
#: Each of `GRAPH_KEYS` as the end of a flattened key, among attribute keys joined by newlines.
_FLAT_ENDINGS = tuple((key, f".{key}\n") for key in GRAPH_KEYS)
#: A flattened key under this part names the trace's metadata (Langfuse's `langfuse.trace.metadata.*`,
#: the root's, copied onto every span), not the span's.
_TRACE_PART = ".trace."
_NONE: Mapping[str, Any] = {}
#: `ls_integration` values of an agent graph (LangGraph, `create_agent`) in LangChain's metadata.
LANGGRAPH_INTEGRATIONS = frozenset({"langgraph", "langchain_create_agent"})
#: The same, as a flattened key's value: plain, or JSON text (Langfuse's).
_INTEGRATION_TEXTS = LANGGRAPH_INTEGRATIONS | {f'"{value}"' for value in LANGGRAPH_INTEGRATIONS}

_ROLES = {
    "human": "user",
    "user": "user",
    "humanmessage": "user",
    "humanmessagechunk": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "system": "system",
    "systemmessage": "system",
    "tool": "tool",
    "toolmessage": "tool",
    "function": "tool",
}


def _fields(item: Any) -> tuple[str, Mapping[str, Any]] | None:
    """(role, fields) of one serialised message, whatever its shape."""
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        return _ROLES.get(item[0].lower(), item[0]), {"content": item[1]}
    if not is_mapping(item):
        return None
    if is_mapping(item.get("kwargs")) and item.get("lc") is not None:
        kwargs = item["kwargs"]
        ids = item.get("id")
        kind = str(kwargs.get("type") or (ids[-1] if isinstance(ids, list) and ids else ""))
        return _ROLES.get(kind.lower(), kind), kwargs
    if is_mapping(item.get("data")) and "type" in item:
        return _ROLES.get(str(item["type"]).lower(), str(item["type"])), item["data"]
    if "role" in item or "type" in item:
        kind = str(item.get("role") or item.get("type"))
        # AutoGen's messages, recorded by their fields, are read wherever messages are.
        return _ROLES.get(kind.lower()) or autogen.message_role(item) or kind, item
    return None


def content_text(content: Any) -> str | None:
    """A message content: a string, or text blocks joined (typed, or a bare `{"text": ...}` as a
    Haystack `ChatMessage.to_dict()` writes them)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block if isinstance(block, str) else block.get("text")
            for block in content
            if isinstance(block, str)
            or (is_mapping(block) and (block.get("type") == "text" or block.keys() == {"text"}))
        ]
        return "".join(text for text in texts if isinstance(text, str))
    return None


def to_message(item: Any) -> Message | None:
    fields = _fields(item)
    if fields is None:
        return None
    role, data = fields
    text = content_text(data.get("content"))
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": data.get("tool_call_id"), "response": text})
    elif text:
        parts.append({"type": "text", "content": text})
    for call in data.get("tool_calls") or ():
        if is_mapping(call):
            # LangChain's {"name", "args"}, or the chat-completions {"function": {"name", "arguments"}}
            function = call.get("function")
            if "name" not in call and is_mapping(function):
                name, arguments = function.get("name"), function.get("arguments")
            else:
                name, arguments = call.get("name"), call.get("args")
            parts.append({"type": "tool_call", "id": call.get("id"), "name": name, "arguments": arguments})
    return {"role": role, "parts": parts}


def serialised_message(item: Mapping[str, Any]) -> Message | None:
    """A message LangChain serialised with its class (`dumpd`'s `{"lc": 1, "kwargs": {...}}`,
    `message_to_dict`'s `{"type": "human", "data": {...}}`) as a message; None for any other
    mapping (a chat-completions message is read as one)."""
    if "role" in item or not (
        (item.get("lc") is not None and is_mapping(item.get("kwargs")))
        or ("type" in item and is_mapping(item.get("data")))
    ):
        return None
    return to_message(item)


def messages_of(value: Any) -> list[Message] | None:
    """The messages of a graph's input or output state (`{"messages": [...]}`, possibly under
    `inputs`/`outputs`), or None when the value holds none."""
    value = decode_json(value)
    for key in ("inputs", "outputs"):
        if is_mapping(value) and is_mapping(value.get(key)):
            value = value[key]
    if not is_mapping(value) or not isinstance(value.get("messages"), list):
        return None
    return [message for message in map(to_message, value["messages"]) if message is not None]


#: The fields of LangGraph's `Command`, which a tool returns to answer its call with a message and
#: update the graph's state (a handoff tool, Deep Agents' `task`): its ToolMessage is in `update`.
_COMMAND_KEYS = frozenset({"graph", "update", "resume", "goto"})


def tool_message(value: Any) -> Mapping[str, Any] | None:
    """The fields of a serialised ToolMessage (`content`, `tool_call_id`, `status`), if it is one,
    also the one a `Command` the tool returned carries (the last of its update's messages), also
    written as Python's `repr()` of them (`python_repr.constructed_fields`: a ToolMessage's names no
    type, its fields do)."""
    value = decode_json(value)
    if isinstance(value, str):
        value = constructed_fields(value)
        if value is not None and "update" in value:
            value = _last_update_message(value)
        return value if is_mapping(value) and "content" in value and "tool_call_id" in value else None
    if is_mapping(value) and is_mapping(value.get("output")):
        value = value["output"]  # OpenLLMetry's {"output": ToolMessage, "kwargs": ...}
    if is_mapping(value) and "update" in value and _COMMAND_KEYS.issuperset(value):
        value = _last_update_message(value)
    fields = _fields(value) if is_mapping(value) else None
    if fields is None or fields[0] != "tool" or "tool_call_id" not in fields[1]:
        return None
    return fields[1]


def _last_update_message(command: Mapping[str, Any]) -> Any:
    """The last of the messages a `Command`'s update carries, if it carries any."""
    update = command["update"]
    messages = update.get("messages") if is_mapping(update) else None
    return messages[-1] if isinstance(messages, list) and messages else None


#: What LangChain's callbacks are given beside a chain's input (`on_chain_start`) or output
#: (`on_chain_end`), which an instrumentation recording the callback's arguments keeps with it.
_CALLBACK_KEYS = frozenset({"tags", "metadata", "kwargs"})


def callback_value(value: Mapping[str, Any]) -> Any:
    """The input or output of a chain (a graph's state) in what LangChain's callbacks were given
    for its start or end, as an instrumentation recorded them (`{"inputs": ..., "tags",
    "metadata", "kwargs"}`, `{"outputs": ..., "kwargs"}`); None for any other value."""
    for key in ("inputs", "outputs"):
        if key in value and all(other == key or other in _CALLBACK_KEYS for other in value):
            return value[key]
    return None


def tool_start(value: Any) -> tuple[Any, str | None] | None:
    """(arguments, call id) of what LangChain's callback gives a tool's start, as an instrumentation
    records it: `{"input_str": repr(args), "inputs": args, "kwargs": {"tool_call_id"}, ...}`; None
    for any other value."""
    if not is_mapping(value) or "input_str" not in value:
        return None
    kwargs = value.get("kwargs")
    call_id = kwargs.get("tool_call_id") if is_mapping(kwargs) else None
    call_id = call_id if isinstance(call_id, str) else None
    inputs = value.get("inputs")
    if is_mapping(inputs) and inputs:
        return dict(inputs), call_id
    input_str = value.get("input_str")
    return (python_literal(input_str, input_str) if isinstance(input_str, str) else input_str), call_id


def span_metadata(span: SpanRecord) -> Mapping[str, Any]:
    """The LangChain metadata the span holds, wherever its instrumentation keeps it: one JSON
    `metadata` attribute (OpenInference, MLflow), else the keys of `GRAPH_KEYS` flattened under
    a prefix (Langfuse, OpenLLMetry; each value plain or JSON); empty when it holds none."""
    attributes = span.attributes
    metadata = decode_json(attributes.get(METADATA))
    if is_mapping(metadata):
        return metadata
    return _flattened(attributes)


def _flattened(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `GRAPH_KEYS` an instrumentation flattened into attributes of their own, the span's
    (not the trace's)."""
    found = {key: decode_json(attributes[flat]) for key, flat in _flat_keys("\n".join(attributes))}
    return found or _NONE


def _flat_keys(joined: str) -> Iterator[tuple[str, str]]:
    """(LangChain's key, the attribute key) of each flattened key among the span's attribute keys
    joined by newlines, the span's (not the trace's). Asked of spans of every instrumentation: the
    keys are searched in C (`str.find`), and only those that end so are read."""
    if ".lc_agent_name" not in joined and ".ls_integration" not in joined and ".langgraph_node" not in joined:
        return
    text = joined + "\n"
    for key, ending in _FLAT_ENDINGS:
        end = text.find(ending)
        while end != -1:
            flat = text[text.rfind("\n", 0, end) + 1 : end + len(ending) - 1]
            if _TRACE_PART not in flat:
                yield key, flat
            end = text.find(ending, end + 1)


def is_agent_graph(metadata: Mapping[str, Any], span_name: str) -> bool:
    """LangChain's metadata marks the span as an agent graph's own, not one of its nodes': its
    `lc_agent_name` is the span's name, or it is a graph (`ls_integration`) that is no node
    (`langgraph_node`) of another graph."""
    if metadata.get("lc_agent_name") == span_name:
        return True
    return metadata.get("ls_integration") in LANGGRAPH_INTEGRATIONS and "langgraph_node" not in metadata


def is_graph_node(metadata: Mapping[str, Any], span_name: str) -> bool:
    """LangChain's metadata marks the span as one of a graph's nodes (`langgraph_node`, such as a
    `create_agent` graph's `model` and `tools`), not as an agent graph whose name it is."""
    return "langgraph_node" in metadata and metadata.get("lc_agent_name") != span_name


def names_its_node(span: SpanRecord, agent_name: Any) -> bool:
    """The span is named as an agent by the graph node it ran in (LangChain's metadata
    `langgraph_node` is its agent's name: a `create_agent` graph's `model` and `tools`, each
    recorded as an agent of its own): a step of the graph's run. An agent a node runs (a graph
    a tool calls) inherits the node in its metadata under a name of its own."""
    if not isinstance(agent_name, str):
        return False
    attributes = span.attributes
    raw = attributes.get(METADATA)
    if (raw is None or (type(raw) is str and "langgraph_node" not in raw)) and (
        ".langgraph_node" not in "\n".join(attributes)
    ):
        return False  # asked of every agent span: no metadata can name a node, nothing decoded
    return span_metadata(span).get("langgraph_node") == agent_name


def marks_agent_graph(span: SpanRecord) -> bool:
    """The span is an agent graph by its LangChain metadata, whichever instrumentation recorded it
    without marking it an agent (MLflow's CHAIN spans, Langfuse's chain observations)."""
    marked = metadata_marks_graph(span)
    return marked if marked is not None else flattened_marks_graph(span)


def metadata_marks_graph(span: SpanRecord) -> bool | None:
    """`marks_agent_graph` by the JSON `metadata` attribute; None when the span has none (its
    metadata may be flattened: `flattened_marks_graph`). Cheap for every other span: one lookup
    and a substring test before any decoding."""
    raw = span.attributes.get(METADATA)
    if raw is None:
        return None
    if isinstance(raw, str) and (
        ("ls_integration" not in raw and "lc_agent_name" not in raw)
        # A graph's node, unless the agent's name is the node's: not a graph of its own.
        or ("langgraph_node" in raw and not _names_agent(raw, span.name))
    ):
        return False
    return is_agent_graph(span_metadata(span), span.name)


def flattened_marks_graph(span: SpanRecord) -> bool:
    """`marks_agent_graph` by metadata flattened into keys of their own."""
    return _flattened_marks_graph(span.attributes, span.name)


def _flattened_marks_graph(attributes: Mapping[str, Any], name: str) -> bool:
    """`marks_agent_graph` of metadata flattened into keys of their own, with the raw text's
    tests made first on the keys joined (a key that can mark a graph; for a graph's node, a value
    that is the span's name, plain or JSON), then on the few keys that end so, undecoded."""
    joined = "\n".join(attributes)
    if ".lc_agent_name" not in joined and ".ls_integration" not in joined:
        return False
    if ".langgraph_node" in joined:
        values = attributes.values()
        if name not in values and f'"{name}"' not in values:
            return False
    named = integration = node = False
    for key, flat in _flat_keys(joined):
        value = attributes[flat]
        if key == "langgraph_node":
            node = True
        elif key == "lc_agent_name":
            named = value == name or value == f'"{name}"'
        else:
            integration = value in _INTEGRATION_TEXTS
    return named or (integration and not node)


def _names_agent(raw: str, name: str) -> bool:
    """The metadata's JSON text may give `name` as its `lc_agent_name` (written by Python's
    `json.dumps`, with or without the space after the colon; a name it may escape is decoded)."""
    if not name.isascii() or '"' in name or "\\" in name:
        return True
    return f'"lc_agent_name": "{name}"' in raw or f'"lc_agent_name":"{name}"' in raw
