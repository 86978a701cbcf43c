"""Each message text parsed once while a trace's runs are built and read."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import TypeVar

from otel_scorers.conventions.base import Messages

#: The messages read from each JSON text while a trace's runs are built (`parsed_once`): a run
#: span's messages are usually its first model call's request and its last one's answer, the
#: same text, parsed once. Per context, so that concurrent builds do not share one.
_parsed: ContextVar[dict[str, Messages] | None] = ContextVar("parsed_messages", default=None)


_T = TypeVar("_T")
_R = TypeVar("_R")
#: What `parsed_once` remembers: each message text met, and the messages it held.
ParsedTexts = dict[str, Messages]


class _ParsedOnce:
    """`parsed_once`'s block: a class, not a generator, as it is entered for every trace built
    (a `contextmanager` costs a generator and its frames on each, about 1 % of building a run)."""

    __slots__ = ("_parsed", "_token")

    def __init__(self, parsed: ParsedTexts | None) -> None:
        self._parsed = parsed if parsed is not None else {}

    def __enter__(self) -> ParsedTexts:
        self._token = _parsed.set(self._parsed)
        return self._parsed

    def __exit__(self, *exc: object) -> None:
        _parsed.reset(self._token)


def parsed_once(parsed: ParsedTexts | None = None) -> AbstractContextManager[ParsedTexts]:
    """Within it, a message text met again (in the same trace) is not parsed again: what it held
    is remembered in `parsed` (a new dict when none is given, which the block gives back), so
    that a block entered again with it, when a run built in the first is read, parses none of
    them again (the strings are the trace's own, held by its spans)."""
    return _ParsedOnce(parsed)


def parsing_once(parsed: ParsedTexts | None, read: Callable[[_T], _R], what: _T) -> _R:
    """`read(what)` within a `parsed_once(parsed)` block: one call, for a run read when first
    read (the block's object and its two calls cost a fifth of what reading a run's fields adds
    to finding it)."""
    token = _parsed.set(parsed if parsed is not None else {})
    try:
        return read(what)
    finally:
        _parsed.reset(token)


#: The message texts the `parsed_once` block around the call remembers; None outside one. The
#: context variable's own method, not a function calling it: every message text read asks it.
parsed_so_far: Callable[[], ParsedTexts | None] = _parsed.get
