"""A run's request and answer, found wherever its trace keeps them, with where they came from.

The run span's text when it holds the user's request and the agent's answer. When it holds a
structure instead, one reduction serves every convention: a message list (or a framework's
state holding one, `{"messages": [...]}`) gives its last user message as the request and its
last assistant message as the answer; a function's recorded call (`{"args", "kwargs"}`, either
may be left out) its first argument, or its one keyword argument; a request recorded as the
list of a function's arguments holding one text (`["..."]`) that text; a single well-known key (`{"output": "..."}`, a parameter ending in one, `user_prompt`, `user_msg`, a
wrapped value's `{"_value": ...}`) or, of a request's arguments by name or a message's fields
beside who sent it, the one such text (of a request, else the one such object's request),
beside an object's private fields (`_state`) and its framework's steps (DSPy's `reasoning`) or
alone, its text; the side's chat message held under a well-known key (a framework's result object,
`{"response": {"role": "assistant", ...}, ...}`) its text; a type descriptor
(`{"output_type": "str"}`) nothing. A structure that is none of these is kept as it is (an agent
may answer in JSON). Then the span around the run that wraps it (`RunParts.wrapper`), then the
run's own model calls: the last user message of the first call, the last call's assistant text.
A request inside the context a multi-agent Swarm gives its agents is the user's request
(`swarm_context`), whichever reader claimed the span. Where the text was derived rather than read,
`Found.source` says from where; where it could not be found in a structure, `Found.unfound` says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from otel_scorers.conventions.base import Message, RunSpanContent
from otel_scorers.conventions.formats import autogen, langchain
from otel_scorers.conventions.formats.json_values import decode_json
from otel_scorers.conventions.formats.llamaindex import message_text
from otel_scorers.conventions.formats.messages import (
    has_text,
    is_mapping,
    last_assistant_text,
    last_user_text,
    text_of,
)
from otel_scorers.conventions.formats.python_repr import object_fields
from otel_scorers.conventions.formats.recorded_call import CALL_KEYS, WRAPPED_VALUE
from otel_scorers.conventions.formats.swarm_context import swarm_request
from otel_scorers.conventions.formats.typed_value import is_typed, typed_value

Side = Literal["input", "output"]

#: Keys that, alone in an object, hold the text itself.
_TEXT_KEYS: dict[Side, tuple[str, ...]] = {
    "input": (
        "input",
        "question",
        "query",
        "prompt",
        "request",
        "message",
        "content",
        "text",
        "task",
        "description",
        "msg",
        WRAPPED_VALUE,
    ),
    "output": (
        "output",
        "final_output",
        "answer",
        "response",
        "result",
        "message",
        autogen.RESPONSE_MESSAGE,
        "content",
        "text",
        WRAPPED_VALUE,
    ),
}
#: A request's argument named for its text ends so in JSON (`"prompt"`, `"user_prompt"`).
_NAMED_KEYS: dict[Side, tuple[str, ...]] = {
    side: tuple(f'{key}"' for key in keys) for side, keys in _TEXT_KEYS.items()
}
_MAX_NAMED_ARGUMENTS = 8
#: A message's fields that say who sent it, beside its text.
_SENDERS = frozenset({"sender", "source", "role", "name"})
#: The role of the message that, held under a well-known key, is the request or the answer.
_ROLES: dict[Side, tuple[str, ...]] = {"input": ("user", "human"), "output": ("assistant", "ai", "model")}
#: Where derived text came from, as `AgentRun.text_sources` and `--explain` say it.
FROM_STRUCTURE = "reduced from the structure on the run span"
FROM_WRAPPER = "from the span around the run"
FROM_WRAPPER_STRUCTURE = "reduced from the structure on the span around the run"
FROM_MODEL_CALLS = "from the run's model calls"
#: Where a run's tool calls came from when it has no model or tool span of its own.
FROM_CONVERSATION_AROUND = "from the conversation the span around the run keeps"
#: A recorded value that holds nothing: as if the span held none.
_EMPTY_STRUCTURES = frozenset({"{}", "[]"})
#: No structure of these forms: not reduced.
_NOT_A_FORM = object()


@dataclass(slots=True)
class Found:
    """A run's request or answer; `source` None when read as the run span holds it, `unfound`
    why it could not be found when the run span held only a structure that has no text.
    Not frozen: two are made for every run read, and nothing changes one once made."""

    text: str | None
    source: str | None = None
    unfound: str | None = None


def reduce_structure(text: str, side: Side, steps: frozenset[str] = frozenset()) -> Any:
    """The request (`side` input) or answer (output) a structure holds: its text, None when it is a
    structure of a known form with no text in it, `_NOT_A_FORM` when it is not one (kept).
    `steps`: the fields a result of the run's framework holds beside its answer, never the text."""
    if text[:1] not in ("{", "[") or text[-1:] not in ("}", "]") or not _may_be_a_form(text, side, steps):
        return _NOT_A_FORM
    value = decode_json(text)
    if isinstance(value, str):
        return _NOT_A_FORM
    return _reduce(value, side, steps, depth=0)


def reduced_answer(value: Any) -> str | None:
    """The answer a decoded structure of a known form holds (an agent's state's last assistant
    message); None when it holds none or is not one."""
    reduced = _reduce(value, "output", frozenset(), depth=0)
    return reduced if isinstance(reduced, str) else None


def reduced_text(text: str, side: Side) -> str | None:
    """`text` with a structure of a known form reduced to its text (None when it holds none);
    any other text as it is."""
    reduced = reduce_structure(text, side)
    return text if reduced is _NOT_A_FORM else reduced if isinstance(reduced, str) else None


def _may_be_a_form(text: str, side: Side, steps: frozenset[str]) -> bool:
    """Whether the text may hold one of the forms reduced, before paying for decoding it: each
    form has words of its own (an object of one key has one colon outside its value's nesting,
    at least as a first approximation)."""
    if text[0] == "[":
        return "role" in text or "type" in text or "content=" in text or _one_text_listed(text, side)
    return (
        "messages" in text
        or "args" in text
        or "type" in text
        or '"role"' in text
        or 'puts"' in text  # what LangChain's callbacks were given (`"inputs"`, `"outputs"`)
        or '"_' in text
        or _one_key(text)
        or '":[]' in text  # a field holding nothing beside the text
        or any(step in text for step in steps)
        # A request's arguments by name: a few of them (a state of many keys is not a call).
        or (text.count(":") <= _MAX_NAMED_ARGUMENTS and any(key in text for key in _NAMED_KEYS[side]))
    )


def _one_text_listed(text: str, side: Side) -> bool:
    """Whether a request may be a function's arguments recorded as a list holding one text
    (`["What is the weather?"]`): one quoted item, nothing around it."""
    return side == "input" and text.startswith('["') and text.endswith('"]')


def _one_key(text: str) -> bool:
    """Whether a JSON object's text may be of one key: one colon, or one key's end (`":`) when its
    text value has colons of its own (`{"output": "Sorry: the service is down."}`); a quote
    escaped in a text (`\\"`) ends no key."""
    return text.count(":") == 1 or text.count('":') - text.count('\\":') == 1


def _reduce(value: Any, side: Side, steps: frozenset[str], depth: int) -> Any:
    if depth > 3:
        return _NOT_A_FORM
    if isinstance(value, list):
        if side == "input" and len(value) == 1 and isinstance(value[0], str):
            return value[0]  # a function's arguments, listed: its one argument, the request
        messages = _messages(value)
        if messages is None:
            return _NOT_A_FORM
        return last_user_text(messages) if side == "input" else last_assistant_text(messages)
    if not is_mapping(value):
        return _NOT_A_FORM
    if is_typed(value):  # a value tagged with its type (`{"type": "json", "value": ...}`)
        inner = typed_value(value)
        if isinstance(inner, str):
            reduced = reduce_structure(inner, side, steps)
            return inner if reduced is _NOT_A_FORM else reduced
        return _reduce(inner, side, steps, depth + 1)
    given = langchain.callback_value(value)
    if given is not None:  # what LangChain's callbacks were given: the chain's input or output
        return given if isinstance(given, str) else _reduce(given, side, steps, depth + 1)
    messages = langchain.messages_of(value) if isinstance(value.get("messages"), list) else None
    if messages is not None:
        return last_user_text(messages) if side == "input" else last_assistant_text(messages)
    if value and value.keys() <= CALL_KEYS:
        args, kwargs = value.get("args"), value.get("kwargs")
        first = args[0] if isinstance(args, list) and args else None
        if first is None and is_mapping(kwargs) and len(kwargs) == 1:
            first = next(iter(kwargs.values()))
        return first if isinstance(first, str) else _reduce(first, side, steps, depth + 1)
    if _describes(value):
        return None  # a type descriptor, or an agent's declaration: what it is, not what it says
    public = _public_fields(value, steps)
    if len(public) == 1:
        key, inner = next(iter(public.items()))
        if _text_key(key, side):
            if isinstance(inner, str):
                return inner
            reduced = _reduce(inner, side, steps, depth + 1)
            if reduced is not _NOT_A_FORM:
                return reduced
    elif side == "input" or _sent_message(public):
        # A function's arguments by name (`{"user_prompt": ..., "message_history": [...]}`), a
        # message sent (`{"message": ..., "sender": ..., "valid": true}`): the one text whose name
        # says it is the request, or the answer.
        named = [inner for key, inner in public.items() if _text_key(key, side) and isinstance(inner, str)]
        if len(named) == 1:
            return named[0]
        # The one argument named for the request holding an object (a task given to an agent,
        # `{"task": {"description": ...}, "context": ...}`): the request that object holds.
        held = [inner for key, inner in public.items() if _text_key(key, side) and is_mapping(inner)]
        if side == "input" and not named and len(held) == 1:
            reduced = _reduce(held[0], side, steps, depth + 1)
            if reduced is not _NOT_A_FORM:
                return reduced
    return _held_message(value, side)


def _sent_message(fields: Mapping[str, Any]) -> bool:
    """The answer's fields are a message sent: who sent it (`_SENDERS`) beside the texts named for
    the answer, no other text; an answer of other fields (`{"answer": ..., "confidence": 0.9}`,
    `{"output": ..., "note": ...}`) is the agent's JSON, kept."""
    texts = [key for key, inner in fields.items() if isinstance(inner, str)]
    return any(key in _SENDERS for key in texts) and all(
        key in _SENDERS or _text_key(key, "output") for key in texts
    )


def _describes(value: Mapping[str, Any]) -> bool:
    """The object says what an answer's type is (`{"output_type": "str"}`), with what an agent
    has beside it when it declares the agent (`_DECLARATION`), not what anything says."""
    typed = [key == "type" or key.endswith("_type") for key in value]
    return any(typed) and all(
        is_type or key in _DECLARATION for key, is_type in zip(value, typed, strict=True)
    )


def _text_key(key: str, side: Side) -> bool:
    """A well-known key of the side's text, or one a function's parameter qualifies
    (`user_prompt`, `user_input`)."""
    return key in _TEXT_KEYS[side] or key.rpartition("_")[2] in _TEXT_KEYS[side]


def _public_fields(value: Mapping[str, Any], steps: frozenset[str]) -> Mapping[str, Any]:
    """An object's fields without its private ones (`_state`, `_output_tool_name`: a result
    object serialised with its internals, Pydantic AI's `AgentRunResult`), the steps its
    framework records beside the answer (DSPy's `trajectory`, `reasoning`), which are never the
    text, and those that hold nothing (Mastra's `{"text": ..., "files": []}`); the wrapped
    value's own field is kept."""
    if not any(_left_out(key, inner, steps) for key, inner in value.items()):
        return value
    return {key: inner for key, inner in value.items() if not _left_out(key, inner, steps)}


def _left_out(key: str, inner: Any, steps: frozenset[str]) -> bool:
    return (key.startswith("_") and key != WRAPPED_VALUE) or key in steps or inner in _NOTHING


#: What an agent's declaration holds beside the type of its answer (the OpenAI Agents SDK's record
#: of an agent: `{"name", "handoffs", "tools", "output_type"}`): no request, no answer.
_DECLARATION = frozenset({"name", "tools", "handoffs"})
#: A field's value that holds nothing.
_NOTHING: tuple[Any, ...] = (None, [], {})


def _held_message(value: Mapping[str, Any], side: Side) -> Any:
    """The text of the chat message a framework's result object holds under a well-known key
    (LlamaIndex's `AgentOutput`: `{"response": {"role": "assistant", "blocks": [...]}, ...}`;
    AutoGen's `Response`: `{"chat_message": {"source": "weather_agent", "content": ...}, ...}`), when
    the message is the side's (the assistant's answer, the user's request); else not a form."""
    for key in _TEXT_KEYS[side]:
        inner = value.get(key)
        if is_mapping(inner) and (inner.get("role") or autogen.message_role(inner)) in _ROLES[side]:
            return message_text(inner)
    return _NOT_A_FORM


def _messages(items: Sequence[Any]) -> list[Message] | None:
    """The items as messages, when every one is a message in a form a framework writes (a dict,
    a `[role, text]` pair, a message object's pydantic `str()`), else None."""
    found: list[Message] = []
    for item in items:
        if isinstance(item, str):
            item = _message_fields(item)
        if is_mapping(item) and isinstance(item.get("parts"), list):
            found.append(item)  # already in the GenAI form
            continue
        message = langchain.to_message(item) if item is not None else None
        if message is None:
            return None
        found.append(message)
    return found or None


def _message_fields(text: str) -> Mapping[str, Any] | None:
    """A message object's `str()` as a message: its role from the fields only its kind has."""
    fields = object_fields(text)
    if fields is None or "content" not in fields:
        return None
    role = "tool" if "tool_call_id" in fields else "assistant" if "tool_calls" in fields else "user"
    return {**fields, "role": role}


def handed_text(messages: Sequence[Message]) -> str | None:
    """The text an agent's input ends with when that is an assistant's message of text only, after
    a user's: the message another agent wrote, handed to this one as what to answer (a team's
    previous speaker); None for any other input (a request, a conversation ending with one)."""
    if len(messages) < 2:
        return None
    last = messages[-1]
    if last.get("role") not in ("assistant", "model") or not has_text(last):
        return None
    if any(part.get("type") != "text" for part in last.get("parts", ())):
        return None
    return text_of(last) if any(message.get("role") == "user" for message in messages[:-1]) else None


def span_text(
    content: RunSpanContent, side: Side, wrapper: bool = False, steps: frozenset[str] = frozenset()
) -> Found | None:
    """The request or answer a run span (or the span around it) holds, None when it holds none;
    `steps` as for `reduce_structure`."""
    text = content.input_text if side == "input" else content.output_text
    if text and side == "input":
        text = swarm_request(text) or text  # the user's request inside a Swarm's context
    # An empty value is what some span processors write when content capture hides it; an empty
    # structure what a recorder writes for a function that returned nothing (it raised).
    if text and text not in _EMPTY_STRUCTURES:
        reduced = reduce_structure(text, side, steps)
        if reduced is _NOT_A_FORM:
            return Found(text, FROM_WRAPPER if wrapper else None)
        if isinstance(reduced, str):
            return Found(reduced, FROM_WRAPPER_STRUCTURE if wrapper else FROM_STRUCTURE)
        return Found(
            None,
            unfound=f"the {'span around the run' if wrapper else 'run span'} holds a structure without text",
        )
    messages = content.input if side == "input" else content.output
    if messages.captured:
        if side == "input":
            found = handed_text(messages.items) or last_user_text(messages.items)
        else:
            found = last_assistant_text(messages.items)
        if found is not None:
            return Found(found, FROM_WRAPPER if wrapper else None)
    return None
