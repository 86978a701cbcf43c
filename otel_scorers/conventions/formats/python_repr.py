"""Values an instrumentation wrote as Python's text of an object rather than as JSON.

Three forms reach traces: the repr of JSON-like data (`{'temp_f': 72, 'sunny': True}`, read by
`json_values.python_literal`), the `str()` of a pydantic model, a framework's message object
among them: `content='Sunny' name='get_weather' tool_call_id='call_1'`, and the `repr()` of an
object built of keyword fields, a dataclass's or a pydantic model's, nested in another's or in
data: `Command(update={'messages': [ToolMessage(content='Sunny', tool_call_id='call_1')]})`. All
are read without evaluating anything (`ast.literal_eval` on each field's value, the syntax tree of
a repr of objects), within `MAX_LITERAL_CHARS`; text that is not certainly one of them stays text.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from otel_scorers.conventions.formats.json_values import MAX_LITERAL_CHARS, python_literal
from otel_scorers.conventions.formats.messages import is_mapping

_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_NEXT_FIELD = re.compile(r"\s+[A-Za-z_][A-Za-z0-9_]*=")
_OPEN = "([{"
_CLOSE = ")]}"
_UNREAD = object()
#: How the `repr()` of an object built of keyword fields begins: its class's name, a parenthesis.
_CONSTRUCTED = re.compile(r"[A-Z][A-Za-z0-9_]*\(")
#: Objects nested deeper in a repr are not read.
_MAX_NESTING = 32
#: Python's default text of an object that has none of its own (`<generator object f at 0x7f...>`):
#: it names the object, not a value it holds.
_DEFAULT_REPR = re.compile(r"<[\w.]+ object(?: \S+)? at 0x[0-9a-fA-F]+>")


def _value_end(text: str, start: int) -> int | None:
    """Where the field value starting at `start` ends: the first whitespace outside quotes and
    brackets that a next `name=` follows, or the end of the text; None when quotes or brackets
    are left open (not a repr this reads)."""
    depth = 0
    quote = ""
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if quote:
            if char == "\\":
                index += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif char.isspace() and depth == 0 and _NEXT_FIELD.match(text, index):
            return index
        index += 1
    return length if depth == 0 and not quote else None


def object_fields(text: str) -> dict[str, Any] | None:
    """The fields of a pydantic model's `str()` (`name=value` pairs, each value a Python
    literal), or None when `text` is not certainly one: too long, a value that is not a literal
    (a nested object's text), an unclosed quote or bracket."""
    if len(text) > MAX_LITERAL_CHARS or _FIELD.match(text) is None:
        return None
    fields: dict[str, Any] = {}
    index = 0
    while index < len(text):
        match = _FIELD.match(text, index)
        if match is None:
            return None
        end = _value_end(text, match.end())
        if end is None:
            return None
        value = python_literal(text[match.end() : end], _UNREAD)
        if value is _UNREAD:
            return None
        fields[match.group(1)] = value
        index = end
        while index < len(text) and text[index].isspace():
            index += 1
    return fields


def message_content(value: Any) -> tuple[bool, Any]:
    """(True, its content) when `value` is a framework's tool-result message, as a pydantic
    `str()` or as a mapping (`content` with the `tool_call_id` it answers, LangChain's
    ToolMessage); (False, value) otherwise."""
    fields: Any = object_fields(value) if isinstance(value, str) else value
    if is_mapping(fields) and "content" in fields and "tool_call_id" in fields:
        return True, fields["content"]
    return False, value


def decoded_value(value: Any) -> Any:
    """A tool's argument or result as the tool saw it: a Python repr of JSON-like data as that
    data, a tool-result message as its content; anything else as it is."""
    if not isinstance(value, str):
        found, content = message_content(value)
        return content if found else value
    if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
        return message_content(python_literal(value, value))[1]
    if "tool_call_id=" not in value:  # most results: plain text, not a message object
        return value
    found, content = message_content(value)
    return content if found else value


def is_default_repr(value: Any) -> bool:
    """`value` is Python's default text of an object (`<generator object f at 0x7f...>`): what a
    tool that returned a generator or an object without text of its own was recorded as."""
    return isinstance(value, str) and value[:1] == "<" and _DEFAULT_REPR.fullmatch(value) is not None


def constructed_fields(text: str) -> dict[str, Any] | None:
    """The fields of the `repr()` of an object built of keyword fields (`Name(field=value, ...)`,
    a dataclass's or a pydantic model's), each nested object's as its fields too, or None when
    `text` is not certainly one: too long, a positional argument, a value neither a literal nor
    such an object. Its syntax tree is read; nothing is evaluated."""
    if len(text) > MAX_LITERAL_CHARS or text[-1:] != ")" or _CONSTRUCTED.match(text) is None:
        return None
    try:
        value = _tree_value(ast.parse(text, mode="eval").body, 0)
    except (Exception, MemoryError, RecursionError):  # bad input stays text, never an error
        return None
    return value if isinstance(value, dict) else None


def data_with_objects(text: str) -> Any:
    """The `repr()` of data (a dict or a list) holding objects built of keyword fields
    (`{'messages': [ToolMessage(content='Sunny', status='error')]}`), each object as its fields;
    None when `text` is not certainly one. Its syntax tree is read; nothing is evaluated."""
    if len(text) > MAX_LITERAL_CHARS or text[:1] not in ("{", "[") or text[-1:] not in ("}", "]"):
        return None
    try:
        value = _tree_value(ast.parse(text, mode="eval").body, 0)
    except (Exception, MemoryError, RecursionError):  # bad input stays text, never an error
        return None
    return value if isinstance(value, (dict, list)) else None


def _tree_value(node: ast.expr, depth: int) -> Any:
    """The value a node of a repr's syntax tree writes (`constructed_fields`); raises ValueError
    on any other node."""
    if depth > _MAX_NESTING:
        raise ValueError("nested too deep")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        keywords = node.keywords
        if any(keyword.arg is None for keyword in keywords):
            raise ValueError("not a keyword field")
        return {str(keyword.arg): _tree_value(keyword.value, depth + 1) for keyword in keywords}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_tree_value(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [ast.literal_eval(key) if key is not None else None for key in node.keys]
        if not all(isinstance(key, str) for key in keys):
            raise ValueError("not a JSON object")
        return {key: _tree_value(item, depth + 1) for key, item in zip(keys, node.values, strict=True)}
    literal = ast.literal_eval(node)
    if literal is None or isinstance(literal, (str, bool, int, float)):
        return literal
    raise ValueError("no JSON form")
