"""The traces the receiving process hands a scoring process, as one message per batch.

A batch is the job ids with their trace ids, and one OTLP request holding the spans of their
runs' subtrees, whatever the number of traces: a message per trace costs a pickle, a pipe write
and a wake-up of the child each, which at thousands of traces a second was most of the
hand-over. With them goes the place of each span's trace among the jobs, in the request's
order: the scoring process gives each span to its trace without reading its trace id. The
scoring process reads the request with `span_bytes_schema` (each span's attributes as bytes,
converted by `trace_records`).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from otel_scorers.otlp.span_bytes_schema import BytesRequest
from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.jobs import job_spans
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan
from otel_scorers.sidecar.request_bytes import request_bytes

_new_item = object.__new__

#: Traces at most in one message to a scoring process, and replies in one message back.
MAX_BATCH_TRACES = 256

#: Job ids, each with the trace id of its spans in the payload.
BatchJobs = Sequence[tuple[int, bytes]]


def encode_batch(traces: Sequence[tuple[int, BufferedTrace]]) -> bytes:
    """Ready traces, by job id, as one `("jobs", jobs, payload, places)` message."""
    jobs = [(job_id, trace.key) for job_id, trace in traces]
    payload, places = request_bytes(job_spans(trace) for _, trace in traces)
    return pickle.dumps(("jobs", jobs, payload, places), protocol=pickle.HIGHEST_PROTOCOL)


def decode_batch(
    jobs: BatchJobs, payload: bytes, places: Sequence[int] | None = None
) -> list[tuple[int, list[OtlpSpan]]]:
    """A `("jobs", jobs, payload, places)` message's traces: each job id with the spans of its
    trace. `places`: each span's job, by its place in `jobs`, in the request's order; without
    them (a request made elsewhere), a span's job is the one of its trace id."""
    request = BytesRequest.FromString(payload)
    batch = Batch(0)
    if places is not None:
        return _by_place(jobs, request, batch, places)
    traces: dict[bytes, list[OtlpSpan]] = {}
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, batch)
            for span in scope_spans.spans:
                spans = traces.get(span.trace_id)
                if spans is None:
                    spans = traces[span.trace_id] = []
                spans.append(OtlpSpan(span, origin))
    return [(job_id, traces.get(trace_id, [])) for job_id, trace_id in jobs]


def _by_place(
    jobs: BatchJobs, request: Any, batch: Batch, places: Sequence[int]
) -> list[tuple[int, list[OtlpSpan]]]:
    """The request's spans given to their jobs by `places`, no span's trace id read."""
    traces: list[list[OtlpSpan]] = [[] for _ in jobs]
    place = iter(places)
    for resource_spans in request.resource_spans[:]:
        for scope_spans in resource_spans.scope_spans[:]:
            origin = Origin(resource_spans.resource, scope_spans.scope, scope_spans.schema_url, batch)
            for span in scope_spans.spans[:]:
                # Made through its slots: calling the class costs about 1,000 instructions more.
                item = _new_item(OtlpSpan)
                item.span, item.origin = span, origin
                traces[next(place)].append(item)
    return [(job_id, spans) for (job_id, _), spans in zip(jobs, traces, strict=True)]
