"""`otel-scorers runs --explain`: per trace, which reader claimed which span, what it read from
where, what the rebuilt runs miss, and why no run was found.

Nothing here is on a live path: a trace is read twice, once as run assembly reads it and once
span by span with attributes that note every key a reader looks up (`_NotingMapping`), so the
explanation is what the readers really did, code and described alike.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from otel_scorers.conventions import SpanRole, detect
from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.described_sources import PATH_MISSES
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.formats import mcp
from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.conventions.inferred_description import INFERRED
from otel_scorers.conventions.tool_listings import lists_tools
from otel_scorers.model import AgentRun
from otel_scorers.runs.call_chains import CallChains
from otel_scorers.runs.handed_traces import HandedTraces
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.span_roles import span_roles
from otel_scorers.span_record import OWN_SCOPE, SpanEvent, SpanRecord

#: Longest value shown for what was read.
_PREVIEW = 60
HOW_TO_DESCRIBE = (
    "describe its instrumentation in the conventions: section of a configuration "
    "(docs/conventions.md) and read again with `otel-scorers runs -c CONFIG --explain FILE`"
)


class _NotingMapping(Mapping[str, Any]):
    """A span's attributes that remember each key looked up, and whether it was there."""

    def __init__(self, inner: Mapping[str, Any], where: str, notes: dict[str, bool]) -> None:
        self._inner = inner
        self._where = where
        self._notes = notes

    def _note(self, key: str, found: bool) -> None:
        name = f"{self._where}{key}"
        self._notes[name] = self._notes.get(name, False) or found

    def __getitem__(self, key: str) -> Any:
        self._note(key, key in self._inner)
        return self._inner[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key, key in self._inner)
        return self._inner.get(key, default)

    def __contains__(self, key: object) -> bool:
        found = key in self._inner
        if isinstance(key, str):
            self._note(key, found)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._inner)

    # A reader that walks every attribute (flattened keys) reads none in particular.
    def keys(self) -> KeysView[str]:
        return self._inner.keys()

    def items(self) -> ItemsView[str, Any]:
        return self._inner.items()

    def values(self) -> ValuesView[Any]:
        return self._inner.values()

    def __len__(self) -> int:
        return len(self._inner)


@dataclass(slots=True)
class SpanReading:
    """One span as the readers saw it."""

    span: SpanRecord
    reader: str | None
    role: SpanRole | None
    #: Keys the reader looked up for the span's role, in order: found (True) or absent (False).
    read: dict[str, bool] = field(default_factory=dict)
    #: Sources of a described reader whose JSON `path` found nothing in the value read.
    path_misses: list[str] = field(default_factory=list)
    #: Why a span its reader claimed has no role, when a shared rule took it (a tools listing).
    why_no_role: str | None = None
    #: The span it is read under when its own parent never arrived (`unended_parents`).
    placed_under: int | None = None


@dataclass(slots=True)
class TraceExplanation:
    trace_id: int
    spans: list[SpanReading]
    runs: list[AgentRun]
    #: Runs no span marks, joined from this trace's model calls and later traces' (`call_chains`),
    #: each with the traces its calls are in; and the trace of the run this trace's calls joined.
    joined: list[tuple[AgentRun, tuple[int, ...]]] = field(default_factory=list)
    joined_into: int | None = None
    #: Runs of this trace that handed the conversation to an agent whose run is the root of a
    #: later trace (`handed_traces`), each with that run; and the run this trace's root run
    #: continues, handed to it from an earlier trace.
    handed_on: list[tuple[AgentRun, AgentRun]] = field(default_factory=list)
    handed_from: AgentRun | None = None
    #: The description of a vocabulary the trace's spans were read by, inferred from the trace.
    inferred: ConventionDescription | None = None

    @property
    def scopes(self) -> Counter[str]:
        return Counter(reading.span.scope or "(no scope)" for reading in self.spans)

    def why_no_run(self) -> str | None:
        """Why no run was found, or None when one was."""
        if self.runs:
            return None
        if self.spans and all(mcp.is_protocol_span(reading.span) for reading in self.spans):
            return (
                "only MCP protocol requests (an MCP session's, outside any agent's run): a tool call "
                "they serve is read in the run of the trace that made it"
            )
        unclaimed = [reading for reading in self.spans if reading.reader is None]
        roles = Counter(reading.role for reading in self.spans if reading.role is not None)
        if len(unclaimed) == len(self.spans):
            scopes = _printable(
                ", ".join(sorted({reading.span.scope or "(no scope)" for reading in unclaimed}))
            )
            return f"no reader knows these spans (scopes: {scopes}): to read them, {HOW_TO_DESCRIBE}"
        if roles and "run" not in roles:
            found = ", ".join(f"{count} {role}" for role, count in sorted(roles.items()))
            return (
                f"readers took spans as {found}, but none as an agent run: a run needs a span its "
                f"reader takes as one (for a described instrumentation, the run's when:)"
            )
        return f"the readers that claimed spans gave none a role; to read them, {HOW_TO_DESCRIBE}"


def explain_trace(spans: Sequence[SpanRecord]) -> TraceExplanation:
    readings = []
    # The roles run building gives: a reader's own, or one a span's place gives it (a working
    # workflow, an agent's unlisted operation around its steps, an agent graph under a tool).
    found = span_roles(spans)
    inferred = next(
        (
            c.description
            for c, _ in found.roles.values()
            if isinstance(c, DescribedConvention) and c.name.startswith(INFERRED)
        ),
        None,
    )
    for span in sorted(spans, key=lambda span: span.start_ns):
        if span.scope == OWN_SCOPE:
            continue
        given = found.roles.get(span.span_id)
        convention = given[0] if given is not None else found.unroled.get(span.span_id) or detect(span)
        role = given[1] if given is not None else None
        reading = SpanReading(span, convention.name if convention is not None else None, role)
        placed = found.by_id.get(span.span_id)
        if placed is not None and placed.parent_span_id != span.parent_span_id:
            reading.placed_under = placed.parent_span_id
        if (
            convention is not None
            and role is None
            and convention.role(span) == "tool"
            and lists_tools(span, convention.tool_call)
        ):
            reading.why_no_role = "a framework listing a server's tools, not a tool call"
        if convention is not None and role is not None:
            noted = _noting(span, reading.read)
            misses = PATH_MISSES.set(reading.path_misses)
            try:
                if role == "run":
                    convention.run_content(noted)
                elif role == "tool":
                    convention.tool_call(noted)
                elif role == "model":
                    convention.model_call(noted)
                else:
                    convention.documents(noted)
            except Exception as exc:  # an explanation never fails on a span it cannot read
                reading.read[f"(failed: {type(exc).__name__}: {exc})"] = False
            finally:
                PATH_MISSES.reset(misses)
        readings.append(reading)
    return TraceExplanation(spans[0].trace_id if spans else 0, readings, build_runs(spans), inferred=inferred)


def _noting(span: SpanRecord, notes: dict[str, bool]) -> SpanRecord:
    events = tuple(
        SpanEvent(event.name, event.time_ns, _NotingMapping(event.attributes, f"event {event.name}: ", notes))
        for event in span.events
    )
    return replace(span, attributes=_NotingMapping(span.attributes, "", notes), events=events)


def _printable(text: str) -> str:
    """Text from a trace, safe on a terminal: control characters shown escaped, not obeyed."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(within_depth(value), default=str).decode()
    text = text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."
    return _printable(text)


def _value(span: SpanRecord, key: str) -> Any:
    if key.startswith("event "):
        name, _, attribute = key[len("event ") :].partition(": ")
        event = next((event for event in span.events if event.name == name), None)
        return event.attributes.get(attribute) if event is not None else None
    return span.attributes.get(key)


def explanation_lines(explanation: TraceExplanation) -> Iterable[str]:
    scopes = ", ".join(
        f"{_printable(scope)} ({count})" for scope, count in sorted(explanation.scopes.items())
    )
    yield f"trace {explanation.trace_id:032x}: {len(explanation.spans)} spans; scopes: {scopes or 'none'}"
    for reading in explanation.spans:
        yield from _span_lines(reading)
    for run in explanation.runs:
        calls = len(run.tool_calls)
        yield (
            f"  run {_printable(run.agent_name or '(unnamed)')} (span {run.span_id:016x}, reader {run.convention}): "
            f"input {'read' if run.input is not None else 'missing'}, "
            f"output {'read' if run.output is not None else 'missing'}, "
            f"{calls} tool call{'' if calls == 1 else 's'}"
            + "".join(f"; {side} {_text_source(run, side)}" for side in sorted(run.text_sources))
            + (f"; missing: {', '.join(sorted(run.missing))}" if run.missing else "; nothing missing")
            + (
                f"; not recorded by the instrumentation: {', '.join(sorted(run.unrecorded))}"
                if run.unrecorded
                else ""
            )
        )
    if explanation.inferred is not None:
        # What was inferred, as the description that reads it: the sidecar reads it live as is,
        # the processor keeps only traces a known reader's span opens, so it is scored there
        # once described.
        written = orjson.dumps(explanation.inferred.model_dump(exclude_none=True, exclude_defaults=True))
        yield (
            f"  read by the vocabulary the trace shows, inferred as this description (to score it in "
            f"process too, add it to conventions: with a name of yours): {_printable(written.decode())}"
        )
    for run, traces in explanation.joined:
        yield (
            f"  run {_printable(run.agent_name or '(unnamed)')} (span {run.span_id:016x}) joined from the "
            f"model calls of {len(traces)} trace{'' if len(traces) == 1 else 's'} ("
            + ", ".join(f"{trace:032x}" for trace in traces)
            + "): no span marks it, but each call continues the last with its tools' results, offers "
            f"the model tools, sits in an agent's span, or was given an earlier agent run's instructions; input {'read' if run.input is not None else 'missing'}, "
            f"output {'read' if run.output is not None else 'missing'}, {len(run.tool_calls)} tool call(s)"
            + (f"; missing: {', '.join(sorted(run.missing))}" if run.missing else "; nothing missing")
        )
    for run, follower in explanation.handed_on:
        yield (
            f"  run {_printable(run.agent_name or '(unnamed)')} (span {run.span_id:016x}) hands the conversation "
            f"to {_printable(follower.agent_name or '(unnamed)')}, whose run (span {follower.span_id:016x}) is "
            f"the root of trace {follower.trace_id:032x}: read as one run with it (a handoff across traces)"
        )
    if explanation.handed_from is not None:
        handing = explanation.handed_from
        yield (
            f"  its run goes on the run of {_printable(handing.agent_name or '(unnamed)')} in trace "
            f"{handing.trace_id:032x}, which handed the conversation to it: not a run of its own"
        )
    if explanation.joined_into is not None:
        yield f"  no run of its own: its model calls go on the run joined in trace {explanation.joined_into:032x}"
        return
    why = explanation.why_no_run()
    if why is not None and not explanation.joined:
        yield f"  no run found: {why}"


def _span_lines(reading: SpanReading) -> Iterable[str]:
    """One span's lines: who read it in what role, what it was read from, what it lacks."""
    span = reading.span
    claimed = (
        f"{reading.reader}, {reading.role}"
        if reading.role is not None
        else (f"{reading.reader}, no role" if reading.reader is not None else "no reader")
    )
    if reading.why_no_role is not None:
        claimed += f" ({reading.why_no_role})"
    if reading.placed_under is not None:
        claimed += f" (its parent never arrived: read under span {reading.placed_under:016x})"
    yield f"  span {span.span_id:016x} {span.name!r} [{_printable(span.scope or 'no scope')}]: {claimed}"
    found = [key for key, present in reading.read.items() if present]
    absent = [key for key, present in reading.read.items() if not present]
    for key in found:
        yield f"      read   {_printable(key)} = {_preview(_value(span, key))}"
    if absent:
        yield f"      absent {_printable(', '.join(absent))}"
    for miss in dict.fromkeys(reading.path_misses):
        yield f"      no match {_printable(miss)}"


def _text_source(run: AgentRun, side: str) -> str:
    """Where the run's derived `side` text came from, or why it could not be found."""
    note = run.text_sources[side]
    return note if getattr(run, side) is not None else f"not found: {note}"


def explain_files(paths: Iterable[Path], problems: list[InputProblem]) -> Iterator[TraceExplanation]:
    """Every trace in the files (spans of one trace may be in several), explained."""
    traces: dict[int, list[SpanRecord]] = defaultdict(list)
    for path in paths:
        for span in read_spans(path, problems):
            traces[span.trace_id].append(span)
    explanations = {trace_id: explain_trace(spans) for trace_id, spans in traces.items()}
    joined: list[tuple[AgentRun, tuple[int, ...]]] = []
    chains = CallChains(on_joined=lambda run, traces: joined.append((run, traces)))
    for trace_id, explanation in explanations.items():
        if not explanation.runs:
            for _ in chains.add(span_roles(traces[trace_id])):
                pass
    for _ in chains.rest():
        pass
    for run, joined_traces in joined:
        explanations[joined_traces[0]].joined.append((run, joined_traces))
        for later in joined_traces[1:]:
            explanations[later].joined_into = joined_traces[0]
    _handed_across(explanations, traces)
    yield from explanations.values()


def _handed_across(
    explanations: Mapping[int, TraceExplanation], traces: Mapping[int, list[SpanRecord]]
) -> None:
    """Mark the runs joined across traces by a handoff (`handed_traces`), as `runs` joins them."""

    def joined(handing: AgentRun, follower: AgentRun) -> None:
        explanations[handing.trace_id].handed_on.append((handing, follower))
        explanations[follower.trace_id].handed_from = handing

    handed = HandedTraces(on_joined=joined)
    with_runs = [explanation for explanation in explanations.values() if explanation.runs]
    for explanation in sorted(with_runs, key=lambda item: min(run.start_ns for run in item.runs)):
        for _ in handed.add(traces[explanation.trace_id], explanation.runs):
            pass
    for _ in handed.rest():
        pass
