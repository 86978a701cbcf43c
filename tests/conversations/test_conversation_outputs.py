"""A conversation's scores reach every output the run scores reach: a console line each and the
OTLP output (evaluation spans linked to the turns' runs, and events, received by a real OTLP
receiver on loopback), from the in-process processor and from the sidecar, its scoring in a
thread or in a child process."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor
from otel_scorers.config import parse_config
from otel_scorers.otlp.score_export import OtlpScoreExport
from otel_scorers.span_record import OWN_SCOPE
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import RunningSidecar, encode, send_grpc, sidecar_document
from tests.spans import conversation_turn

#: Two turns end the conversation (`max_turns`): its scores follow the second turn's run.
CONVERSATIONS: dict[str, Any] = {
    "max_turns": 2,
    "tick_s": 0.05,
    "scorers": [{"type": "turns"}, {"type": "tool_error_rate"}],
}
LINE = re.compile(r"^score trace=(\w+) run=(\w+) agent=trip conversation=c-7 turns=2 scorer=(\w+) (\S+)")


def _turns(tracer: Any) -> None:
    conversation_turn(tracer, "c-7", "book a table")
    conversation_turn(tracer, "c-7", "for two, please")


def _turn_spans() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _turns(provider.get_tracer("agent"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def _conversation_lines(text: str) -> dict[str, tuple[str, str, str]]:
    """scorer -> (trace, run, first field after the scorer) of each line of the conversation's scores."""
    found = {}
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            found[match.group(3)] = (match.group(1), match.group(2), match.group(4))
    return found


def _received(capture: OtlpCapture) -> dict[str, Any]:
    """The conversation's evaluation spans, by scorer, as the receiver got them."""
    received = {}
    for _, scope, span in capture.spans():
        attributes = attrs(span.attributes)
        if scope == OWN_SCOPE and "gen_ai.conversation.id" in attributes:
            received[attributes["gen_ai.evaluation.name"]] = span
    return received


def _assert_received(capture: OtlpCapture, runs: list[ReadableSpan]) -> None:
    assert capture.wait_for(lambda: len(_received(capture)) == 2, timeout_s=30)
    spans = _received(capture)
    last = runs[-1].context
    for scorer, span in spans.items():
        attributes = attrs(span.attributes)
        assert attributes["gen_ai.conversation.id"] == "c-7"
        assert attributes["otel_scorers.conversation.turns"] == 2
        assert attributes["otel_scorers.conversation.ended_by"] == "max_turns"
        assert span.name == f"evaluate {scorer}"
        assert (int.from_bytes(span.trace_id, "big"), int.from_bytes(span.parent_span_id, "big")) == (
            last.trace_id,
            last.span_id,
        )
        linked = {
            (int.from_bytes(link.trace_id, "big"), int.from_bytes(link.span_id, "big")) for link in span.links
        }
        assert linked == {(run.context.trace_id, run.context.span_id) for run in runs}
    assert attrs(spans["turns"].attributes)["gen_ai.evaluation.score.value"] == 2.0
    # No tool calls in the conversation: the rate is skipped, and says so.
    assert (
        attrs(spans["tool_error_rate"].attributes)["otel_scorers.skipped"]
        == "the conversation made no tool calls"
    )
    assert capture.wait_for(
        lambda: (
            sum(
                1
                for record in capture.log_records()
                if attrs(record.attributes).get("gen_ai.conversation.id") == "c-7"
            )
            == 2
        )
    ), "one gen_ai.evaluation.result event per conversation score"


def _assert_printed(text: str, runs: list[ReadableSpan]) -> None:
    lines = _conversation_lines(text)
    last = runs[-1].context
    where = (f"{last.trace_id:032x}", f"{last.span_id:016x}")
    assert lines == {"turns": (*where, "value=2"), "tool_error_rate": (*where, 'skipped="the')}, text


def test_in_process_a_conversations_scores_are_printed_and_sent_over_otlp() -> None:
    settings = parse_config({"conversations": CONVERSATIONS}).scoring().conversations
    out = io.StringIO()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with OtlpCapture() as capture:
        processor = ScoringSpanProcessor(
            [],
            conversations=settings,
            console=out,
            export=OtlpScoreExport(capture.endpoint),
            tracer_provider=provider,
        )
        provider.add_span_processor(processor)
        _turns(provider.get_tracer("agent"))
        assert processor.force_flush()
        runs = [span for span in exporter.get_finished_spans() if span.name.startswith("invoke_agent")]
        _assert_received(capture, runs)
        processor.shutdown()
    _assert_printed(out.getvalue(), runs)


@pytest.mark.parametrize("scoring_process", [False, True], ids=["scoring-thread", "scoring-process"])
def test_in_the_sidecar_a_conversations_scores_are_printed_and_sent_over_otlp(
    scoring_process: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    spans = _turn_spans()
    runs = [span for span in spans if span.name.startswith("invoke_agent")]
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, console=True, scoring_process=scoring_process)
        document["conversations"] = CONVERSATIONS
        with RunningSidecar(document) as sidecar:
            send_grpc(sidecar.grpc_endpoint, encode(spans).SerializeToString())
            _assert_received(capture, runs)
    _assert_printed(capfd.readouterr().out, runs)
