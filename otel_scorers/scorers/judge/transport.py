"""The judge's HTTP connections: a reply is read within a byte bound, and a redirect to another
host or port is not followed.

The judge is an untrusted server. Its reply is read into memory and parsed (by the provider's
client, then by us) on the scoring loop, where a deadline cannot interrupt work that does not
wait: a reply of hundreds of megabytes took gigabytes and ran seconds past the deadline. So a
reply is cut off once it exceeds `reply_byte_limit(max_tokens)`, before anything parses it: a
declared `Content-Length` over the bound is refused at once, a streamed body once it crosses
it. And a judge that answers with a redirect to another host or port is refused instead of
followed, so that no other server's verdict becomes the score.

litellm reads replies through an aiohttp session (its default transport) and takes the session
to use per call (`shared_session`): the judge gives it one of its own per event loop, whose
responses (`BoundedResponse`) apply both rules. The bound of the call being made travels in a
context variable, so that each call has its own.

The sessions are the process's, one per event loop, like litellm's client cache, which keeps
the session in the client it caches (and would replace a closed session with a default one of
its own, without the bounds): a session is never closed while its loop runs. So connections
are not kept open between calls (`force_close`), and a session whose loop has ended is let go
without leaving sockets behind (against seconds of judging, a new connection costs a few
milliseconds, a TLS handshake tens).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import weakref
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from yarl import URL

from otel_scorers.fork_safety import renew_in_child
from otel_scorers.scorers.judge.errors import ReplyRefused

#: Room for what a completion carries besides the reply's text (ids, usage, the provider's own
#: fields) and for an error's body.
ENVELOPE_BYTES = 64 * 1024
#: Bytes one output token may take in the body: a token is a few characters, and JSON escapes a
#: character in at most six bytes (`\\uXXXX`); generous, so no honest reply comes near it.
BYTES_PER_TOKEN = 32
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

#: The byte bound of the reply being read in this context (None: not a judge call).
_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "otel_scorers_judge_reply_limit", default=None
)


def reply_byte_limit(max_tokens: int) -> int:
    """The most bytes a reply of at most `max_tokens` output tokens may take."""
    return ENVELOPE_BYTES + BYTES_PER_TOKEN * max_tokens


class _Counted:
    """The body's stream, counted as it is read; past `limit` bytes, `ReplyRefused`."""

    def __init__(self, stream: Any, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._read = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _count(self, data: bytes) -> bytes:
        self._read += len(data)
        if self._read > self._limit:
            raise _too_long(f"more than {self._limit:,} bytes")
        return data

    async def read(self, n: int = -1) -> bytes:
        return self._count(await self._stream.read(n))

    async def readany(self) -> bytes:
        return self._count(await self._stream.readany())

    async def readexactly(self, n: int) -> bytes:
        return self._count(await self._stream.readexactly(n))

    def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        return self._chunks(self._stream.iter_chunked(n))

    def iter_any(self) -> AsyncIterator[bytes]:
        return self._chunks(self._stream.iter_any())

    async def _chunks(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for chunk in chunks:
            yield self._count(chunk)


def _too_long(what: str) -> ReplyRefused:
    return ReplyRefused(
        "judge_invalid_response",
        f"the judge's reply was {what}, past the bound for its output tokens (max_output_tokens); "
        "not read further",
    )


class BoundedResponse(aiohttp.ClientResponse):
    """An aiohttp response that applies the judge's rules as soon as its head is read."""

    async def start(self, connection: Any) -> BoundedResponse:
        await super().start(connection)
        limit = _limit.get()
        if limit is None:
            return self
        location = self.headers.get("Location")
        if self.status in _REDIRECTS and location is not None:
            target = self.url.join(URL(location))
            if target.origin() != self.url.origin():
                raise ReplyRefused(
                    "judge_error",
                    f"the judge at {self.url.origin()} answered with a redirect to {target.origin()}; a "
                    "redirect to another host or port is not followed",
                )
        if self.content_length is not None and self.content_length > limit:
            raise _too_long(f"{self.content_length:,} bytes long (more than {limit:,})")
        self.content = _Counted(self.content, limit)  # type: ignore[assignment]
        return self


class JudgeTransport:
    """One aiohttp session per event loop for the judges' calls, each call with its reply's bound."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        # the sessions left at exit are let go without a warning
        weakref.finalize(self, _let_go, self._sessions)
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """A forked child must not use its parent's sessions (nor a lock held at fork time)."""
        self._lock = threading.Lock()
        _let_go(self._sessions)

    def session(self) -> aiohttp.ClientSession:
        """This loop's session; those of loops that have ended are let go."""
        loop = asyncio.get_running_loop()
        with self._lock:
            session = self._sessions.get(loop)
            if session is None or session.closed:
                for ended in [other for other in self._sessions if other.is_closed()]:
                    self._sessions.pop(ended).detach()
                session = self._sessions[loop] = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(force_close=True), response_class=BoundedResponse
                )
            return session

    @staticmethod
    def bounded(max_tokens: int) -> contextvars.Token[int | None]:
        """The calls made from here on in this context read at most the bound for `max_tokens`
        (undone by `unbounded`)."""
        return _limit.set(reply_byte_limit(max_tokens))

    @staticmethod
    def unbounded(token: contextvars.Token[int | None]) -> None:
        _limit.reset(token)


def _let_go(sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession]) -> None:
    """Detach every session: with no connection kept open, nothing is left to close."""
    for session in sessions.values():
        session.detach()
    sessions.clear()


#: The process's judge transport (made with this module, which is imported with litellm).
judge_transport = JudgeTransport()
