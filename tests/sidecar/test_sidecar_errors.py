"""Bad input gets a clear 4xx naming what is wrong, and nothing else is affected: malformed
protobuf and JSON, wrong content type, oversize and gzip-bomb bodies, missing or wrong tokens,
invalid span ids (a partial success)."""

from __future__ import annotations

import gzip
import http.client
import socket
import zlib
from collections.abc import Iterator
from typing import Any

import grpc
import orjson
import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from otel_scorers.demos.example_agent import DEMO_RUNS
from otel_scorers.sidecar.grpc import SERVICE
from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, agent_spans, encode, send_grpc, sidecar_document

TOKEN = "s3cret-token"
PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture(scope="module")
def capture() -> Iterator[OtlpCapture]:
    with OtlpCapture() as running:
        yield running


@pytest.fixture(scope="module")
def sidecar(capture: OtlpCapture) -> Iterator[RunningSidecar]:
    document = sidecar_document(capture.endpoint, token=TOKEN, max_request_bytes=64 * 1024)
    with RunningSidecar(document) as running:
        yield running


def post(
    sidecar: RunningSidecar, body: bytes, headers: dict[str, str], token: str | None = TOKEN
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
    if token is not None:
        headers = {**headers, "Authorization": f"Bearer {token}"}
    connection.request("POST", "/v1/traces", body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    if response.getheader("Content-Type", "").startswith("application/json"):
        return response.status, orjson.loads(data)
    if response.getheader("Content-Type", "").startswith("application/x-protobuf") and response.status != 200:
        return response.status, Status.FromString(data).message
    return response.status, data


def grpc_export(sidecar: RunningSidecar, body: bytes, token: str | None = TOKEN) -> bytes:
    return send_grpc(sidecar.grpc_endpoint, body, token)


def valid_body() -> bytes:
    body: bytes = encode(agent_spans(DEMO_RUNS[:1])).SerializeToString()
    return body


def test_malformed_protobuf_is_a_400_naming_the_problem(sidecar: RunningSidecar) -> None:
    status, message = post(sidecar, b"\xff\xff\xff\xff garbage", PROTOBUF)
    assert status == 400
    assert "not an OTLP protobuf trace request" in message


def test_malformed_json_is_a_400_in_json(sidecar: RunningSidecar) -> None:
    status, document = post(sidecar, b'{"resourceSpans": [', {"Content-Type": "application/json"})
    assert status == 400
    assert "not JSON" in document["message"]
    status, document = post(sidecar, b'{"resourceSpans": 3}', {"Content-Type": "application/json"})
    assert status == 400
    assert "not an OTLP trace request" in document["message"]


def test_wrong_content_type_is_a_415(sidecar: RunningSidecar) -> None:
    status, message = post(sidecar, b"hello", {"Content-Type": "text/plain"})
    assert status == 415
    assert "text/plain" in message


def test_oversize_body_is_a_413(sidecar: RunningSidecar) -> None:
    status, message = post(sidecar, b"\x00" * (65 * 1024), PROTOBUF)
    assert status == 413
    assert "limit" in message


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_gzip_and_deflate_bombs_are_refused_without_inflating_them(
    sidecar: RunningSidecar, encoding: str
) -> None:
    zeros = b"\x00" * (50 * 1024 * 1024)  # 50 MiB of zeros in ~50 KiB
    bomb = gzip.compress(zeros) if encoding == "gzip" else zlib.compress(zeros, 9)
    assert len(bomb) < 64 * 1024
    status, message = post(sidecar, bomb, {**PROTOBUF, "Content-Encoding": encoding})
    assert status == 413
    assert "decompressed body exceeds" in message


def test_corrupt_gzip_is_a_400(sidecar: RunningSidecar) -> None:
    status, message = post(sidecar, b"\x1f\x8b not really gzip", {**PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 400
    assert "gzip" in message


@pytest.mark.parametrize("token", [None, "wrong"])
def test_http_without_the_right_token_is_a_401(sidecar: RunningSidecar, token: str | None) -> None:
    status, message = post(sidecar, valid_body(), PROTOBUF, token=token)
    assert status == 401
    assert ("missing" if token is None else "wrong") in message


@pytest.mark.parametrize("token", [None, "wrong"])
def test_grpc_without_the_right_token_is_unauthenticated(sidecar: RunningSidecar, token: str | None) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        grpc_export(sidecar, valid_body(), token=token)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED


def raw_http(port: int, request: bytes) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange written by hand: headers that http.client would refuse to send."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_a_non_ascii_byte_in_authorization_is_a_401_not_a_server_error(sidecar: RunningSidecar) -> None:
    body = valid_body()
    request = (
        b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: application/x-protobuf\r\nAuthorization: Bearer s3cret-\xe9\xff\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    status, reply = raw_http(sidecar.service.http.port, request)
    assert status == 401
    assert Status.FromString(reply).message == "wrong bearer token"


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_case_insensitive(sidecar: RunningSidecar, scheme: str) -> None:
    status, _ = post(sidecar, valid_body(), {**PROTOBUF, "Authorization": f"{scheme} {TOKEN}"}, token=None)
    assert status == 200
    metadata = (("authorization", f"{scheme} {TOKEN}"),)
    with grpc.insecure_channel(sidecar.grpc_endpoint) as channel:
        channel.unary_unary(f"/{SERVICE}/Export")(valid_body(), metadata=metadata, timeout=10)


def test_metrics_are_open_by_default_even_with_a_token(sidecar: RunningSidecar) -> None:
    status, body = raw_http(
        sidecar.service.http.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == 200
    assert b"otel_scorers_receiver_spans" in body


def test_metrics_require_the_token_when_configured(capture: OtlpCapture) -> None:
    document = sidecar_document(capture.endpoint, token=TOKEN, metrics_require_token=True)
    with RunningSidecar(document) as running:
        port = running.service.http.port
        get = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        missing, body = raw_http(port, get + b"\r\n")
        wrong, _ = raw_http(port, get + b"Authorization: Bearer nope\r\n\r\n")
        right, metrics = raw_http(port, get + f"Authorization: bearer {TOKEN}\r\n\r\n".encode())
    assert (missing, wrong, right) == (401, 401, 200)
    assert b"missing bearer token" in body
    assert b"# TYPE target_info gauge" in metrics


def test_grpc_malformed_request_is_invalid_argument(sidecar: RunningSidecar) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        grpc_export(sidecar, b"\xff\xff\xff\xff garbage")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not an OTLP protobuf trace request" in raised.value.details()


def test_grpc_oversize_request_is_refused(sidecar: RunningSidecar) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        grpc_export(sidecar, b"\x00" * (65 * 1024))
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_spans_with_invalid_ids_are_rejected_alone_as_a_partial_success(sidecar: RunningSidecar) -> None:
    request = encode(agent_spans(DEMO_RUNS[:1]))
    spans = request.resource_spans[0].scope_spans[0].spans
    total = len(spans)
    spans[0].trace_id = b"\x01\x02"
    spans[1].span_id = b""
    response = ExportTraceServiceResponse.FromString(grpc_export(sidecar, request.SerializeToString()))
    assert response.partial_success.rejected_spans == 2
    assert "invalid trace_id" in response.partial_success.error_message
    status, body = post(sidecar, request.SerializeToString(), PROTOBUF)
    assert status == 200
    assert ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 2
    assert total > 2


def test_a_span_whose_parent_id_is_not_8_bytes_is_rejected_alone_naming_it(sidecar: RunningSidecar) -> None:
    request = encode(agent_spans(DEMO_RUNS[:1]))
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[0].parent_span_id = b"\x01\x02\x03"  # read as a span id of its own, an orphan's
    response = ExportTraceServiceResponse.FromString(grpc_export(sidecar, request.SerializeToString()))
    assert response.partial_success.rejected_spans == 1
    assert "an invalid parent_span_id (3 bytes, not 8)" in response.partial_success.error_message
    status, body = post(sidecar, request.SerializeToString(), PROTOBUF)
    assert status == 200
    assert ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 1


def test_a_valid_request_after_bad_ones_is_still_scored(
    sidecar: RunningSidecar, capture: OtlpCapture
) -> None:
    before = len(capture.span_list())
    status, body = post(sidecar, valid_body(), PROTOBUF)
    assert status == 200
    assert ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 0
    assert capture.wait_for(lambda: len(capture.span_list()) >= before + 3)


def test_health_ready_and_prometheus_metrics(sidecar: RunningSidecar) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", sidecar.service.http.port, timeout=10)
    for path, expected in (("/healthz", b"ok"), ("/readyz", b"ready")):
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status == 200
        assert response.read().startswith(expected)
    post(sidecar, b"\xff garbage", PROTOBUF)
    connection.request("GET", "/metrics")
    response = connection.getresponse()
    text = response.read().decode()
    assert response.status == 200
    assert "otel_scorers_receiver_spans" in text
    connection.close()


def test_grpc_gzip_bomb_is_refused_by_its_decompressed_size(sidecar: RunningSidecar) -> None:
    with grpc.insecure_channel(sidecar.grpc_endpoint) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        metadata = (("authorization", f"Bearer {TOKEN}"),)
        with pytest.raises(grpc.RpcError) as raised:
            export(
                b"\x00" * (8 * 1024 * 1024), metadata=metadata, compression=grpc.Compression.Gzip, timeout=10
            )
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def with_one_bad_span(body: bytes) -> tuple[bytes, int]:
    """`body` with one span's name made invalid UTF-8 (same length, so the framing holds), and
    how many spans it holds."""
    request = ExportTraceServiceRequest.FromString(body)
    spans = [
        span for resource in request.resource_spans for scope in resource.scope_spans for span in scope.spans
    ]
    spans[1].name = "B" * len(spans[1].name)
    marked = request.SerializeToString()
    return marked.replace(b"B" * len(spans[1].name), b"\xff" * len(spans[1].name), 1), len(spans)


def test_a_span_with_invalid_utf8_is_rejected_alone_over_grpc_and_http(sidecar: RunningSidecar) -> None:
    body, total = with_one_bad_span(valid_body())
    with pytest.raises(DecodeError):
        ExportTraceServiceRequest.FromString(body)  # the request as a whole does not parse
    reply = ExportTraceServiceResponse.FromString(grpc_export(sidecar, body))
    assert reply.partial_success.rejected_spans == 1
    assert "UTF-8" in reply.partial_success.error_message
    status, data = post(sidecar, body, PROTOBUF)
    assert status == 200
    assert ExportTraceServiceResponse.FromString(data).partial_success.rejected_spans == 1
    assert total > 1  # and the others were taken


def test_an_otlp_json_request_with_bytes_that_are_not_utf8_is_read_with_them_replaced(
    sidecar: RunningSidecar, capture: OtlpCapture
) -> None:
    # The whole request was refused (400, naming "surrogates" at column 1) for one span's name.
    document = MessageToDict(encode(agent_spans(DEMO_RUNS[:1])))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["name"] = "MARKER"
    body = orjson.dumps(document).replace(b"MARKER", b"bad \xff\xfe name")
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    before = len(capture.span_list())
    status, answer = post(sidecar, body, {"Content-Type": "application/json"})
    assert status == 200, answer
    assert answer.get("partialSuccess", {}).get("rejectedSpans", 0) == 0
    assert capture.wait_for(lambda: len(capture.span_list()) >= before + 2)  # the run was scored
