"""Test harness for the sidecar: run one on its own loop thread, make agent traffic as OTLP."""

from __future__ import annotations

import asyncio
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import grpc
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.config import parse_config
from otel_scorers.demos.example_agent import ExampleAgent, ScriptedRun
from otel_scorers.sidecar import Sidecar

from .waiting import wait_until

T = TypeVar("T")

SCORERS = [
    {"type": "no_tool_errors"},
    {"type": "called_tool", "args": {"tool": "get_weather"}},
    {"type": "includes", "name": "says-sunny", "args": {"expected": "sunny"}},
]


def sidecar_document(
    export_endpoint: str, scorers: list[dict[str, Any]] | None = None, **sidecar: Any
) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "grpc": {"port": 0},
        "http": {"port": 0},
        "decision_wait_s": 0.2,
        "max_wait_s": 5.0,
        "shutdown_timeout_s": 5.0,
        "export": {
            "endpoint": export_endpoint,
            "protocol": "grpc",
            "metric_interval_s": 0.2,
            "batch_delay_s": 0.05,
        },
    }
    settings.update(sidecar)
    return {"scorers": scorers or SCORERS, "sidecar": settings}


class RunningSidecar:
    """A `Sidecar` on a private event loop in a thread, as the process would run it."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.config = parse_config(document)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sidecar-loop", daemon=True)
        self.sidecar: Sidecar | None = None

    def __enter__(self) -> RunningSidecar:
        self._thread.start()
        try:
            self.sidecar = self.call(lambda: Sidecar(self.config))
            self.run(self.sidecar.start())
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        if self.sidecar is not None:
            self.run(self.sidecar.stop(), timeout_s=120)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(60)
        self._loop.close()

    def run(self, coroutine: Any, timeout_s: float = 120) -> Any:
        """`coroutine` on the sidecar's loop, to its end; `timeout_s` is a guard against a hang (a
        start with its scoring process takes a second or two, many more on a busy machine)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout_s)

    def call(self, function: Callable[[], T]) -> T:
        """Run `function` on the sidecar's loop (which owns its buffers) and return its result."""
        future: Future[T] = Future()

        def invoke() -> None:
            try:
                future.set_result(function())
            except BaseException as exc:
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(invoke)
        return future.result(60)

    @property
    def service(self) -> Sidecar:
        assert self.sidecar is not None
        return self.sidecar

    @property
    def grpc_endpoint(self) -> str:
        assert self.service.grpc is not None
        return f"127.0.0.1:{self.service.grpc.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.service.http.port}"


def metrics_text(http_url: str) -> str:
    """What a sidecar's `/metrics` serves (its scoring processes' metrics merged in)."""
    with urllib.request.urlopen(f"{http_url}/metrics", timeout=10) as response:
        text: str = response.read().decode()
        return text


def sample(text: str, name: str, **labels: str) -> float:
    """The sum of the series of `name` that carry `labels` (among others); 0 without any."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if (line.startswith(name + "{") or line.startswith(name + " "))
        and all(label in line for label in wanted)
    )


_LISTENING = re.compile(r"OTLP/(gRPC|HTTP) receiver.* on ([\d.]+):(\d+)")


class ServeProcess:
    """`otel-scorers serve -c config` as a child process, its stderr kept line by line (with the
    time each line came); `max_open_files` lowers its file descriptor limit, `env` adds to its
    environment."""

    def __init__(
        self, config: Path, max_open_files: int | None = None, env: dict[str, str] | None = None
    ) -> None:
        def limit_files() -> None:
            if max_open_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "otel_scorers.cli", "serve", "-c", str(config)],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            preexec_fn=limit_files if max_open_files is not None else None,
        )
        self.lines: list[str] = []
        self.times: list[float] = []
        self.ports: dict[str, int] = {}
        self._seen = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.times.append(time.monotonic())
            self.lines.append(line)
            match = _LISTENING.search(line)
            if match:
                self.ports[match.group(1)] = int(match.group(3))
                if len(self.ports) == 2:
                    self._seen.set()

    # The waits below are guards against a hang, far from a start's few seconds even when the
    # machine's cores are busy (a process's first imports take several times longer then).
    def grpc_port(self, timeout_s: float = 60) -> int:
        assert self._seen.wait(timeout_s), "".join(self.lines)
        return self.ports["gRPC"]

    def http_port(self, timeout_s: float = 60) -> int:
        assert self._seen.wait(timeout_s), "".join(self.lines)
        return self.ports["HTTP"]

    def wait_for_line(self, text: str, timeout_s: float = 60) -> None:
        """Until a line of its stderr holds `text`."""
        wait_until(
            lambda: any(text in line for line in list(self.lines)),
            timeout_s,
            lambda: f"a line with {text!r} in: {''.join(self.lines)}",
        )

    def lines_between(self, start: float, end: float) -> list[str]:
        """The stderr lines that came between two `time.monotonic()` readings."""
        count = min(len(self.times), len(self.lines))
        return [self.lines[i] for i in range(count) if start <= self.times[i] <= end]

    def rss_bytes(self) -> int:
        """The process's resident memory, from /proc."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._reader.join(5)


def free_port() -> int:
    """A port free right now, for programs that cannot bind port 0 and report it (rotel)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Rotel:
    """The rotel collector (PyPI `rotel`), receiving OTLP and exporting it over OTLP/gRPC."""

    def __init__(self, workdir: Path, export_to: str | None, *extra: str) -> None:
        import rotel

        binary = Path(rotel.__file__).parent / "rotel-agent"
        self.grpc_port, self.http_port = free_port(), free_port()
        exporter = (
            ["--exporter", "otlp", "--otlp-exporter-endpoint", export_to]
            if export_to
            else ["--exporter", "blackhole"]
        )
        self.log = workdir / "rotel.log"
        self.process = subprocess.Popen(
            [
                str(binary),
                "start",
                "--otlp-grpc-endpoint",
                f"127.0.0.1:{self.grpc_port}",
                "--otlp-http-endpoint",
                f"127.0.0.1:{self.http_port}",
                "--pid-file",
                str(workdir / "rotel.pid"),
                "--log-file",
                str(self.log),
                *exporter,
                *extra,
            ],
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
        )
        wait_until(self._listening, 60, lambda: f"rotel to listen: {self.log.read_text()}")

    def _listening(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.grpc_port)) == 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def send_grpc(endpoint: str, body: bytes, token: str | None = None) -> bytes:
    """One raw OTLP/gRPC export; raises grpc.RpcError on a refusal."""
    with grpc.insecure_channel(endpoint) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        result: bytes = export(body, metadata=metadata, timeout=10)
        return result


def agent_spans(scripts: Sequence[ScriptedRun], service: str = "weather-service") -> list[ReadableSpan]:
    """The finished spans of the example agent running `scripts`, in the order they ended."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = ExampleAgent(tracer=provider.get_tracer("example-agent"))
    for script in scripts:
        agent.run(script)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def encode(spans: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
    request: ExportTraceServiceRequest = encode_spans(spans)
    return request


def is_run(span: ReadableSpan) -> bool:
    return span.name.startswith("invoke_agent")
