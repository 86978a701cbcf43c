"""The same framework traces, replayed span by span through a real TracerProvider with the
ScoringSpanProcessor attached: the in-process path must rebuild the same runs as the files.

Each recorded span is started and ended again with the SDK, in its recorded tree, scope, kind,
status and events. Attributes are set when the span starts, as most instrumentations do, except
for instrumentation scopes that write them only when the span ends (LangChain's and LlamaIndex's,
in OpenInference and OpenLLMetry; Mastra's bridge), which are replayed that way: their runs cannot
be seen starting. Mastra's bridge also starts each span under Mastra's own name and renames it when
it ends: its spans start under a name no convention knows. Replayed again with each run's marker
written just after its span starts, as the GenAI conventions allow, the runs are the same.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from bench.drifts import drifted
from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions import may_start_run
from otel_scorers.otlp.decode import parse_json_request, span_records
from otel_scorers.span_record import SpanRecord

from ..conftest import RunRecorder, Telemetry
from .test_fixture_runs import PENDING, RUNS, TRACES, assert_runs_match, case_id, params

ATTRIBUTES_AT_END = {
    "openinference.instrumentation.langchain",
    "opentelemetry.instrumentation.langchain",
    "openinference.instrumentation.llama_index",
    "opentelemetry.instrumentation.llamaindex",
    "@mastra/otel-bridge",
}
#: Scopes whose spans are renamed when they end, with the name they start under in the replay.
NAMED_AT_END = {"@mastra/otel-bridge": "mastra span"}
#: The Vercel AI SDK starts each span named by its operation (`ai.generateText`); a span
#: processor may rename it when it ends (OpenLLMetry JS's: `{functionId}.agent`, `chat {model}`).
AI_SDK_OPERATION = "ai.operationId"
KINDS = {
    "internal": SpanKind.INTERNAL,
    "server": SpanKind.SERVER,
    "client": SpanKind.CLIENT,
    "producer": SpanKind.PRODUCER,
    "consumer": SpanKind.CONSUMER,
}


def sdk_value(value: Any) -> Any:
    """OTLP key-value lists have no SDK attribute type: they travel as JSON, as SDKs write them."""
    if isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)
    ):
        return json.dumps(value)
    return value


def sdk_attributes(attributes: Any) -> dict[str, Any]:
    return {key: sdk_value(value) for key, value in attributes.items()}


def replay(provider: TracerProvider, records: list[SpanRecord], marked_after_start: bool = False) -> None:
    """`marked_after_start`: a span marked as a run by its attributes alone starts without
    them and has them written right after it starts, before its children start."""
    by_trace: dict[int, list[SpanRecord]] = defaultdict(list)
    # A span an exporter wrote twice (MLflow's Haystack autolog) ended once: it is replayed once.
    once = {(record.trace_id, record.span_id): record for record in records}
    for record in once.values():
        by_trace[record.trace_id].append(record)
    for spans in sorted(by_trace.values(), key=lambda spans: min(s.start_ns for s in spans)):
        ids = {span.span_id for span in spans}
        children: dict[int | None, list[SpanRecord]] = defaultdict(list)
        # Spans whose parent a trace with a root never got (an instrumentation that did not end
        # it): they are replayed in the trace, under a parent of that id that never ends. A trace
        # without its root (its parent in another trace) is replayed from its first spans.
        cut_off: dict[int, list[SpanRecord]] = defaultdict(list)
        rooted = any(span.parent_span_id is None for span in spans)
        for span in spans:
            if rooted and span.parent_span_id is not None and span.parent_span_id not in ids:
                cut_off[span.parent_span_id].append(span)
            else:
                children[span.parent_span_id if span.parent_span_id in ids else None].append(span)
        for root in sorted(children[None], key=lambda s: s.start_ns):
            replay_span(provider, root, children, None, marked_after_start, cut_off)
            cut_off = {}


def replay_span(
    provider: TracerProvider,
    record: SpanRecord,
    children: dict[int | None, list[SpanRecord]],
    parent: Any,
    marked_after_start: bool = False,
    cut_off: dict[int, list[SpanRecord]] | None = None,
) -> None:
    at_end = record.scope in ATTRIBUTES_AT_END
    attributes = sdk_attributes(record.attributes)
    start_name = NAMED_AT_END.get(record.scope or "", record.name)
    operation = record.attributes.get(AI_SDK_OPERATION)
    if isinstance(operation, str):  # the AI SDK's span, maybe renamed by a span processor at its end
        start_name = operation
    after_start = (
        marked_after_start
        and not at_end
        and bool(may_start_run(record.name, record.attributes))
        and not may_start_run(start_name, None)
    )
    span = provider.get_tracer(record.scope or "unknown").start_span(
        start_name,
        context=trace.set_span_in_context(parent) if parent is not None else None,
        kind=KINDS.get(record.kind, SpanKind.INTERNAL),
        attributes=None if at_end or after_start else attributes,
        start_time=record.start_ns,
    )
    if after_start:
        span.set_attributes(attributes)
    for missing, spans in (cut_off or {}).items():
        never_ended = NonRecordingSpan(
            SpanContext(span.get_span_context().trace_id, missing, False, TraceFlags(TraceFlags.SAMPLED))
        )
        for orphan in sorted(spans, key=lambda s: s.start_ns):
            replay_span(provider, orphan, children, never_ended, marked_after_start)
    for child in sorted(children[record.span_id], key=lambda s: s.start_ns):
        replay_span(provider, child, children, span, marked_after_start)
    if at_end:
        span.set_attributes(attributes)
    if start_name != record.name:
        span.update_name(record.name)
    for event in record.events:
        span.add_event(event.name, sdk_attributes(event.attributes), timestamp=event.time_ns)
    if record.status == "error":
        span.set_status(Status(StatusCode.ERROR, record.status_message))
    elif record.status == "ok":
        span.set_status(Status(StatusCode.OK))
    span.end(end_time=record.end_ns)


#: (framework, scenario) -> why the in-process path cannot rebuild that trace's runs as the files do.
IN_PROCESS_LIMITS: dict[tuple[str, str], str] = {
    (framework, path.name.removesuffix(".truth.json")): (
        "no span marks these runs: they are joined from model calls across traces, which the "
        "in-process door does not keep (docs/frameworks.md)"
    )
    for framework in (
        "openlit-ag2",
        "openlit-haystack",
        "openlit-llamaindex",
        "openllmetry-haystack",
        "loongsuite-langgraph",
    )
    for path in (TRACES / framework).glob("*.truth.json")
    # OpenLIT marks a Haystack pipeline's run with a span of its own: only its agents' are joined.
    if case_id(path) not in PENDING and case_id(path) != "openlit-haystack/in_pipeline"
} | {
    **{
        (framework, path.name.removesuffix(".truth.json")): (
            "the framework's vocabulary is read by inference (`inferred:<kind key>`), which the "
            "in-process processor does not run (docs/conventions.md)"
        )
        for framework in ("judgeval-openai", "honeyhive-openai")
        for path in (TRACES / framework).glob("*.truth.json")
        if case_id(path) not in PENDING
    },
    **{
        ("agentops-openai-agents", path.name.removesuffix(".truth.json")): (
            "the answer is on the OpenAI client's span, which AgentOps records beside the agent's "
            "spans under the trace's root: live it ends while the run is open, but a replay span by "
            "span, parent before sibling, ends it after the run, its trace already handed over"
        )
        for path in (TRACES / "agentops-openai-agents").glob("*.truth.json")
        if path.name != "responses_api.truth.json"
    },
    ("loongsuite-strands", "swarm_handoff"): (
        "each agent of the swarm is a trace of its own, joined by the handoff across traces only when "
        "read from files (docs/limits.md, runs joined across traces by a handoff)"
    ),
}


def in_process_params() -> list[Any]:
    marked = []
    for param in params(RUNS):
        path = param.values[0]
        reason = IN_PROCESS_LIMITS.get((path.parent.name, path.name.removesuffix(".truth.json")))
        marks = [*param.marks, pytest.mark.xfail(reason=reason, strict=True)] if reason else param.marks
        marked.append(pytest.param(path, id=param.id, marks=marks))
    return marked


@pytest.mark.parametrize("truth_path", in_process_params())
def test_in_process_runs_match_the_truth(truth_path: Path, telemetry: Telemetry) -> None:
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    trace_path = truth_path.with_name(truth_path.name.replace(".truth.json", ".json"))
    replay(telemetry.tracer_provider, list(span_records(parse_json_request(trace_path.read_bytes()))))
    # Every handoff was taken up as the spans came: none is left for the flush to give up.
    assert processor.assembler.waiting_traces == 0
    assert processor.force_flush(10_000)
    truth = json.loads(truth_path.read_text())
    assert_runs_match(truth, truth_path.parent.name, sorted(seen, key=lambda run: run.start_ns))


def trace_records(
    truth_path: Path, drift: str | None = None, directory: Path | None = None
) -> list[SpanRecord]:
    """The spans of the case's trace; with `drift`, of its copy after that version drift
    (`bench/drifts.py`), written in `directory`."""
    trace_path = truth_path.with_name(truth_path.name.replace(".truth.json", ".json"))
    if drift is not None:
        assert directory is not None, "a drifted copy needs a directory"
        trace_path, _ = drifted(trace_path, drift, directory)
    return list(span_records(parse_json_request(trace_path.read_bytes())))


def replayed_runs(
    truth_path: Path,
    telemetry: Telemetry,
    marked_after_start: bool,
    drift: str | None = None,
    directory: Path | None = None,
) -> list[Any]:
    """The runs the processor rebuilds from the case's trace replayed (after `drift`, if any)."""
    recorder = RunRecorder()
    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    records = trace_records(truth_path, drift, directory)
    replay(telemetry.tracer_provider, records, marked_after_start)
    assert processor.force_flush(10_000)
    return sorted(recorder.runs, key=lambda run: run.start_ns)


#: (framework, scenario) -> why, replayed with each run's marker written after its span starts,
#: the in-process path cannot see the run: no span starting inside it carries a marker's key as
#: it starts (every span of the trace is a run, or the run has no model or tool span).
MARKED_LATE_LIMITS: dict[tuple[str, str], str] = {
    ("ag2-openinference", "no_tool"): "both spans are runs, each marked after it starts, and nothing else",
    **{
        ("crewai-openllmetry-alone", path.name.removesuffix(".truth.json")): (
            "the workflow, task and agent spans are runs, each marked after it starts, and nothing else"
        )
        for path in (TRACES / "crewai-openllmetry-alone").glob("*.truth.json")
    },
    **{
        ("livekit-agents", path.name.removesuffix(".truth.json")): (
            "every span of a turn carries a GenAI key that marks a run (`gen_ai.operation.name`, "
            "`gen_ai.agent.name`), so each is replayed marked after it starts, and nothing else "
            "starts inside the turn"
        )
        for path in (TRACES / "livekit-agents").glob("*.truth.json")
    },
    **{
        ("openllmetry-openaijs", path.name.removesuffix(".truth.json")): (
            "each model call names its agent (`gen_ai.agent.name`, a run's marker with any value), so "
            "every span of the run is replayed marked after it starts, and nothing else starts inside it"
        )
        for path in (TRACES / "openllmetry-openaijs").glob("*.truth.json")
        if case_id(path) not in PENDING
    },
}


def marked_late_params() -> list[Any]:
    marked = []
    for param in in_process_params():
        path = param.values[0]
        reason = MARKED_LATE_LIMITS.get((path.parent.name, path.name.removesuffix(".truth.json")))
        marks = [*param.marks, pytest.mark.xfail(reason=reason, strict=True)] if reason else param.marks
        marked.append(pytest.param(path, id=param.id, marks=marks))
    return marked


@pytest.mark.parametrize("truth_path", marked_late_params())
def test_a_run_marked_after_its_span_started_is_read_in_process_as_from_files(
    truth_path: Path, telemetry: Telemetry
) -> None:
    """Instrumentations may write a run's marker (`gen_ai.operation.name`,
    `openinference.span.kind`...) after starting its span: its first step then says it."""
    runs = replayed_runs(truth_path, telemetry, marked_after_start=True)
    assert_runs_match(json.loads(truth_path.read_text()), truth_path.parent.name, runs)
