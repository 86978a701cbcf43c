"""`otel-scorers fake-judge`: an OpenAI-compatible judge on this machine that needs no key and no
model, for trying the judged scorers (and `calibrate`, budgets, batching) before choosing a real
judge. It answers `POST /v1/chat/completions` with one object of the JSON schema the request
carries (docs/judge-replies.md), made up: each verdict, flag and number is drawn from the
request's text by a hash, so the same request always gets the same reply and different runs get
different scores. Its verdicts mean nothing; they are valid, which is what trying the features
needs.

    otel-scorers fake-judge --port 8000
    # judge: {model: openai/fake-judge, api_base: "http://127.0.0.1:8000/v1"}

Requests with no schema (`reply_schema: off`, or JSON mode alone) get `{}`: the judge scorers
then report an invalid reply, as they would from any judge that ignores the format.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Largest request body read; a bigger one is refused with 413.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
MODEL = "fake-judge"


class _Draw:
    """Numbers drawn from a request's text: the same text, the same draws."""

    def __init__(self, text: str) -> None:
        self.seed = hashlib.sha256(text.encode()).digest()
        self.count = 0

    def below(self, bound: int) -> int:
        self.count += 1
        digest = hashlib.sha256(self.seed + self.count.to_bytes(4, "big")).digest()
        return int.from_bytes(digest[:8], "big") % max(1, bound)


def fake_value(schema: Mapping[str, Any], draw: _Draw, name: str = "") -> Any:
    """A value valid under `schema` (the keywords the judge's reply schemas use: type,
    properties, required, items, minItems, enum, minimum, maximum)."""
    if "enum" in schema:
        choices = list(schema["enum"])
        return choices[draw.below(len(choices))]
    kind = schema.get("type")
    if kind == "object":
        properties: Mapping[str, Any] = schema.get("properties", {})
        return {key: fake_value(sub, draw, key) for key, sub in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [fake_value(schema.get("items", {}), draw, name) for _ in range(count)]
    if kind == "boolean":
        return draw.below(2) == 1
    if kind == "integer":
        return int(schema.get("minimum", 0))  # an index (a rubric's criterion) that exists
    if kind == "number":
        floor, ceiling = float(schema.get("minimum", 0.0)), float(schema.get("maximum", 1.0))
        return floor + (ceiling - floor) * draw.below(11) / 10
    if kind == "string":
        return f"fake {name}".strip() if name else "fake"
    return None


def schema_of(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The reply schema a chat-completions request carries, in either form the judge sends."""
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping):
        return None
    if isinstance(response_format.get("json_schema"), Mapping):
        schema = response_format["json_schema"].get("schema")
    else:
        schema = response_format.get("schema")
    return schema if isinstance(schema, Mapping) else None


def fake_reply(body: Mapping[str, Any]) -> str:
    """The reply's content for one chat-completions request."""
    schema = schema_of(body)
    if schema is None:
        return "{}"
    text = json.dumps(body.get("messages", []), sort_keys=True, default=str)
    return json.dumps(fake_value(schema, _Draw(text)))


def completion(body: Mapping[str, Any], number: int) -> dict[str, Any]:
    content = fake_reply(body)
    prompt = sum(
        len(str(message.get("content") or ""))
        for message in body.get("messages", [])
        if isinstance(message, Mapping)
    )
    usage_in, usage_out = prompt // 4 + 1, len(content) // 4 + 1
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODEL),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": usage_in,
            "completion_tokens": usage_out,
            "total_tokens": usage_in + usage_out,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server_version = "otel-scorers-fake-judge"
    answered = 0

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, {"error": {"message": f"no such endpoint: {self.path}", "type": "not_found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._send(413, {"error": {"message": "request too large", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            self._send(400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        if not isinstance(body, dict):
            self._send(
                400, {"error": {"message": "the body is not an object", "type": "invalid_request_error"}}
            )
            return
        _Handler.answered += 1
        self._send(200, completion(body, _Handler.answered))

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(
                200,
                {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "otel-scorers"}]},
            )
        else:
            self._send(404, {"error": {"message": f"no such endpoint: {self.path}", "type": "not_found"}})

    def _send(self, status: int, document: Mapping[str, Any]) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request line per judge call would drown what the user watches."""


def make_server(host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    return server


def serve(host: str, port: int) -> int:
    """Serve until interrupted; first say where, and the judge section that points there."""
    server = make_server(host, port)
    bound = server.server_address[1]
    print(f"fake judge on http://{host}:{bound}/v1 (verdicts made up; no key, no model)", flush=True)
    print(f'judge: {{model: openai/{MODEL}, api_base: "http://{host}:{bound}/v1"}}', flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
