"""A model call whose request (its input messages) is read when first read.

Each model call of a run after the first is sent the conversation so far: its request is the
longest text of its span, and the one a trace holds no other copy of (a run span's request is
its first call's, its answer its last call's, both read once for the trace). Reading a run reads
what the model answered (the calls it asked for), and, of the later requests, only what they say
of those calls: a run whose tool spans recorded each call's result and state needs none of them
(`runs.sent_back.results_sent_back`, which looks at the text alone). So such a request is kept
as its text, and decoded, as any request is (`plain_messages.or_plain_text`), when its `input`
is first read.

A `DeferredRequest` is a `ModelCall`: the same fields, equal to a plain call of the same values.
Once its request is read it changes to a plain `ModelCall` (its field a slot again)."""

from __future__ import annotations

from typing import Any

from otel_scorers.conventions.base import Messages, ModelCall
from otel_scorers.conventions.formats.messages import decode_messages
from otel_scorers.conventions.formats.parsed_texts import ParsedTexts
from otel_scorers.conventions.formats.plain_messages import or_plain_text

#: `ModelCall.input`'s own slot, where a deferred call keeps its request's text (and the texts
#: its trace has read) until read.
_INPUT = ModelCall.__dict__["input"]
_GET_INPUT = _INPUT.__get__
_SET_INPUT = _INPUT.__set__
_set_class = object.__setattr__


def _read_input(call: ModelCall) -> Messages:
    held = _GET_INPUT(call, ModelCall)
    if type(held) is not tuple:  # read by another thread a moment ago
        return held  # type: ignore[no-any-return]
    text, parsed = held
    # As `genai_messages` reads a text in a trace's reading: once for the trace (`parsed`).
    found = parsed.get(text)
    if found is None:
        found = parsed[text] = decode_messages(text)
    messages = found if found.items else or_plain_text(text, "user")
    _SET_INPUT(call, messages)
    _set_class(call, "__class__", ModelCall)
    return messages


def _write_input(call: ModelCall, value: Messages) -> None:
    # `ModelCall.__init__` (`dataclasses.replace` given a request): the call is a plain one.
    _SET_INPUT(call, value)
    _set_class(call, "__class__", ModelCall)


class DeferredRequest(ModelCall):
    """A model call whose `input` is decoded from its span's text when first read."""

    __slots__ = ()

    input = property(_read_input, _write_input)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        _read_input(self)  # now a plain call
        return self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        _read_input(self)
        return repr(self)

    def __reduce__(self) -> tuple[type[ModelCall], tuple[Any, ...]]:
        # Copied and pickled as the plain call it is.
        return ModelCall, (
            self.span_id,
            self.start_ns,
            _read_input(self),
            self.output,
            self.model,
            self.input_tokens,
            self.output_tokens,
        )


def deferred_call(
    span_id: int,
    start_ns: int,
    request: str,
    parsed: ParsedTexts,
    output: Messages,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
) -> ModelCall:
    """A model call whose input messages are `request`'s, decoded when first read, once for the
    trace whose texts `parsed` remembers."""
    held: Any = (request, parsed)
    call = ModelCall(span_id, start_ns, held, output, model, input_tokens, output_tokens)
    _set_class(call, "__class__", DeferredRequest)
    return call


def unread_request(call: ModelCall) -> str | None:
    """The text of the call's request when it was not read yet; None once read (or for a call
    made with its messages)."""
    if type(call) is not DeferredRequest:
        return None
    held: Any = _GET_INPUT(call, ModelCall)
    return held[0] if type(held) is tuple else None  # type: ignore[no-any-return]
