"""pydantic's validation errors in the file's terms: each a `ConfigError` at its key's path, no
class names, a suggestion for a misspelled key."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from otel_scorers.errors import ConfigError


def dotted_path(loc: Sequence[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (`X`, `X | None`, `list[X]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        model = _model_in(argument)
        if model is not None:
            return model
    return None


def _keys_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys the model at `loc` (a path from `model`) accepts."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part) if current is not None else None
        current = _model_in(field.annotation) if field is not None else None
    return list(current.model_fields) if current is not None else []


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    """pydantic's message in the file's terms: no class names, a suggestion for a misspelled key."""
    kind, loc = error["type"], tuple(error["loc"])
    if kind == "extra_forbidden":
        known = _keys_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        if close:
            return f"unknown key; did you mean {close[0]!r}?"
        return f"unknown key; expected one of: {', '.join(known)}" if known else "unknown key"
    if kind in ("model_type", "model_attributes_type", "dataclass_type", "dict_type"):
        return f"should be a mapping of settings, got {_shown(error.get('input'))}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"should be a whole number, got {_shown(error.get('input'))}"
    if kind == "int_parsing_size":
        return f"too large a number: {_shown(error.get('input'))}"
    if kind == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    return str(error["msg"])


def validation_errors(
    exc: ValidationError, model: type[BaseModel], prefix: Sequence[Any] = ()
) -> list[ConfigError]:
    return [
        ConfigError(dotted_path((*prefix, *error["loc"])), _message(error, model))
        for error in exc.errors(include_url=False)
    ]
