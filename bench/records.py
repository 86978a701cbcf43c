"""Nanoseconds to make each of the records a run is built from, as the code makes them.

The records are imported from `otel_scorers`, so the script measures whichever tree is on
`PYTHONPATH`. Each run stores its fastest round per record under `--label` in a results file;
`--against` names another label in that file to print the ratio to. Alternating the trees
(`before`, `after`, `before`, `after`) and keeping each label's fastest round leaves out
the moments the machine was busy with something else:

    PYTHONPATH=<tree a> python bench/records.py --label before
    PYTHONPATH=<tree b> python bench/records.py --label after --against before

Per span: `SpanRecord` (and a `SpanEvent` per event); per model span a `ModelCall` with its
two `Messages`; per run span a `RunSpanContent`; per retrieved document a `Document`. Per
tool call a `ToolCall`, which run assembly then rebuilds with `dataclasses.replace` as it
matches results and errors to it; per run an `AgentRun` (rebuilt with `replace` when a binding
gives it context), its `TokenUsage` and `ContextItem`s; per scorer a `Score`.

Then what they add up to, per run of `bench/hot_path.py`'s four spans (an agent run, two model
calls, a tool call, with the GenAI message attributes): the run built from the SDK's spans, and
the built run scored by eleven quick checks.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import timeit
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hot_path import ELEVEN_CHECKS, inside_runs  # beside this script
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_scorers
from otel_scorers import model, span_record
from otel_scorers.conventions import base as conventions
from otel_scorers.pipeline.scoring_pipeline import score_run_now
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.selection.binding import bind

RECORDS: dict[str, Any] = {
    record.__name__: record
    for record in (
        span_record.SpanRecord,
        span_record.SpanEvent,
        conventions.Messages,
        conventions.ModelCall,
        conventions.RunSpanContent,
        conventions.Document,
        model.ToolCall,
        model.ContextItem,
        model.TokenUsage,
        model.Handoff,
        model.AgentRun,
        model.ScoreError,
        model.JudgeUsage,
        model.Score,
    )
}

#: What each record's line makes, written as the code makes it (positional where it is).
STATEMENTS = {
    "SpanRecord": "SpanRecord(1, 2, 3, 'chat gpt-4o-mini', 'client', 10, 20, 'unset', None, ATTRIBUTES, (),"
    " RESOURCE, 'opentelemetry.instrumentation.openai')",
    "SpanEvent": "SpanEvent('gen_ai.choice', 5, ATTRIBUTES)",
    "Messages": "Messages(ITEMS, captured=True)",
    "ModelCall": "ModelCall(span_id=2, start_ns=10, input=MESSAGES, output=MESSAGES, model='gpt-4o-mini',"
    " input_tokens=12, output_tokens=30)",
    "RunSpanContent": "RunSpanContent(agent_name='weather', input=MESSAGES, output=MESSAGES,"
    " model='gpt-4o-mini', input_tokens=12, output_tokens=30, conversation_id='c')",
    "Document": "Document('Paris is sunny.', 'doc-1')",
    "ToolCall": "ToolCall('get_weather', call_id='c1', arguments={'city': 'Paris'}, start_ns=1, end_ns=2)",
    "ToolCall via replace": "replace(CALL, result='sunny')",
    "ContextItem": "ContextItem('sunny', 'tool_result', 'get_weather', 4)",
    "TokenUsage": "TokenUsage(12, 30)",
    "Handoff": "Handoff('triage', 'weather', 7)",
    "AgentRun": "AgentRun(trace_id=1, span_id=2, agent_name='weather', input='What is the weather?',"
    " output='It is sunny.', tool_calls=(CALL,), input_messages=ITEMS, output_messages=ITEMS,"
    " models=('gpt-4o-mini',), start_ns=1, end_ns=2, status='ok', attributes=ATTRIBUTES,"
    " resource=RESOURCE, convention='genai', parent_span_id=None)",
    "AgentRun via replace": "replace(RUN, context=())",
    "ScoreError": "ScoreError('TimeoutError', 'the judge did not answer')",
    "JudgeUsage": "JudgeUsage('gpt-4o-mini', 1, 300, 20, 0.0001)",
    "Score": "Score('includes', value=1.0, label='pass', reason=None, duration_s=1e-06, start_ns=10)",
}
PER_RUN = {
    "run built from 4 spans": "build_runs([from_readable_span(span) for span in SPANS])",
    "run scored by 11 checks": "score_run_now(BINDINGS, BUILT)",
}


def recorded_run() -> list[Any]:
    """The SDK's spans of one of `bench/hot_path.py`'s runs."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inside_runs(provider, 4)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def namespace() -> dict[str, Any]:
    """What the statements name: the records by their own names, and the values they are given."""
    attributes = MappingProxyType({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"})
    items = ({"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]},)
    call = model.ToolCall("get_weather", call_id="c1", arguments={"city": "Paris"}, start_ns=1, end_ns=2)
    spans = recorded_run()
    (built,) = build_runs([span_record.from_readable_span(span) for span in spans])
    return {
        **RECORDS,
        "replace": replace,
        "build_runs": build_runs,
        "from_readable_span": span_record.from_readable_span,
        "score_run_now": score_run_now,
        "ATTRIBUTES": attributes,
        "RESOURCE": MappingProxyType({"service.name": "weather-agent"}),
        "ITEMS": items,
        "MESSAGES": conventions.Messages(items, captured=True),
        "CALL": call,
        "RUN": model.AgentRun(1, 2, "weather", "What's the weather?", "It is sunny.", tool_calls=(call,)),
        "SPANS": spans,
        "BUILT": built,
        "BINDINGS": [bind(check) for check in ELEVEN_CHECKS],
    }


def measure(statement: str, names: dict[str, Any], rounds: int, number: int) -> float:
    """The fastest of `rounds` rounds, in ns per record."""
    timer = timeit.Timer(statement, globals=names)
    return min(timer.repeat(rounds, number)) / number * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--label", required=True, help="the name this tree's numbers are stored under")
    parser.add_argument("--against", help="a label stored earlier: print this tree's ratio to it")
    parser.add_argument(
        "--results", type=Path, default=Path(tempfile.gettempdir()) / "otel-scorers-records.json"
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=100_000)
    args = parser.parse_args()

    stored: dict[str, dict[str, float]] = (
        json.loads(args.results.read_text()) if args.results.exists() else {}
    )
    best = stored.setdefault(args.label, {})
    names = namespace()
    for name, statement in STATEMENTS.items():
        took = measure(statement, names, args.rounds, args.number)
        best[name] = min(took, best.get(name, took))
    for name, statement in PER_RUN.items():  # a run costs a hundred times a record
        took = measure(statement, names, args.rounds, max(1, args.number // 100))
        best[name] = min(took, best.get(name, took))
    args.results.write_text(json.dumps(stored, indent=1))

    against: dict[str, Any] = stored.get(args.against, {}) if args.against else {}
    header = f"{'record':<23} {args.label:>10}" + (f" {args.against:>10}   ratio" if against else "")
    print(f"otel_scorers from {Path(otel_scorers.__file__).parent}")
    print(f"ns per record, fastest round of {args.rounds} x {args.number} (best over runs of each label)")
    print(header)
    for name in [*STATEMENTS, *PER_RUN]:
        line = f"{name:<23} {best[name]:10.0f}"
        if name in against:
            line += f" {against[name]:10.0f}   {best[name] / against[name]:.2f}"
        print(line)


if __name__ == "__main__":
    main()
