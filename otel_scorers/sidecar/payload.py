"""OTLP/HTTP request bodies: content type, bounded decompression, decoding with opentelemetry-proto."""

from __future__ import annotations

import zlib
from typing import Any, Literal

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.otlp.decode import (
    OtlpDecodeError,
    parse_json_request,
    parse_protobuf_request,
    utf8_replaced,
)
from otel_scorers.otlp.salvage import salvage
from otel_scorers.otlp.span_bytes_schema import BytesRequest
from otel_scorers.otlp.trace_id_schema import TraceIdRequest

Encoding = Literal["protobuf", "json"]
_GZIP_WBITS = 31
_DEFLATE_WBITS = 15


class PayloadError(Exception):
    """A request that cannot be taken, with the HTTP status that says why (4xx)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def body_encoding(content_type: str | None) -> Encoding:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media == "application/x-protobuf":
        return "protobuf"
    if media == "application/json":
        return "json"
    raise PayloadError(
        415, f"unsupported Content-Type {content_type!r}; use application/x-protobuf or application/json"
    )


def decompress(body: bytes, content_encoding: str | None, limit: int) -> bytes:
    """The body decompressed, refusing (413) as soon as it would exceed `limit` bytes: a small
    gzip bomb never expands in memory beyond the limit."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise PayloadError(415, f"unsupported Content-Encoding {content_encoding!r}; use gzip or none")
    inflater = zlib.decompressobj(_GZIP_WBITS if encoding == "gzip" else _DEFLATE_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise PayloadError(400, f"body is not valid {encoding}: {exc}") from None
    if len(data) > limit or inflater.unconsumed_tail:
        raise PayloadError(413, f"decompressed body exceeds the {limit}-byte limit")
    if not inflater.eof:
        raise PayloadError(400, f"body is truncated {encoding}")
    return data


def decode(data: bytes, encoding: Encoding) -> ExportTraceServiceRequest:
    try:
        if encoding == "protobuf":
            return parse_protobuf_request(data)
        return parse_json_request(data)
    except OtlpDecodeError as exc:
        raise PayloadError(400, str(exc)) from None
    except RecursionError:
        raise PayloadError(400, "payload nests too deeply") from None


def decode_salvaging(
    data: bytes, encoding: Encoding, trace_ids_first: bool = False, kept: bool = True
) -> tuple[ExportTraceServiceRequest | Any, int, str]:
    """`decode`, except that a protobuf request whose only fault is some spans that do not parse
    is taken without them: the request, how many spans were left out, and why. With
    `trace_ids_first`, a protobuf request is read as a `TraceIdRequest` (its spans' trace ids
    alone; `request_scan.scan` parses the sampled spans), or as above when that fails. Else a
    protobuf request that parses whole is read again with `span_bytes_schema` (`BytesRequest`:
    each span's key-values kept as bytes), which is what is kept of it: its spans are screened
    by those bytes and handed to a scoring process as they are, which reads them so. `kept`
    false: the request is about to be refused whole (the buffers are full), read once, only to
    say what is wrong with it or count its spans."""
    if trace_ids_first and encoding == "protobuf":
        try:
            return TraceIdRequest.FromString(data), 0, ""
        except Exception:  # as in parse_protobuf_request; the whole parse below says what is wrong
            pass
    try:
        request = decode(data, encoding)
    except PayloadError:
        if encoding == "json":
            # bytes that are not UTF-8 (a span's name) are replaced, as a protobuf request's
            # span holding them is refused alone; any other fault is the request's
            replaced = utf8_replaced(data, "an OTLP/JSON request")
            if replaced is None:
                raise
            return decode(replaced, "json"), 0, ""
        salvaged = salvage(data)
        if salvaged is None:
            raise
        return salvaged.request, salvaged.rejected, salvaged.problem
    if kept and encoding == "protobuf" and not trace_ids_first:
        # Every string's UTF-8 was checked by the whole parse, as the key-values kept are not.
        return BytesRequest.FromString(data), 0, ""
    return request, 0, ""
