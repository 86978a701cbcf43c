"""The receiving loop keeps answering while a large request is decoded and sorted out: `/healthz`
is not held up by a 4 MiB request, OTLP/JSON or protobuf.

The sidecar runs as `otel-scorers serve` in its own process, as deployed: in the test process
its loop would share the interpreter lock and the garbage collector with everything the test
suite has built by then, and measure those instead."""

from __future__ import annotations

import http.client
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from google.protobuf.json_format import MessageToJson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.demos.example_agent import DEMO_RUNS
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import ServeProcess, agent_spans, encode, send_grpc, sidecar_document

MAX_REQUEST = 4 * 1024 * 1024
#: The longest /healthz may take while the large request is worked on, as a share of the time the
#: request takes: when the loop decoded it, /healthz waited for all of it (0.35 to 0.7 s). The
#: share, unlike a time, holds on a loaded machine.
STALL_SHARE = 0.5


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    config: Path = tmp_path_factory.mktemp("loop") / "sidecar.yaml"
    with OtlpCapture() as capture:
        config.write_text(
            yaml.safe_dump(sidecar_document(capture.endpoint, decision_wait_s=30, max_wait_s=60))
        )
        serve = ServeProcess(config)
        try:
            serve.grpc_port()
            yield serve
        finally:
            serve.stop()


def json_body() -> bytes:
    """OTLP/JSON of example-agent traces, just under 4 MiB."""
    spans = agent_spans(DEMO_RUNS * 60)
    body = b""
    while True:
        candidate = MessageToJson(encode(spans)).encode()
        if len(candidate) > MAX_REQUEST:
            return body
        body = candidate
        spans = spans + spans[: len(spans) // 4]


def tiny_spans_body() -> bytes:
    """A protobuf request of about 60,000 small spans in 300 traces, each one a run's child."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    traces = [os.urandom(16) for _ in range(300)]
    for index in range(60_000):
        span = scope.spans.add()
        span.trace_id = traces[index % 300]
        span.span_id = os.urandom(8)
        span.name = "invoke_agent weather" if index < 300 else "chat gpt-4o"
    body = request.SerializeToString()
    assert len(body) < MAX_REQUEST
    return body


def longest_healthz_while(sidecar: ServeProcess, send: threading.Thread) -> tuple[float, float]:
    """The longest /healthz answer while `send` runs, and how long `send` took."""
    connection = http.client.HTTPConnection("127.0.0.1", sidecar.http_port(), timeout=10)
    longest = 0.0
    sent = time.monotonic()
    send.start()
    deadline = time.monotonic() + 20
    while send.is_alive() and time.monotonic() < deadline:
        started = time.monotonic()
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        assert response.read() == b"ok\n"
        longest = max(longest, time.monotonic() - started)
        time.sleep(0.005)
    send.join(20)
    took = time.monotonic() - sent
    connection.close()
    return longest, took


def test_a_4_mib_json_request_does_not_stall_healthz(sidecar: ServeProcess) -> None:
    body = json_body()
    statuses: list[int] = []

    def send() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", sidecar.http_port(), timeout=20)
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
        connection.close()

    longest, took = longest_healthz_while(sidecar, threading.Thread(target=send))
    assert statuses == [200]
    assert longest < STALL_SHARE * took, f"/healthz took {longest:.3f} s of the request's {took:.3f} s"


def test_a_large_protobuf_request_of_small_spans_does_not_stall_healthz(sidecar: ServeProcess) -> None:
    body = tiny_spans_body()
    replies: list[bytes] = []
    send = threading.Thread(
        target=lambda: replies.append(send_grpc(f"127.0.0.1:{sidecar.grpc_port()}", body))
    )
    longest, took = longest_healthz_while(sidecar, send)
    assert replies == [b""]  # accepted whole
    assert longest < STALL_SHARE * took, f"/healthz took {longest:.3f} s of the request's {took:.3f} s"


@pytest.fixture(scope="module")
def labelled_sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    config: Path = tmp_path_factory.mktemp("loop-labels") / "sidecar.yaml"
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, decision_wait_s=30, max_wait_s=60)
        document["labels"] = {"max_pending": 100_000}
        config.write_text(yaml.safe_dump(document))
        serve = ServeProcess(config)
        try:
            serve.grpc_port()
            yield serve
        finally:
            serve.stop()


def labels_json_body() -> tuple[bytes, int]:
    """OTLP/JSON of people's labels just under 4 MiB, with their ids in hex as the OTLP
    specification writes them for JSON (protobuf's own JSON mapping would write base64), and
    how many labels it holds."""
    import base64
    import json

    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    from otel_scorers.labels.join_records import Label
    from tests.label_requests import label_request

    count = 6_400
    request = ExportLogsServiceRequest.FromString(
        label_request(
            [
                Label("toxicity", n, n, label="pass", reviewer=f"r{n % 7}", comment="c" * 40)
                for n in range(1, count + 1)
            ]
        )
    )
    document = json.loads(MessageToJson(request))
    for resource in document["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    record[key] = base64.b64decode(record[key]).hex()
    body = json.dumps(document).encode()
    assert len(body) < MAX_REQUEST
    return body, count


def test_a_4_mib_json_labels_request_with_hex_ids_is_read_off_the_loop(
    labelled_sidecar: ServeProcess,
) -> None:
    import json

    body, count = labels_json_body()
    answers: list[tuple[int, bytes]] = []

    def send() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", labelled_sidecar.http_port(), timeout=20)
        connection.request("POST", "/v1/logs", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answers.append((response.status, response.read()))
        connection.close()

    longest, took = longest_healthz_while(labelled_sidecar, threading.Thread(target=send))
    ((status, answer),) = answers
    assert status == 200 and json.loads(answer).get("partialSuccess", {}) == {}, answer[:300]
    assert longest < STALL_SHARE * took, f"/healthz took {longest:.3f} s of the request's {took:.3f} s"
    from tests.sidecar_harness import metrics_text, sample

    metrics = metrics_text(f"http://127.0.0.1:{labelled_sidecar.http_port()}")
    assert sample(metrics, "otel_scorers_labels_received_total") == count
