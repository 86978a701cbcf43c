"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and the benchmark.

litellm talks to it as to any OpenAI endpoint (`openai/<name>` with `api_base=server.url`). Each
request takes the next scripted step (a reply, an HTTP error, a stall); when the script is empty
the `responder` answers. Token usage is counted with cl100k, so usage and cost look like a real
provider's. Runs its own event loop on a daemon thread, so litellm can be called from any loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import tiktoken
from aiohttp import web

from otel_scorers.scorers.judge import Judge, JudgeConfig

# litellm ships the cl100k file; point tiktoken at it so nothing is downloaded.
if "TIKTOKEN_CACHE_DIR" not in os.environ:
    import importlib.util

    _spec = importlib.util.find_spec("litellm")
    if _spec is not None and _spec.origin is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(
            os.path.dirname(_spec.origin), "litellm_core_utils", "tokenizers"
        )
ENCODING = tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    return len(ENCODING.encode(text, disallowed_special=()))


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """OpenAI's chat accounting for cl100k models: content plus 4 per message plus 3."""
    return sum(4 + count_tokens(str(message.get("content") or "")) for message in messages) + 3


@dataclass(frozen=True)
class Reply:
    """A 200 answer with this content."""

    content: str


@dataclass(frozen=True)
class Status:
    """An HTTP error, e.g. 429 with Retry-After, or 500."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted error"


@dataclass(frozen=True)
class Stall:
    """Hold the request this long before answering (past the client's timeout)."""

    seconds: float
    then: Reply | None = None


@dataclass(frozen=True)
class Redirect:
    """A redirect (307 unless told otherwise) to `location`."""

    location: str
    status: int = 307


@dataclass(frozen=True)
class Flood:
    """A 200 whose body is a completion `size` bytes long (its content padded with spaces):
    streamed in chunks with no declared length, or with `Content-Length` when `declared`."""

    size: int
    declared: bool = False


@dataclass(frozen=True)
class Body:
    """A 200 whose body is `raw`, as it is (built before the test measures anything)."""

    raw: bytes


def completion_body(content: str) -> bytes:
    """A chat completion's JSON carrying `content`, as a provider sends it."""
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    usage = {"prompt_tokens": 1, "completion_tokens": len(content) // 4}
    return json.dumps({"object": "chat.completion", "choices": [choice], "usage": usage}).encode()


Step = Reply | Status | Stall | Redirect | Flood | Body
Responder = Callable[[dict[str, Any]], str]


@dataclass
class Request:
    body: dict[str, Any]
    at: float
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def text(self) -> str:
        return "\n".join(str(message.get("content") or "") for message in self.messages)


#: An answer_relevancy reply with one statement, judged relevant: the score is 1.
ALL_RELEVANT = json.dumps(
    {
        "statements": [{"statement": "It answers.", "verdict": "yes", "reason": "on topic"}],
        "explanation": "ok",
    }
)


def _default_responder(_body: dict[str, Any]) -> str:
    return json.dumps({"statements": [], "explanation": "no script"})


class JudgeServer:
    def __init__(
        self, responder: Responder = _default_responder, latency_s: float = 0.0, jitter: float = 0.0
    ) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.jitter = jitter  # latency varies uniformly within +-jitter of itself, as a real model's does
        self.script: deque[Step] = deque()
        self.requests: list[Request] = []
        self.url = ""
        self.in_flight = 0
        self.max_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def then(self, *steps: Step) -> JudgeServer:
        self.script.extend(steps)
        return self

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(Request(body, time.monotonic(), dict(request.headers)))
            step = self.script.popleft() if self.script else None
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request, body, step)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer(
        self, request: web.Request, body: dict[str, Any], step: Step | None
    ) -> web.StreamResponse:
        if self.latency_s:
            await asyncio.sleep(self.latency_s * random.uniform(1 - self.jitter, 1 + self.jitter))
        if isinstance(step, Stall):
            await asyncio.sleep(step.seconds)
            step = step.then
        if isinstance(step, Redirect):
            return web.Response(status=step.status, headers={"Location": step.location})
        if isinstance(step, Flood):
            return await self._flood(request, step)
        if isinstance(step, Body):
            return await self._body(request, step.raw)
        if isinstance(step, Status):
            error = {"error": {"message": step.message, "type": "scripted", "code": step.status}}
            return web.json_response(error, status=step.status, headers=step.headers)
        content = step.content if isinstance(step, Reply) else self.responder(body)
        messages = body.get("messages", [])
        # a reply of megabytes (a hostile judge's) is counted at 4 characters a token: counting
        # it exactly would take the server seconds, which are not what such a test measures
        usage_out = count_tokens(content) if len(content) < 1_000_000 else len(content) // 4
        usage_in = prompt_tokens(messages)
        if body.get("stream"):
            return await self._stream(request, body, content, usage_in, usage_out)
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "judge"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": usage_in,
                    "completion_tokens": usage_out,
                    "total_tokens": usage_in + usage_out,
                },
            }
        )

    async def _stream(
        self, request: web.Request, body: dict[str, Any], content: str, usage_in: int, usage_out: int
    ) -> web.StreamResponse:
        """`stream: true`: the reply as server-sent events, as OpenAI sends them (one content
        chunk, the finish chunk, the usage chunk, `[DONE]`). Some clients (Mastra's) stream."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "judge"),
        }
        chunks = [
            {
                **base,
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}
                ],
            },
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": usage_in,
                    "completion_tokens": usage_out,
                    "total_tokens": usage_in + usage_out,
                },
            },
        ]
        for chunk in chunks:
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _body(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        """`raw` in chunks, each written once the client has taken the one before (so that the
        server holds no copy of it: a test may measure the memory that reading it takes)."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        view = memoryview(raw)
        try:
            for start in range(0, len(raw), 65536):
                await response.write(view[start : start + 65536])
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading
        return response

    async def _flood(self, request: web.Request, step: Flood) -> web.StreamResponse:
        head = b'{"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "'
        tail = b'"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
        padding = step.size - len(head) - len(tail)
        if step.declared:
            return web.Response(body=head + b" " * padding + tail, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(head)
        chunk = b" " * 65536
        try:
            for _ in range(padding // len(chunk)):
                await response.write(chunk)
            await response.write(b" " * (padding % len(chunk)) + tail)
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading: what is tested
        return response

    def start(self) -> JudgeServer:
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/chat/completions", self._handle)
            app.router.add_post("/v1/chat/completions", self._handle)
            runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self._runner = runner
            port = runner.addresses[0][1]
            self.url = f"http://127.0.0.1:{port}/v1"
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=main, name="judge-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("judge server did not start")
        return self

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is not None and runner is not None and self._thread is not None:
            # cleanup cancels stalled handlers, so nothing is left pending when the loop stops
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(5)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(5)


@contextmanager
def judge_server(responder: Responder = _default_responder, latency_s: float = 0.0) -> Iterator[JudgeServer]:
    server = JudgeServer(responder, latency_s).start()
    try:
        yield server
    finally:
        server.stop()


#: The model the judge tests name (litellm prices it, and it takes response schemas).
MODEL = "openai/gpt-4o-mini"
#: The judge's deadline in tests: far beyond what a call on 127.0.0.1 takes on a loaded machine,
#: so that no test fails for the machine's load; a test of deadlines sets its own.
TIMEOUT_S = 30.0


def judge_config(server: JudgeServer | str, **options: Any) -> JudgeConfig:
    """A judge config at the test server (or URL): `MODEL`, a test key, `TIMEOUT_S`; `options`
    override any of it."""
    url = server if isinstance(server, str) else server.url
    settings: dict[str, Any] = {
        "model": MODEL,
        "api_base": url,
        "api_key": "test-key",
        "timeout_s": TIMEOUT_S,
    }
    return JudgeConfig(**{**settings, **options})


def make_judge(server: JudgeServer | str, **options: Any) -> Judge:
    """A `Judge` of `judge_config(server, **options)`."""
    return Judge(judge_config(server, **options))


def refused_url() -> str:
    """An address on 127.0.0.1 where nothing listens (connection refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
