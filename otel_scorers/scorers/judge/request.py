"""What one judge request carries: the prompt, an output bound, and the reply's JSON schema in
the form the provider accepts.

The output bound (`max_tokens`) keeps one runaway reply from holding a model's slot until the
deadline: on a single-slot local server every call queued behind it would time out too. The
schema tells the model the exact shape of the reply; sent as `{"type": "json_object"}` alone, a
model may answer valid JSON of any shape. Providers take the schema in one of three forms:

- `json_schema`: OpenAI's `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`,
  for models litellm knows to support response schemas, and for `ollama/`, `ollama_chat/`
  (litellm turns it into Ollama's `format`), `hosted_vllm/` and `lm_studio/`;
- `json_object_schema`: llama.cpp's `{"type": "json_object", "schema": ...}` (its server and
  llama-cpp-python's both turn the schema into a grammar), for an OpenAI-compatible server at
  `api_base` that litellm knows nothing about;
- `json_object`: JSON mode without a shape, where that is all the provider takes.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from otel_scorers.scorers.judge.config import JudgeConfig
from otel_scorers.scorers.judge.usage import Message
from otel_scorers.throttled_log import throttled

#: The output bound of a reply of fixed fields (a verdict, scores, a reason).
SHORT_REPLY_MAX_TOKENS = 256
#: The output bound of a reply that holds a list (one item per claim, statement, criterion...)
#: or open keys (a batch's one part per scorer): it grows with the judged text.
LONG_REPLY_MAX_TOKENS = 1024

#: Providers that take OpenAI's `json_schema` form although litellm's model table cannot say
#: so for every model they serve.
_SCHEMA_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "lm_studio"})
#: Providers through which litellm sends `response_format` as it is to the server at `api_base`.
_OPENAI_COMPATIBLE = frozenset({"openai", "custom_openai"})
_SCALARS = frozenset({"string", "number", "integer", "boolean", "null"})
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class ShapeSchema:
    """A reply shape's JSON schema, compacted, and its default output bound."""

    schema: Mapping[str, Any] | None  # None: the shape has no JSON schema (logged once)
    max_tokens: int


def judge_request(
    config: JudgeConfig,
    litellm: Any,
    model: str,
    messages: Sequence[Message],
    shape: Any,
    name: str | None = None,
    max_tokens: int | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `litellm.acompletion` for one judge call whose reply must be
    `shape` (a pydantic model, TypedDict, dataclass...). `name` is the scorer's name (it keys
    `max_output_tokens` in the config and names the schema; default: the shape's name);
    `max_tokens` is the caller's own bound for this reply, else the shape's default; `api_key`
    the key to send (default: the configured one)."""
    described = shape_schema(shape)
    reply_name = name or shape_name(shape)
    request: dict[str, Any] = {
        "model": model,
        "messages": [dict(message) for message in messages],
        "temperature": config.temperature,
        "max_tokens": output_bound(config, reply_name, max_tokens or described.max_tokens),
        # constant, so litellm reuses its client (a per-call value would make a client per call);
        # the score's deadline is enforced around the call
        "timeout": config.attempt_timeout_s or config.timeout_s,
        # our loop retries within the deadline; litellm's and the SDK's own retries would not
        "max_retries": 0,
        "num_retries": 0,
        "drop_params": True,
    }
    if config.api_base:
        request["api_base"] = config.api_base
    if api_key or config.api_key:
        request["api_key"] = api_key or config.api_key
    response_format = reply_format(
        reply_format_kind(config.reply_schema, litellm, model, config.api_base), described.schema, reply_name
    )
    if response_format is not None:
        request["response_format"] = response_format
    return request


def output_bound(config: JudgeConfig, name: str, default: int) -> int:
    """`max_output_tokens` from the config (one bound for all, or this scorer's), else `default`."""
    configured = config.max_output_tokens
    if isinstance(configured, int):
        return configured
    if configured is not None and name in configured:
        return configured[name]
    return default


def reply_format(kind: str, schema: Mapping[str, Any] | None, name: str) -> dict[str, Any] | None:
    """The `response_format` of this kind for this schema; a shape without a schema gets JSON
    mode, and `off` nothing."""
    if kind == "off":
        return None
    if schema is None or kind == "json_object":
        return {"type": "json_object"}
    schema = copy.deepcopy(dict(schema))  # a provider's adapter may edit it; the cached one stays
    if kind == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": _schema_name(name), "schema": schema, "strict": False},
    }


def reply_format_kind(setting: str, litellm: Any, model: str, api_base: str | None) -> str:
    """The configured form, or under `auto` the one this provider accepts."""
    if setting != "auto":
        return setting
    return _auto_kind(litellm, model, api_base is not None)


@functools.lru_cache(maxsize=256)
def _auto_kind(litellm: Any, model: str, self_hosted: bool) -> str:
    try:
        provider = str(litellm.get_llm_provider(model=model)[1])
    except Exception:
        provider = ""
    if provider in _SCHEMA_PROVIDERS or _supports(litellm.supports_response_schema, model):
        return "json_schema"
    if self_hosted and provider in _OPENAI_COMPATIBLE:
        return "json_object_schema"
    try:
        params = litellm.get_supported_openai_params(model=model) or []
    except Exception:
        params = []
    return "json_object" if "response_format" in params else "off"


def _supports(check: Any, model: str) -> bool:
    try:
        return bool(check(model=model))
    except Exception:
        return False


def shape_name(shape: Any) -> str:
    return str(getattr(shape, "__name__", None) or "reply")


def _schema_name(name: str) -> str:
    """OpenAI's rule for a schema's name: letters, digits, `_` and `-`, at most 64."""
    return _SCHEMA_NAME.sub("_", name)[:64] or "reply"


def shape_schema(shape: Any) -> ShapeSchema:
    """The shape's compact schema and default bound, worked out once per shape."""
    try:
        return _shape_schema(shape)
    except TypeError:  # an unhashable shape: worked out on every call
        return _shape_schema.__wrapped__(shape)


@functools.lru_cache(maxsize=128)
def _shape_schema(shape: Any) -> ShapeSchema:
    try:
        schema = compact_schema(TypeAdapter(shape).json_schema())
    except Exception as exc:
        throttled.warning(
            f"judge_schema:{shape_name(shape)}",
            "otel_scorers: reply shape %s has no JSON schema (%s); the judge is asked for JSON only",
            shape_name(shape),
            exc,
        )
        return ShapeSchema(None, LONG_REPLY_MAX_TOKENS)
    return ShapeSchema(schema, SHORT_REPLY_MAX_TOKENS if _fixed_fields(schema) else LONG_REPLY_MAX_TOKENS)


class _Recursive(Exception):
    """A `$ref` to a definition being inlined (or to none): the shape cannot be inlined."""


def compact_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as a model reads it, at fewer input tokens: `$ref`s inlined (every reply
    shape here uses each sub-shape once, and some grammar converters do not follow `$defs`),
    pydantic's generated titles and defaults dropped. A recursive shape keeps its `$defs`."""
    definitions = schema.get("$defs", {})
    try:
        inlined = _inline(schema, definitions, ())
    except _Recursive:
        return dict(_strip(schema))
    return dict(_strip(inlined))


def _inline(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        key = reference.removeprefix("#/$defs/")
        if key in seen or key not in definitions:
            raise _Recursive(key)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(definitions[key], definitions, (*seen, key)), **_inline(rest, definitions, seen)}
    return {key: _inline(value, definitions, seen) for key, value in node.items() if key != "$defs"}


def _strip(node: Any) -> Any:
    """Drops the keywords `title` and `default`; the names of properties stay, whatever they are."""
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    stripped: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "default"):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            stripped[key] = {name: _strip(sub) for name, sub in value.items()}
        else:
            stripped[key] = _strip(value)
    return stripped


def _fixed_fields(schema: Mapping[str, Any]) -> bool:
    """True for an object of scalar properties only: its reply's length does not grow with
    the judged text."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return False
    return all(_scalar(sub) for sub in properties.values())


def _scalar(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "anyOf" in schema:
        return all(_scalar(option) for option in schema["anyOf"])
    if "enum" in schema or "const" in schema:
        return True
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return all(k in _SCALARS for k in kinds)
