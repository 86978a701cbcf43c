"""Slow senders cannot hold the sidecar's memory or sockets: bodies being received count
against `max_bytes` (beyond it they are refused, retryably), a request must arrive within
`read_timeout_s`, connections are bounded by `max_connections`, and an aborted body is one
log line."""

from __future__ import annotations

import logging
import select
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from tests.otlp_capture import OtlpCapture
from tests.sidecar_harness import RunningSidecar, sidecar_document
from tests.waiting import wait_until

MAX_BYTES = 8 * 1024 * 1024
CHUNK = 512 * 1024  # each slow sender gets this far into a body announced at 4 MiB
HEAD = (
    b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\n"
    b"Content-Length: 4194000\r\n\r\n"
)


#: How long a test waits for the sidecar to say or do something it should at once or after its
#: one-second read timeout: a guard against a hang, far from both, even on a busy machine.
HANG_S = 30.0


@contextmanager
def running_sidecar(read_timeout_s: float) -> Iterator[RunningSidecar]:
    with OtlpCapture() as capture:
        document = sidecar_document(
            capture.endpoint,
            scoring_process=False,
            max_bytes=MAX_BYTES,
            read_timeout_s=read_timeout_s,
            max_connections=40,
        )
        with RunningSidecar(document) as running:
            yield running


@pytest.fixture
def sidecar() -> Iterator[RunningSidecar]:
    with running_sidecar(read_timeout_s=1.0) as running:
        yield running


@pytest.fixture
def patient_sidecar() -> Iterator[RunningSidecar]:
    """One whose read timeout is longer than a test waits for an answer: a connection closed
    there was closed for another reason."""
    with running_sidecar(read_timeout_s=10 * HANG_S) as running:
        yield running


def connect(sidecar: RunningSidecar) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", sidecar.service.http.port), timeout=HANG_S)
    return connection


def answered(connections: list[socket.socket]) -> bool:
    """Whether the server has said something to one of `connections` (or closed it)."""
    readable, _, _ = select.select(connections, [], [], 0)
    return bool(readable)


def answer(connection: socket.socket) -> bytes:
    """What the server said before closing (b"" when it closed without a word); `TimeoutError`
    when it neither answered nor closed within `HANG_S`."""
    reply = b""
    try:
        while chunk := connection.recv(65536):
            reply += chunk
    except ConnectionResetError:
        pass
    return reply


def test_bodies_being_received_count_against_max_bytes_and_time_out(sidecar: RunningSidecar) -> None:
    assembler = sidecar.service.assembler
    slow = [connect(sidecar) for _ in range(30)]  # 30 x 512 KiB would be 15 MiB
    for connection in slow:
        connection.sendall(HEAD + b"\0" * CHUNK)
    # Past max_bytes a body is refused at once: once one is, the others are still being received.
    wait_until(lambda: answered(slow), HANG_S, "a body refused")
    reading = sidecar.call(lambda: assembler.reading_bytes)
    assert 0 < reading <= MAX_BYTES
    replies = [answer(connection) for connection in slow]  # each refused, or timed out reading
    for connection in slow:
        connection.close()
    busy = [reply for reply in replies if reply.startswith(b"HTTP/1.1 429")]
    timed_out = [reply for reply in replies if reply.startswith(b"HTTP/1.1 408")]
    assert busy and timed_out and len(busy) + len(timed_out) == 30
    assert all(b"Retry-After: 1" in reply for reply in busy)
    assert sidecar.call(lambda: assembler.reading_bytes) == 0  # all of it given back


def test_connections_beyond_max_connections_are_closed_at_once(patient_sidecar: RunningSidecar) -> None:
    sidecar = patient_sidecar
    held = [connect(sidecar) for _ in range(40)]
    receiver = sidecar.service.http
    wait_until(lambda: sidecar.call(lambda: receiver.open_connections) == 40, HANG_S, "40 connections open")
    extra = connect(sidecar)
    # Closed without a word, long before its read timeout: by the bound on connections.
    assert answer(extra) == b""
    assert sidecar.call(lambda: receiver.open_connections) == 40  # the others are still open
    extra.close()
    for connection in held:
        connection.close()


def test_a_sender_that_never_finishes_its_headers_is_disconnected(sidecar: RunningSidecar) -> None:
    connection = connect(sidecar)
    connection.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
    started = time.monotonic()
    assert answer(connection) == b""
    assert time.monotonic() - started > 0.9  # after read_timeout_s, not at once
    connection.close()
    # The receiver still answers.
    healthy = connect(sidecar)
    healthy.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer(healthy).endswith(b"ok\n")
    healthy.close()


def test_an_aborted_body_logs_one_line_without_a_traceback(
    sidecar: RunningSidecar, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assembler = sidecar.service.assembler

    def reading(size: int) -> Callable[[], bool]:
        return lambda: sidecar.call(lambda: assembler.reading_bytes) == size

    for _ in range(3):
        connection = connect(sidecar)
        connection.sendall(HEAD + b"\0" * 1000)
        wait_until(reading(1000), 60, "the first 1000 bytes of the body read")
        connection.close()
        wait_until(reading(0), 60, "the aborted body given up")  # and said so, if it is to be said
    lines = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [record.getMessage() for record in lines] == [
        "otel_scorers: an OTLP/HTTP sender went away after 1000 bytes of its body (ConnectionResetError)"
    ]
    assert not any(record.exc_info for record in caplog.records)
