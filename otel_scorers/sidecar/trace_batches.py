"""The traces the receiving process hands a scoring process, as one message per batch.

A batch is each job id with its trace's spans, already converted to `SpanRecord`s and sent as
plain tuples, whatever the number of traces: a message per trace costs a pickle, a pipe write
and a wake-up of the child each, which at thousands of traces a second was most of the
hand-over. The spans are converted on the receiving side (on the sending thread), where they are
protobuf messages parsed once already: sent as protobuf, the scoring process parsed them again
and then converted them, each field read through protobuf's Python objects, about four times
what unpickling the converted records costs there. A trace's resource, one dict for its spans of
one origin, is pickled once.
"""

from __future__ import annotations

import marshal
import pickle
from collections.abc import Sequence
from typing import Any

from otel_scorers.sidecar.batch_assembler import BufferedTrace
from otel_scorers.sidecar.jobs import job_spans
from otel_scorers.sidecar.otlp_spans import trace_records
from otel_scorers.span_record import SpanEvent, SpanRecord
from otel_scorers.throttled_log import throttled

#: Traces at most in one message to a scoring process, and replies in one message back.
MAX_BATCH_TRACES = 256

#: A `SpanRecord`'s fields in order, its events as `(name, time_ns, attributes)` tuples.
RecordFields = tuple[Any, ...]
#: Job ids, each with its trace's spans (None: they could not be converted).
BatchJobs = Sequence[tuple[int, Sequence[RecordFields] | None]]


def encode_batch(traces: Sequence[tuple[int, BufferedTrace]]) -> bytes:
    """Ready traces, by job id, as one `("jobs", jobs)` message, `jobs` written by `marshal`:
    plain values only, read by the same interpreter, for about 60 % of a pickle's cost."""
    jobs = [(job_id, _trace_fields(trace)) for job_id, trace in traces]
    return pickle.dumps(("jobs", marshal.dumps(jobs)), protocol=pickle.HIGHEST_PROTOCOL)


def decode_batch(jobs: bytes) -> list[tuple[int, list[SpanRecord] | None]]:
    """A `("jobs", jobs)` message's traces: each job id with the spans of its trace, or None for
    a trace whose spans could not be converted (the scoring process counts it as a trace it
    could not build, as it does one whose runs it cannot build)."""
    received: BatchJobs = marshal.loads(jobs)
    return [
        (job_id, None if spans is None else [_record(fields) for fields in spans])
        for job_id, spans in received
    ]


def _trace_fields(trace: BufferedTrace) -> list[RecordFields] | None:
    try:
        return [_fields(record) for record in trace_records(job_spans(trace))]
    except Exception:  # the other traces of the batch go on
        throttled.warning("convert_trace", "otel_scorers: could not convert a trace's spans", exc_info=True)
        return None


#: Where `SpanRecord.events` is among its fields.
_EVENTS = 10


def _fields(record: SpanRecord) -> RecordFields:
    events = record.events
    return (
        record.trace_id,
        record.span_id,
        record.parent_span_id,
        record.name,
        record.kind,
        record.start_ns,
        record.end_ns,
        record.status,
        record.status_message,
        record.attributes,
        tuple((event.name, event.time_ns, event.attributes) for event in events) if events else (),
        record.resource,
        record.scope,
    )


def _record(fields: RecordFields) -> SpanRecord:
    record = SpanRecord(*fields)
    events: tuple[tuple[Any, ...], ...] = fields[_EVENTS]
    if events:  # sent as tuples
        record.events = tuple(SpanEvent(*event) for event in events)
    return record
