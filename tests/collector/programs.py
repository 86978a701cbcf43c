"""The real OpenTelemetry Collector and Jaeger, built from their Go modules by `make collector
jaeger` into .tools/bin, run on loopback ports for the tests.

Without the binaries the tests that need them are skipped (`make test-collector` builds them),
unless OTEL_SCORERS_REQUIRE_COLLECTOR=1 (as in CI), which makes a missing binary a failure.
OTEL_SCORERS_OTELCOL and OTEL_SCORERS_JAEGER name binaries elsewhere.

The shipped Collector configs (collector-config/*.yaml) run as they are written, with only their
addresses moved to free loopback ports (`on_loopback`): the receivers, pipelines, processors and
exporters are the ones users deploy.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "collector-config"
TOOLS = ROOT / ".tools" / "bin"


def require_binary(variable: str, name: str) -> Path:
    """The binary `name` (or the one `variable` names); a skip when absent, or a failure where
    OTEL_SCORERS_REQUIRE_COLLECTOR=1 requires it."""
    path = Path(os.environ.get(variable) or TOOLS / name)
    if not path.is_file():
        message = f"{path} is missing: `make collector jaeger` builds it (Go and the Go module proxy needed)"
        if os.environ.get("OTEL_SCORERS_REQUIRE_COLLECTOR") == "1":
            pytest.fail(f"{message}; OTEL_SCORERS_REQUIRE_COLLECTOR=1 requires it")
        pytest.skip(message)
    return path


def otelcol() -> Path:
    return require_binary("OTEL_SCORERS_OTELCOL", "otelcol-otel-scorers")


def jaeger_binary() -> Path:
    return require_binary("OTEL_SCORERS_JAEGER", "jaeger")


#: Ports for programs that must be told theirs before they start, taken below Linux's ephemeral
#: range (32768-60999): a port picked there can be taken, before the program binds it, by any
#: process's outgoing connection or port-0 listener.
_FIXED_PORTS = range(20_000, 32_000)
#: Ports already handed out in this process: free when probed, they may not be bound yet (one
#: program's receivers are configured together, before it starts), so none is handed out twice.
_handed_out: set[int] = set()


def loopback() -> str:
    """A loopback host:port free now and not handed out before, for a program configured with it."""
    for _ in range(100):
        port = random.choice(_FIXED_PORTS)
        if port in _handed_out:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return f"127.0.0.1:{port}"
    raise AssertionError("no free loopback port in 20000-31999")


class Program:
    """A child process whose output goes to a file, stopped with SIGTERM (then SIGKILL)."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_listening(self, address: str, timeout_s: float = 60) -> None:
        host, port = address.rsplit(":", 1)

        def listening() -> bool:
            assert self.process.poll() is None, f"exited: {self.output()}"
            with socket.socket() as probe:
                return probe.connect_ex((host, int(port))) == 0

        wait_until(listening, timeout_s, lambda: f"{address} to listen: {self.output()}")

    def kill(self) -> None:
        """SIGKILL: a replica that dies, with whatever it holds."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


class Jaeger(Program):
    """Jaeger (v2, all in one: OTLP in, in-memory storage, the query API) on loopback ports."""

    def __init__(self, workdir: Path) -> None:
        self.otlp_grpc, self.otlp_http, self.query = loopback(), loopback(), loopback()
        config = {
            "service": {
                "extensions": ["jaeger_storage", "jaeger_query"],
                "pipelines": {
                    "traces": {
                        "receivers": ["otlp"],
                        "processors": ["batch"],
                        "exporters": ["jaeger_storage_exporter"],
                    }
                },
                "telemetry": {"metrics": {"level": "none"}},
            },
            "extensions": {
                "jaeger_query": {
                    "storage": {"traces": "memstore"},
                    "http": {"endpoint": self.query},
                    "grpc": {"endpoint": loopback()},
                },
                "jaeger_storage": {"backends": {"memstore": {"memory": {"max_traces": 100_000}}}},
            },
            "receivers": {
                "otlp": {
                    "protocols": {"grpc": {"endpoint": self.otlp_grpc}, "http": {"endpoint": self.otlp_http}}
                }
            },
            "processors": {"batch": {"timeout": "100ms"}},
            "exporters": {"jaeger_storage_exporter": {"trace_storage": "memstore"}},
        }
        path = workdir / "jaeger.yaml"
        path.write_text(yaml.safe_dump(config))
        super().__init__([str(jaeger_binary()), "--config", str(path)], workdir / "jaeger.log")
        self.wait_listening(self.otlp_grpc)
        self.wait_listening(self.query)

    def api(self, path: str, **query: str) -> Any:
        url = f"http://{self.query}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read())

    def traces(self, service: str, tags: dict[str, str], limit: int = 1000) -> list[dict[str, Any]]:
        """Jaeger's HTTP API search, as its UI makes it: `/api/traces?service=...&tags={...}`."""
        found: list[dict[str, Any]] = self.api(
            "/api/traces", service=service, tags=json.dumps(tags), limit=str(limit), lookback="1h"
        )["data"]
        return found

    def services(self) -> list[str]:
        names: list[str] = self.api("/api/services")["data"] or []
        return names


def span_tags(span: dict[str, Any]) -> dict[str, Any]:
    return {tag["key"]: tag["value"] for tag in span.get("tags", [])}


def on_loopback(config: dict[str, Any], addresses: dict[str, str]) -> dict[str, Any]:
    """A shipped Collector config with its addresses moved: `addresses` maps a component's
    name (`otlp`, `otlp/scores`, `otlp/jaeger`, `health_check`, ...) to its new host:port; every
    other listening address gets a free loopback port, and the Collector's own metrics are off
    (they would take :8888)."""
    moved = json.loads(json.dumps(config))
    for name, receiver in moved.get("receivers", {}).items():
        for protocol, settings in receiver.get("protocols", {}).items():
            settings["endpoint"] = addresses.get(f"{name}.{protocol}") or loopback()
    for name, exporter in moved.get("exporters", {}).items():
        if "endpoint" in exporter:
            exporter["endpoint"] = addresses.get(name) or loopback()
    for name, extension in moved.get("extensions", {}).items():
        if "endpoint" in extension:
            extension["endpoint"] = addresses.get(name) or loopback()
    moved["service"].setdefault("telemetry", {})["metrics"] = {"level": "none"}
    return moved


def shipped(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CONFIGS / name).read_text())
    return loaded


class Collector(Program):
    """The Collector built from collector-build/manifest.yaml, running `config`."""

    def __init__(self, config: dict[str, Any], workdir: Path, name: str = "otelcol") -> None:
        path = workdir / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        super().__init__([str(otelcol()), "--config", str(path)], workdir / f"{name}.log")
        health = config["extensions"]["health_check"]["endpoint"]
        self.wait_listening(health)

        def healthy() -> bool:
            assert self.process.poll() is None, f"exited: {self.output()}"
            try:
                with urllib.request.urlopen(f"http://{health}/", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_until(healthy, 60, lambda: f"the Collector to be healthy: {self.output()}")
