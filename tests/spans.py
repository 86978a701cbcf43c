"""Hand-built SpanRecords for the tests (finished spans of one trace, ids and times in order), and
conversation turns as an agent run ends them through a real tracer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from otel_scorers.model import AgentRun
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.span_record import SpanEvent, SpanRecord

TRACE = 0x5B8EFFF798038103D269B633813FC60C
_ids = itertools.count(1)
_clock = itertools.count(1_000, 1_000)


def span(
    name: str,
    parent: SpanRecord | None = None,
    *,
    status: str = "unset",
    events: tuple[SpanEvent, ...] = (),
    scope: str = "agent",
    status_message: str | None = None,
    ended: bool = True,
    **attributes: Any,
) -> SpanRecord:
    """A span, finished unless `ended=False`; `a__b` keyword names stand for the attribute `a.b`."""
    start = next(_clock)
    return SpanRecord(
        trace_id=TRACE,
        span_id=next(_ids),
        parent_span_id=parent.span_id if parent else None,
        name=name,
        start_ns=start,
        end_ns=start + 500 if ended else None,
        status=status,  # type: ignore[arg-type]
        status_message=status_message,
        attributes={key.replace("__", "."): value for key, value in attributes.items()},
        events=events,
        scope=scope,
    )


def event(name: str, **attributes: Any) -> SpanEvent:
    return SpanEvent(name, next(_clock), {key.replace("__", "."): value for key, value in attributes.items()})


def only_run(spans: list[SpanRecord]) -> AgentRun:
    (run,) = build_runs(spans)
    return run


def conversation_turn(
    tracer: Any, conversation_id: str, text: str, answer: str = "ok", **attributes: Any
) -> None:
    """One GenAI `invoke_agent` run of the `trip` agent in conversation `conversation_id`: the
    user says `text`, the agent answers `answer`; `attributes` go on the run span too."""
    with tracer.start_as_current_span(
        "invoke_agent trip",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "trip",
            "gen_ai.conversation.id": conversation_id,
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": text}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
            **attributes,
        },
    ):
        pass


def conversations_file(path: Path, conversations: dict[str, list[tuple[str, list[bool]]]]) -> Path:
    """OTLP/JSON of real SDK spans: per conversation id, its turns, each the user's text and its
    tool calls (True for a call that failed)."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for conversation_id, turns in conversations.items():
        for text, calls in turns:
            with tracer.start_as_current_span(
                "invoke_agent trip",
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "trip",
                    "gen_ai.conversation.id": conversation_id,
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": text}]}]
                    ),
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
                    ),
                },
            ):
                for n, failed in enumerate(calls):
                    with tracer.start_as_current_span(
                        "execute_tool lookup",
                        attributes={
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "lookup",
                            "gen_ai.tool.call.id": f"call-{n}",
                        },
                    ) as tool:
                        if failed:
                            tool.set_status(StatusCode.ERROR, "lookup failed")
    write_traces(path, exporter.get_finished_spans())
    return path
