"""One received request sorted out before anything is buffered: the spans of traces some binding
may sample, grouped by trace id, their run spans, the spans rejected as invalid, and what they
take in memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from otel_scorers.otlp.decode import SPAN_ID_BYTES, invalid_span_ids, invalid_trace_id
from otel_scorers.otlp.trace_id_schema import TraceIdRequest, full_span
from otel_scorers.selection.sampling import randomness, threshold_for
from otel_scorers.sidecar.otlp_spans import Batch, Origin, OtlpSpan
from otel_scorers.sidecar.span_marks import NAMES_A_RUN, RUN, refresh, span_mark
from otel_scorers.span_record import OWN_SCOPE

#: What a buffered request takes in memory: this many times its encoded size (upb's parsed
#: message)...
PARSED_SIZE_FACTOR = 1.3


#: ...plus this much per span kept (its Python wrapper, `OtlpSpan`, list and dict entries).
#: Measured by RSS (tests/sidecar/test_sidecar_memory.py): 1,510 bytes a span for example-agent spans
#: (585 bytes encoded), 810 for bare spans (36 bytes encoded).
SPAN_OVERHEAD_BYTES = 760


_new_item = object.__new__
_ZERO_SPAN_ID = bytes(SPAN_ID_BYTES)

#: Copy sampled spans out of a request when fewer than 1 in this many of its spans are kept.
_DETACH_BELOW = 4


#: Protobuf requests are read for their spans' trace ids first (`TraceIdRequest`) when no
#: binding samples more than this share of traces: a sampled span is then parsed on its own,
#: which costs a few times its share of parsing the whole request.
TRACE_IDS_FIRST_UP_TO_RATE = 1 / 8


@dataclass(slots=True, eq=False)
class Scan:
    """One request sorted out before anything is buffered: the spans of traces some binding may
    sample, grouped by trace id, their run spans, and the spans rejected as invalid."""

    batch: Batch
    groups: dict[bytes, list[OtlpSpan]] = field(default_factory=dict)
    runs: dict[bytes, list[OtlpSpan]] = field(default_factory=dict)
    total: int = 0
    rejected: list[tuple[int, int, int]] = field(default_factory=list)
    problem: str | None = None
    #: Where each run span sits in the request (resource, scope, span index), by id of its item.
    run_positions: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    #: The kept spans were copied out of the request, which then holds no buffered span.
    detached: bool = False
    #: Traces a span of which carries a kind key a vocabulary may be inferred from, by trace
    #: id: the most any of those spans says (`span_marks.NAMES_A_RUN`, `NAMES_A_CALL`).
    kinds: dict[bytes, int] = field(default_factory=dict)
    #: Spans whose kind key names a run (`span_marks.NAMES_A_RUN`), by trace id: the runs of a
    #: vocabulary inferred from the trace, held back in inline mode as run spans are (their
    #: positions in `run_positions`).
    named_runs: dict[bytes, list[OtlpSpan]] = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return self.total - len(self.rejected)

    def take_out(self, trace_id: bytes) -> int:
        """Leave a trace's spans out of what is buffered; how many they were."""
        group = self.groups.pop(trace_id)
        self.kinds.pop(trace_id, None)
        for item in (*self.runs.pop(trace_id, ()), *self.named_runs.pop(trace_id, ())):
            self.run_positions.pop(id(item), None)
        return len(group)


def reads_trace_ids_first(min_threshold: int) -> bool:
    """Whether requests sorted out against `min_threshold` are read for their trace ids first."""
    return min_threshold >= threshold_for(TRACE_IDS_FIRST_UP_TO_RATE)


def scan(request: ExportTraceServiceRequest | Any, size: int, min_threshold: int) -> Scan:
    """Sort one request's spans out, deciding sampling from the trace id alone: a span whose
    trace no binding can sample costs a dict lookup; only sampled spans are looked into.

    `request` is an `ExportTraceServiceRequest` or a `TraceIdRequest` (`otlp/trace_id_schema.py`),
    whose sampled spans are parsed in full here, one by one: a sampled span that does not parse is
    rejected alone, as one that a whole request's parse would have left out (`otlp/salvage.py`)."""
    by_ids = isinstance(request, TraceIdRequest)
    result = Scan(Batch(int(size * PARSED_SIZE_FACTOR)))
    groups = result.groups
    decisions: dict[bytes, bool] = {}
    total = 0
    refresh()
    for r_index, resource_spans in enumerate(request.resource_spans):
        resource = resource_spans.resource
        for s_index, scope_spans in enumerate(resource_spans.scope_spans):
            spans = scope_spans.spans
            total += len(spans)
            if scope_spans.scope.name == OWN_SCOPE:
                continue  # our own evaluation spans, come back through the collector
            origin: Origin | None = None
            # Sliced: walking a repeated protobuf field to its end raises an IndexError upb formats.
            for p_index, span in enumerate(spans[:]):
                trace_id = span.trace_id
                sampled = decisions.get(trace_id)
                if sampled is None:
                    invalid = invalid_trace_id(trace_id)
                    if invalid is not None:
                        _reject(result, (r_index, s_index, p_index), span, invalid, by_ids)
                        continue
                    sampled = randomness(int.from_bytes(trace_id, "big")) >= min_threshold
                    decisions[trace_id] = sampled
                if not sampled:
                    continue  # the common case at low sampling rates: nothing else is read
                if by_ids:
                    span = _parsed(result, span, (r_index, s_index, p_index))
                    if span is None:
                        continue
                span_id, parent = span.span_id, span.parent_span_id
                # `invalid_span_ids` asked only of a span that fails its checks made in line.
                if (
                    len(span_id) != SPAN_ID_BYTES
                    or span_id == _ZERO_SPAN_ID
                    or (parent and len(parent) != SPAN_ID_BYTES)
                ) and _ids_rejected(result, span, (r_index, s_index, p_index)):
                    continue
                if origin is None:
                    origin = Origin(resource, scope_spans.scope, scope_spans.schema_url, result.batch)
                # Made through its slots: calling the class costs about 1,000 instructions more.
                item = _new_item(OtlpSpan)
                item.span, item.origin = span, origin
                groups.setdefault(trace_id, []).append(item)
                mark = span_mark(span)
                if mark:
                    _note_mark(result, mark, trace_id, item, (r_index, s_index, p_index))
    result.total = total
    _account(result, by_ids)
    return result


def _parsed(result: Scan, span: Any, position: tuple[int, int, int]) -> Any:
    """A sampled span read by its trace id alone, parsed in full; None, rejected, if it does not
    parse."""
    try:
        return full_span(span)
    except DecodeError as exc:
        result.rejected.append(position)
        result.problem = result.problem or f"a span does not parse: {exc}"
        return None


def _ids_rejected(result: Scan, span: Any, position: tuple[int, int, int]) -> bool:
    """Whether a span whose ids failed the checks made in line is rejected for them."""
    invalid = invalid_span_ids(span.span_id, span.parent_span_id)
    if invalid is None:
        return False
    _reject(result, position, span, invalid, False)
    return True


def _note_mark(
    result: Scan, mark: int, trace_id: bytes, item: OtlpSpan, position: tuple[int, int, int]
) -> None:
    """Keep a marked span where its mark says: a run's span, or the strongest kind its trace has."""
    if mark == RUN:
        result.runs.setdefault(trace_id, []).append(item)
        result.run_positions[id(item)] = position
        return
    if mark > result.kinds.get(trace_id, 0):
        result.kinds[trace_id] = mark
    if mark == NAMES_A_RUN:
        result.named_runs.setdefault(trace_id, []).append(item)
        result.run_positions[id(item)] = position


def _account(result: Scan, by_ids: bool) -> None:
    """Count the kept spans' memory, and copy them out of the request when that lets it go."""
    kept = sum(len(group) for group in result.groups.values())
    result.batch.size += kept * SPAN_OVERHEAD_BYTES
    if by_ids:
        # The spans kept were parsed on their own; their resources and scopes are copied out
        # too, so that nothing buffered points into the request.
        if kept:
            detach(result, spans_too=False)
        result.detached = True
    elif kept and kept * _DETACH_BELOW < result.total:
        detach(result)


def reject_unparsed(request: ExportTraceServiceRequest | Any, result: Scan) -> int:
    """Reject the spans of a `TraceIdRequest` that do not parse in full and were not looked into
    (those of traces no binding samples): how many. Inline mode's answer to a downstream that
    refuses a request it cannot parse, as a whole parse would have left them out at once."""
    if not isinstance(request, TraceIdRequest):
        return 0
    rejected = set(result.rejected)
    found = 0
    for r_index, resource_spans in enumerate(request.resource_spans):
        for s_index, scope_spans in enumerate(resource_spans.scope_spans):
            for p_index, span in enumerate(scope_spans.spans):
                if (r_index, s_index, p_index) in rejected:
                    continue
                try:
                    full_span(span)
                except DecodeError as exc:
                    result.rejected.append((r_index, s_index, p_index))
                    result.problem = result.problem or f"a span does not parse: {exc}"
                    found += 1
    return found


def _reject(result: Scan, position: tuple[int, int, int], span: Any, what: str, by_ids: bool) -> None:
    result.rejected.append(position)
    if result.problem is None:
        try:
            name = full_span(span).name if by_ids else span.name
        except DecodeError:
            name = "?"
        result.problem = f"span {name!r} has {what}"


def detach(result: Scan, spans_too: bool = True) -> None:
    """Copy the few sampled spans out of the request (their resources and scopes alone when
    `spans_too` is false: the spans were parsed on their own), so that the rest of it can be
    freed now instead of staying in memory, whole, for as long as one of its spans is buffered."""
    origins: dict[int, Origin] = {}
    size = 0
    batch = Batch(0)
    for group in result.groups.values():
        for item in group:
            origin = origins.get(id(item.origin))
            if origin is None:
                resource = Resource()
                resource.CopyFrom(item.origin.resource)
                scope = InstrumentationScope()
                scope.CopyFrom(item.origin.scope)
                origin = origins[id(item.origin)] = Origin(resource, scope, item.origin.schema_url, batch)
                size += resource.ByteSize() + scope.ByteSize()
            span = item.span
            if spans_too:
                span = type(item.span)()  # a `Span`, or a `BytesSpan` (`span_bytes_schema`)
                span.CopyFrom(item.span)
                item.span = span
            size += span.ByteSize()
            item.origin = origin
    kept = sum(len(group) for group in result.groups.values())
    batch.size = int(size * PARSED_SIZE_FACTOR) + kept * SPAN_OVERHEAD_BYTES
    result.batch = batch
    result.detached = True
