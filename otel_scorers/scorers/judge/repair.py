"""Reading the one JSON object of the expected shape out of a judge's reply.

The reply is untrusted: a model may wrap its object in prose or a code fence, quote JSON it was
shown (which may have been written by whoever wrote the judged text), write `NaN`, or nest
without end. So:

- when the whole reply, stripped, is one JSON object, that is the reply, whatever it contains;
- otherwise the reply's top-level JSON objects are read left to right, fenced or in prose (an
  object inside one already found is part of it, not another). Exactly one (or copies of one)
  is the reply; several different ones are ambiguous, and ambiguity is an error: the judge's
  own verdict and a quoted one cannot be told apart;
- a non-finite number (`NaN`, `Infinity`, `-Infinity`, or one that overflows, `1e400`), nesting
  deeper than `MAX_DEPTH`, a reply longer than `MAX_REPLY_CHARS`, or more than `MAX_CANDIDATES`
  brace pairs to try are `JudgeParseError`, never a value and never another exception. The
  scan is one pass over the text, so a hostile reply costs at most its length.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from otel_scorers.throttled_log import throttled

#: Longer than any judge's reply (its output tokens are bounded); beyond it, nothing is read.
MAX_REPLY_CHARS = 200_000
#: Judge replies nest four or five levels; a batch reply one more.
MAX_DEPTH = 64
#: Brace pairs tried as JSON objects in a reply that is not one object as a whole.
MAX_CANDIDATES = 64

# Inside braces, what JSON would see: strings (braces and words in them are text), braces, and
# the numbers JSON has no finite value for. Outside braces only `{` is looked for, so quotes in
# prose do not pair up with anything.
_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|[{}]"
    r"|(?<![\w.])(?:NaN|Infinity)(?!\w)"
    r"|(?<![\w.])-?\d+(?:\.\d*)?[eE][+-]?\d{3,}"  # an exponent of three digits may overflow
    r"|(?<![\w.])-?\d{309,}"  # so may an integer of 309 digits or more
)


class JudgeParseError(ValueError):
    """The reply held no single JSON object of the expected shape; the message says what was
    wrong (it is quoted back to the judge in the repair round)."""


def json_objects(text: str) -> list[dict[str, Any]]:
    """The reply's candidate JSON objects, left to right: the whole reply when it is one object,
    else each top-level `{...}` that decodes (fenced or in prose; a brace pair that is not JSON
    is looked into). `JudgeParseError` for a reply too long, too deep, holding a non-finite
    number or too many brace pairs."""
    if len(text) > MAX_REPLY_CHARS:
        raise JudgeParseError(
            f"the reply is {len(text)} characters long, more than the {MAX_REPLY_CHARS} read"
        )
    whole = _whole(text)
    if whole is not None:
        return [whole]
    return _Scan(text).objects()


@functools.lru_cache(maxsize=64)
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)


def parse_reply(text: str, shape: Any) -> Any:
    """The reply's one JSON object, validated as `shape` (a pydantic model, TypedDict, dataclass
    or `dict[str, Any]`). `JudgeParseError` says why there is none: no object, several different
    ones, a non-finite number, too deep or too long, or not of the shape."""
    candidates: list[dict[str, Any]] = []
    for value in json_objects(text):
        if value not in candidates:
            candidates.append(value)
    if not candidates:
        raise JudgeParseError("the reply contains no JSON object")
    if len(candidates) > 1:
        raise JudgeParseError(
            f"the reply was ambiguous: it holds {len(candidates)} different JSON objects, "
            "and only one may be the reply"
        )
    try:
        parsed = _adapter(shape).validate_python(candidates[0])
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'reply'}: {error['msg']}"
            for error in exc.errors()[:3]
        )
        raise JudgeParseError(f"the JSON object does not have the expected shape ({problems})") from None
    _warn_unknown_keys(candidates[0], shape)
    return parsed


def _warn_unknown_keys(reply: dict[str, Any], shape: Any) -> None:
    """A pydantic reply shape ignores keys it does not have, so a judge that answers `reason`
    where the shape says `explanation` leaves that field at its default: said in a warning (at
    most once a minute per shape), naming both."""
    fields = getattr(shape, "model_fields", None)
    if not isinstance(fields, dict):
        return
    known = set(fields) | {field.alias for field in fields.values() if getattr(field, "alias", None)}
    unknown = sorted(key for key in reply if key not in known)
    if unknown:
        name = getattr(shape, "__name__", "reply")
        throttled.warning(
            f"judge_unknown_keys:{name}",
            "otel_scorers: the judge's reply has keys %s that its shape %s does not (it has: %s); "
            "they are ignored: ask for the shape's keys in the prompt",
            ", ".join(unknown),
            name,
            ", ".join(sorted(fields)),
        )


def conforms(value: Any, shape: Any) -> Any | None:
    """`value` validated as `shape`, or None when it is not of that shape."""
    if value is None:
        return None
    try:
        return _adapter(shape).validate_python(value)
    except ValidationError:
        return None


def _whole(text: str) -> dict[str, Any] | None:
    """The reply as one JSON object, when it is nothing else."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None  # the scan says why (non-finite, too deep), or finds the objects in it
    return _checked(value) if isinstance(value, dict) else None


class _Scan:
    """One pass over a reply that is not one object as a whole. A brace pair closing at the top
    level is tried at once; the pairs inside it are kept only while it may not be JSON (or while
    braces around them are still open), so a long valid object costs no memory per pair."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[dict[str, Any]] = []
        self.tried = 0

    def objects(self) -> list[dict[str, Any]]:
        text = self.text
        inner: list[tuple[int, int]] = []  # closed pairs inside braces not yet tried
        open_at: list[int] = []
        position = 0
        while True:
            if not open_at:
                start = text.find("{", position)
                if start == -1:
                    break
                open_at.append(start)
                position = start + 1
                continue
            token = _TOKEN.search(text, position)
            if token is None:
                break
            position = token.end()
            found = token.group()
            if found == "{":
                open_at.append(token.start())
                if len(open_at) > MAX_DEPTH:
                    raise JudgeParseError(f"the reply nests deeper than {MAX_DEPTH} levels")
            elif found == "}":
                start = open_at.pop()
                if open_at:
                    inner.append((start, position))
                elif not self.tried_as_object(start, position):
                    self.try_pairs(inner)  # not JSON as a whole: the objects inside it may be
                    inner.clear()
                else:
                    inner.clear()
            elif not found.startswith('"') and not math.isfinite(float(found)):
                raise JudgeParseError(_non_finite(found))
        self.try_pairs(inner)  # braces left open: the pairs closed inside them are candidates
        return self.found

    def tried_as_object(self, start: int, end: int) -> bool:
        self.tried += 1
        if self.tried > MAX_CANDIDATES:
            raise JudgeParseError(f"the reply holds more than {MAX_CANDIDATES} brace pairs to read as JSON")
        value = _decode(self.text[start:end])
        if value is not None:
            self.found.append(value)
        return value is not None

    def try_pairs(self, pairs: list[tuple[int, int]]) -> None:
        """Each pair by start, skipping those inside one found to be an object."""
        inside_found = -1
        for start, end in sorted(pairs):
            if start >= inside_found and self.tried_as_object(start, end):
                inside_found = end


def _decode(fragment: str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(fragment)
    except orjson.JSONDecodeError:
        return None  # a brace pair in prose that is not JSON
    return _checked(value) if isinstance(value, dict) else None


def _checked(value: dict[str, Any]) -> dict[str, Any]:
    """The object, once every number in it is finite and it nests at most `MAX_DEPTH` deep
    (iteratively: a deep object must not exhaust the stack here either)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise JudgeParseError(_non_finite(repr(item)))
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise JudgeParseError(f"the reply nests deeper than {MAX_DEPTH} levels")
            items = item.values() if isinstance(item, dict) else item
            pending.extend((inner, depth + 1) for inner in items)
    return value


def _non_finite(token: str) -> str:
    shown = token if len(token) <= 24 else f"{token[:20]}..."
    return f"the reply holds a number that is not finite ({shown}); every number must be finite"
