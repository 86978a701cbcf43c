"""The traces the receiving process hands a scoring process, as one message per batch.

A batch is the job ids with their trace ids, and one OTLP request holding the spans of their
runs' subtrees, whatever the number of traces: a message per trace costs a pickle, a pipe write
and a wake-up of the child each, which at thousands of traces a second was most of the
hand-over. A trace's spans are told apart by their trace id.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.jobs import job_spans
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan
from otel_scorers.sidecar.request_bytes import request_bytes

#: Traces at most in one message to a scoring process, and replies in one message back.
MAX_BATCH_TRACES = 256

#: Job ids, each with the trace id of its spans in the payload.
BatchJobs = Sequence[tuple[int, bytes]]


def encode_batch(traces: Sequence[tuple[int, BufferedTrace]]) -> bytes:
    """Ready traces, by job id, as one `("jobs", jobs, payload)` message."""
    jobs = [(job_id, trace.key) for job_id, trace in traces]
    payload = request_bytes(item for _, trace in traces for item in job_spans(trace))
    return pickle.dumps(("jobs", jobs, payload), protocol=pickle.HIGHEST_PROTOCOL)


def decode_batch(jobs: BatchJobs, payload: bytes) -> list[tuple[int, list[OtlpSpan]]]:
    """A `("jobs", jobs, payload)` message's traces: each job id with the spans of its trace."""
    request = ExportTraceServiceRequest.FromString(payload)
    batch = Batch(0)
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
