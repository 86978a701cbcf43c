"""Schemas from traces and configurations reach nothing outside themselves, and every check of
them keeps its deadline: a reference is never fetched (no HTTP request, no file, no FIFO opened),
and an `enum` costs one look-up whatever its size."""

from __future__ import annotations

import gc
import json
import math
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from otel_scorers import checks
from otel_scorers.config import parse_config
from otel_scorers.model import AgentRun, Score, ToolCall, ToolDefinition
from otel_scorers.pipeline.scorer_call import evaluate as evaluate_binding

from .check_scores import evaluate


class _CountingServer:
    """An HTTP server on 127.0.0.1 that serves a schema and counts the requests it receives."""

    def __init__(self) -> None:
        self.requests = 0
        counting = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                counting.requests += 1
                body = json.dumps({"enum": ["SECRET-FROM-THE-NETWORK"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/q.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def counting_server() -> Iterator[_CountingServer]:
    server = _CountingServer()
    try:
        yield server
    finally:
        server.close()


def declaring(reference: str, arguments: object = None) -> AgentRun:
    """A run whose trace declares a tool with parameters that refer to `reference`."""
    parameters = {"type": "object", "properties": {"city": {"$ref": reference}}}
    return AgentRun(
        1,
        2,
        "agent",
        "q",
        "ok",
        tool_calls=(ToolCall("get_weather", arguments=arguments or {"city": "guess"}),),
        tool_definitions=(ToolDefinition("get_weather", parameters, "gen_ai.tool.definitions"),),
    )


def test_a_reference_to_a_url_in_a_declared_schema_sends_no_request(counting_server: _CountingServer) -> None:
    score = evaluate(checks.tool_args_valid(), declaring(counting_server.url))
    assert counting_server.requests == 0
    assert score.skipped is not None and "never fetched" in score.skipped
    assert "SECRET" not in repr(score)
    # A schema given in the configuration, for the answer: no request either, and no verdict.
    config = parse_config(
        {"scorers": [{"type": "json_schema", "args": {"schema": {"$ref": counting_server.url}}}]}
    )
    (binding,) = config.scoring().bindings
    answer = evaluate_binding(binding, AgentRun(1, 2, "agent", "q", '"guess"'))
    assert isinstance(answer, Score)
    assert counting_server.requests == 0
    assert answer.error is not None and answer.error.type == "unresolvable"
    assert counting_server.url in answer.error.message


def test_a_file_reference_in_a_declared_schema_reads_nothing_of_the_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"enum": ["SECRET-FROM-THE-DISK"]}), encoding="utf-8")
    score = evaluate(checks.tool_args_valid(), declaring(secret.as_uri()))
    assert "SECRET" not in repr(score)
    assert score.skipped is not None and "never fetched" in score.skipped


def test_a_fifo_behind_a_file_reference_is_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "schema.fifo"
    os.mkfifo(fifo)
    found: list[Score] = []
    worker = threading.Thread(
        target=lambda: found.append(evaluate(checks.tool_args_valid(), declaring(fifo.as_uri()))),
        daemon=True,
    )
    worker.start()
    worker.join(10.0)
    if worker.is_alive():  # blocked opening the FIFO: let it go, then fail
        descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(descriptor, b'{"enum": ["from the fifo"]}')
        os.close(descriptor)
        worker.join(10.0)
        pytest.fail("the check opened the FIFO a schema referred to")
    (score,) = found
    assert score.skipped is not None and "never fetched" in score.skipped


def test_a_reference_inside_the_schema_still_resolves() -> None:
    parameters = {
        "$defs": {"city": {"type": "string"}},
        "type": "object",
        "properties": {"city": {"$ref": "#/$defs/city"}},
    }
    run = declaring("#", {"city": 42})
    run = AgentRun(
        1, 2, "agent", "q", "ok", tool_calls=run.tool_calls,
        tool_definitions=(ToolDefinition("get_weather", parameters),),
    )  # fmt: skip
    score = evaluate(checks.tool_args_valid(), run)
    assert score.value == 0.0 and score.reason == "call 1 get_weather: at $.city: 42 is not of type 'string'"


def _cpu_seconds(check: checks.Check, run: AgentRun, expected: float) -> float:
    best = math.inf
    for _ in range(3):  # the best of three: a collection or another process may stall one
        gc.collect()
        started = time.process_time()  # CPU time: other processes on the machine do not move it
        score = evaluate(check, run, timeout_s=60.0)
        best = min(best, time.process_time() - started)
        assert score.value == expected, score
    return best


@pytest.mark.parametrize("library", [False, True], ids=["quick test", "library"])
def test_an_enum_is_checked_in_time_linear_in_its_size_and_the_document_s(library: bool) -> None:
    def cost(size: int) -> float:
        codes = [f"code-{number}" for number in range(size)]
        # `not` beside the enum sends the document to the library; alone, the quick test.
        item: dict[str, object] = {"enum": codes, **({"not": {"type": "null"}} if library else {})}
        schema = {"type": "array", "items": item}
        answer = json.dumps([codes[-1]] * size + ["not a code"])  # the last value: the furthest
        return _cpu_seconds(checks.json_schema(schema), AgentRun(1, 2, "agent", "q", answer), 0.0)

    cost(300)  # warm
    # Twenty times the values and twenty times the items: about twenty times the work when
    # linear, four hundred when quadratic.
    assert cost(6_000) < 60 * max(cost(300), 1e-3)


def test_every_keyword_keeps_the_deadline_not_only_the_combinators() -> None:
    # No combinator, no pattern: a document of many numbers, each checked by the library.
    schema = {"type": "array", "items": {"type": "number", "multipleOf": 0.5}}
    answer = json.dumps([1.0] * 150_000)  # each valid: the library walks them all
    score = evaluate(checks.json_schema(schema, timeout_s=0.001), AgentRun(1, 2, "agent", "q", answer))
    assert score.error is not None and score.error.type == "timeout"


def test_a_long_document_is_checked_off_the_loop_which_keeps_turning() -> None:
    """A schema check of a long answer runs on threads of its own: the loop turns meanwhile, and
    the binding's timeout ends the wait; a short one is checked in place."""
    import asyncio

    from otel_scorers import bind
    from otel_scorers.scorers.offloaded_check import INLINE_CHARS

    schema = {"type": "array", "items": {"type": "number", "multipleOf": 0.5}}
    answer = json.dumps([1.0] * 150_000)  # each valid: the library walks them all
    assert len(answer) > INLINE_CHARS
    binding = bind(checks.json_schema(schema), timeout_s=60.0)
    assert isinstance(evaluate_binding(binding, AgentRun(1, 2, "agent", "q", "[1.0, 2.5]")), Score)

    async def scored_with_heartbeat(timeout_s: float) -> tuple[Score, int]:
        beats = 0
        scoring = asyncio.ensure_future(
            evaluate_binding(
                bind(checks.json_schema(schema), timeout_s=timeout_s), AgentRun(1, 2, "agent", "q", answer)
            )  # type: ignore[arg-type]
        )
        while not scoring.done():
            await asyncio.sleep(0.005)
            beats += 1
        return scoring.result(), beats

    started = time.process_time()
    score, beats = asyncio.run(scored_with_heartbeat(60.0))
    print(f"{beats} heartbeats in {time.process_time() - started:.2f} s of CPU")
    assert score.value == 1.0, score
    # On the loop, the heartbeat could not beat while the document was checked.
    assert beats >= 10, beats
    timed_out, _ = asyncio.run(scored_with_heartbeat(0.05))
    assert timed_out.error is not None and timed_out.error.type == "timeout", timed_out
