"""Fuzzing both receivers of a real `otel-scorers serve` process with over 10,000 mutated
protobuf and JSON payloads: it never dies, every answer is a 2xx or a 4xx with a message, its
memory stays flat, and a valid trace sent afterwards is still scored."""

from __future__ import annotations

import http.client
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest
import yaml
from google.protobuf.json_format import MessageToDict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import SCORERS, ServeProcess, agent_spans, encode, send_grpc

EXAMPLES = 700  # x 15 payloads each: 5 protobuf sent over gRPC and over HTTP, 4 + 1 JSON over HTTP
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

_SEED_REQUESTS = [encode(agent_spans([run])) for run in DEMO_RUNS[:3]]
SEEDS_PROTOBUF = [request.SerializeToString() for request in _SEED_REQUESTS]
SEEDS_JSON = [orjson.dumps(MessageToDict(request)) for request in _SEED_REQUESTS]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four byte-level mutations: bit flips, truncation, random insertions, duplicated and
    deleted slices (what a broken proxy or a truncated write does to a payload)."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        operation = rng.choice(("flip", "truncate", "insert", "duplicate", "delete"))
        position = rng.randint(0, max(0, len(buffer) - 1))
        if operation == "flip" and buffer:
            buffer[position] ^= 1 << rng.randint(0, 7)
        elif operation == "truncate":
            del buffer[position:]
        elif operation == "insert":
            buffer[position:position] = rng.randbytes(rng.randint(1, 8))
        elif operation == "duplicate":
            buffer[position:position] = buffer[position : position + rng.randint(1, 64)]
        elif buffer:
            del buffer[position : position + rng.randint(1, 16)]
    return bytes(buffer)


@st.composite
def mutated_json(draw: st.DrawFn) -> bytes:
    """A valid OTLP/JSON document with one value somewhere replaced by arbitrary JSON."""
    document = orjson.loads(draw(st.sampled_from(SEEDS_JSON)))
    path: list[Any] = []
    node: Any = document
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = (
            draw(st.sampled_from(sorted(node)))
            if isinstance(node, dict)
            else draw(st.integers(0, len(node) - 1))
        )
        path.append(key)
        node = node[key]
    value = draw(json_values)
    if not path:
        return orjson.dumps(value)
    parent: Any = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return orjson.dumps(document)


@pytest.fixture(scope="module")
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory, capture: OtlpCapture) -> Iterator[ServeProcess]:
    config: Path = tmp_path_factory.mktemp("fuzz") / "sidecar.yaml"
    settings_ = {
        "grpc": {"port": 0},
        "http": {"port": 0},
        "decision_wait_s": 0.1,
        "max_wait_s": 1.0,
        "export": {
            "endpoint": capture.endpoint,
            "protocol": "grpc",
            "batch_delay_s": 0.1,
            "metric_interval_s": 60,
        },
    }
    config.write_text(yaml.safe_dump({"scorers": SCORERS, "sidecar": settings_}))
    process = ServeProcess(config)
    try:
        process.grpc_port()
        yield process
    finally:
        process.stop()


class Client:
    """One keep-alive HTTP connection and one gRPC channel, reused for every payload."""

    def __init__(self, serve: ServeProcess) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", serve.http_port(), timeout=10)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port()}")
        self.export = self.channel.unary_unary(EXPORT)
        self.sent = 0
        self.answers: dict[str, int] = {}

    def post(self, body: bytes, content_type: str) -> None:
        self.http.request("POST", "/v1/traces", body=body, headers={"Content-Type": content_type})
        response = self.http.getresponse()
        data = response.read()
        self.sent += 1
        key = f"http {response.status}"
        self.answers[key] = self.answers.get(key, 0) + 1
        assert response.status == 200 or 400 <= response.status < 500, (response.status, data[:200])
        if response.status != 200:
            assert data, "a refusal without a message"

    def grpc(self, body: bytes) -> Callable[[], None]:
        """Send without waiting (calls share the channel's connection); the result checks the answer."""
        self.sent += 1
        call = self.export.future(body, timeout=10)

        def check() -> None:
            try:
                call.result()
                code = grpc.StatusCode.OK
            except grpc.RpcError as error:
                code = error.code()
                assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED), (
                    code,
                    error.details(),
                )
                assert error.details()
            key = f"grpc {code.name}"
            self.answers[key] = self.answers.get(key, 0) + 1

        return check


def test_fuzzed_payloads_never_break_the_receivers(serve: ServeProcess, capture: OtlpCapture) -> None:
    client = Client(serve)
    rss: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    # Byte mutations come from a generator hypothesis seeds (cheap to draw many from); JSON
    # documents get structural mutations drawn from hypothesis strategies.
    @given(rng=st.randoms(use_true_random=False), json_document=mutated_json())
    def fuzz(rng: random.Random, json_document: bytes) -> None:
        pending = []
        for _ in range(5):
            body = mutate(rng.choice(SEEDS_PROTOBUF), rng)
            pending.append(client.grpc(body))
            client.post(body, "application/x-protobuf")
        for _ in range(4):
            client.post(mutate(rng.choice(SEEDS_JSON), rng), "application/json")
        client.post(json_document, "application/json")
        for check in pending:
            check()
        if len(rss) < client.sent // 2000:
            rss.append(serve.rss_bytes())

    try:
        fuzz()
    finally:
        client.channel.close()
    assert serve.process.poll() is None, "the sidecar died"
    assert client.sent >= 10_000
    # Memory stays flat: after warming up, it grows by no more than a few MiB.
    assert len(rss) >= 4
    assert max(rss[1:]) - rss[1] < 24 * 1024 * 1024, [value // 1024 for value in rss]
    # Still working: a valid trace sent now is scored.
    before = sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE)
    request = encode(agent_spans([random.Random(1).choice(DEMO_RUNS[:3])]))
    send_grpc(f"127.0.0.1:{serve.grpc_port()}", request.SerializeToString())
    assert capture.wait_for(
        lambda: sum(1 for _, scope, _ in capture.spans() if scope == OWN_SCOPE) >= before + 3
    )
    print("answers:", client.answers)
