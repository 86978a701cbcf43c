"""Two sidecars behind a router that routes turn records by conversation, as the Collector's
load-balancing exporter does: each conversation is scored once, by one sidecar, with all its turns,
though its turns were rebuilt by both."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from otel_scorers.conversations.counts import ConversationCounts
from otel_scorers.demos.example_agent import ScriptedRun

from ..conversation_router import LoadBalancingRouter
from ..otlp_capture import attrs
from ..sidecar_harness import (
    RunningSidecar,
    agent_spans,
    encode,
    free_port,
    is_run,
    send_grpc,
    sidecar_document,
)
from ..waiting import wait_until


def counts_of(sidecar: RunningSidecar) -> ConversationCounts:
    conversations = sidecar.service.conversations
    assert conversations is not None and conversations.counts is not None
    return conversations.counts


def turns_received(sidecars: list[RunningSidecar]) -> int:
    return sum(counts_of(side).totals.get("turn_received", 0) for side in sidecars)


@pytest.mark.parametrize("scoring_process", [False, True], ids=["scoring-thread", "scoring-process"])
def test_two_sidecars_behind_the_router_score_each_conversation_once_with_all_its_turns(
    scoring_process: bool,
) -> None:
    generator = random.Random(7)
    lengths = {f"chat-{n}": generator.randint(2, 6) for n in range(24)}
    scripts = [
        ScriptedRun(f"turn {turn} of {conversation}", (), f"answer {turn}", conversation_id=conversation)
        for turn in range(max(lengths.values()))
        for conversation, length in lengths.items()
        if turn < length
    ]
    spans = agent_spans(scripts)
    ports = [free_port(), free_port()]
    backends = [f"127.0.0.1:{port}" for port in ports]
    conversations = {
        "idle_timeout_s": 1.0,
        "tick_s": 0.1,
        "turn_records": True,
        "scorers": [{"type": "turns"}],
    }
    with LoadBalancingRouter(backends) as router:
        documents = []
        for port in ports:
            document = sidecar_document(router.endpoint, grpc={"port": port}, scoring_process=scoring_process)
            document.pop("scorers")
            document["conversations"] = conversations
            documents.append(document)
        with RunningSidecar(documents[0]) as first, RunningSidecar(documents[1]) as second:
            sidecars = [first, second]
            # Traces go to the sidecars by trace id (the trace-level load balancing), so most
            # conversations have turns rebuilt by both.
            rebuilt_by: dict[str, set[int]] = {}
            for trace_id in sorted({span.context.trace_id for span in spans}):
                trace = [span for span in spans if span.context.trace_id == trace_id]
                index = trace_id % 2
                send_grpc(sidecars[index].grpc_endpoint, encode(trace).SerializeToString())
                conversation = next(str(s.attributes["gen_ai.conversation.id"]) for s in trace if is_run(s))
                rebuilt_by.setdefault(conversation, set()).add(index)
            assert sum(len(sides) == 2 for sides in rebuilt_by.values()) >= 5

            # Every turn has reached the sidecar its conversation is routed to, and each
            # conversation has been scored.
            wait_until(
                lambda: (
                    turns_received(sidecars) >= len(scripts)
                    and len(router.evaluation_spans()) >= len(lengths)
                ),
                60,
                lambda: f"{len(scripts)} turns received and {len(lengths)} conversations scored",
            )
        # Both sidecars have stopped: what was still open was scored then (a conversation that got
        # a turn after its score would be scored twice), and every export was flushed.
        scored = [attrs(span.attributes) for span in router.evaluation_spans()]
        by_sidecar = [counts_of(side).totals.get("scored", 0) for side in sidecars]
        assert turns_received(sidecars) == len(scripts)  # each turn record, once

    counts = Counter(str(a["gen_ai.conversation.id"]) for a in scored)
    assert counts == Counter(dict.fromkeys(lengths, 1))  # every conversation, each once
    for a in scored:
        assert a["gen_ai.evaluation.score.value"] == lengths[str(a["gen_ai.conversation.id"])]  # all turns
    assert all(len(backends_for) == 1 for backends_for in router.routed.values())
    routed_to = Counter(next(iter(b)) for b in router.routed.values())
    assert by_sidecar == [routed_to[backends[0]], routed_to[backends[1]]]  # each by the one routed to
    assert all(by_sidecar)  # both sidecars had conversations to score


def test_a_sidecar_takes_turn_records_over_http_and_reports_a_malformed_one() -> None:
    import urllib.request

    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from otel_scorers.conversation_turns import Turn
    from otel_scorers.conversations.turn_logs import TurnLogWriter

    from ..otlp_capture import OtlpCapture

    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    writer = TurnLogWriter(provider)
    for n in (1, 2, 3):
        writer.emit(Turn("web-1", 0xAB, n, start_ns=n, end_ns=n + 1, input=f"q{n}", output=f"a{n}"))
    request = encode_logs(logs.get_finished_logs())
    bad = request.resource_logs[0].scope_logs[0].log_records[2]
    for attribute in bad.attributes:
        if attribute.key == "otel_scorers.turn.end_ns":
            attribute.value.string_value = "later"
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, scoring_process=False)
        document.pop("scorers")
        document["conversations"] = {
            "idle_timeout_s": 0.5,
            "tick_s": 0.1,
            "turn_records": True,  # conversations come routed, as turn records
            "scorers": [{"type": "turns"}],
        }
        with RunningSidecar(document) as sidecar:
            posted = urllib.request.Request(
                f"{sidecar.http_url}/v1/logs",
                data=request.SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(posted, timeout=10) as reply:
                response = ExportLogsServiceResponse.FromString(reply.read())
            assert response.partial_success.rejected_log_records == 1
            assert "otel_scorers.turn.end_ns" in response.partial_success.error_message
            assert capture.wait_for(lambda: any(s.name == "evaluate turns" for s in capture.span_list()))
        (span,) = [s for s in capture.span_list() if s.name == "evaluate turns"]
        values = attrs(span.attributes)
        assert values["gen_ai.conversation.id"] == "web-1" and values["gen_ai.evaluation.score.value"] == 2
        assert [link.span_id for link in span.links] == [(1).to_bytes(8, "big"), (2).to_bytes(8, "big")]


@pytest.mark.parametrize("scoring_process", [False, True], ids=["scoring-thread", "scoring-process"])
def test_one_sidecar_scores_the_conversations_of_the_traces_it_receives(scoring_process: bool) -> None:
    from ..otlp_capture import OtlpCapture

    scripts = [
        ScriptedRun(f"turn {turn}", (), f"answer {turn}", conversation_id=conversation)
        for turn in range(3)
        for conversation in ("solo-a", "solo-b")
    ]
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, scoring_process=scoring_process)
        document["conversations"] = {"idle_timeout_s": 0.5, "tick_s": 0.1, "scorers": [{"type": "turns"}]}
        with RunningSidecar(document) as sidecar:
            send_grpc(sidecar.grpc_endpoint, encode(agent_spans(scripts)).SerializeToString())

            def scored() -> list[dict[str, object]]:
                return [attrs(s.attributes) for s in capture.span_list() if s.name == "evaluate turns"]

            assert capture.wait_for(lambda: len(scored()) == 2, timeout_s=60)
    assert {(a["gen_ai.conversation.id"], a["gen_ai.evaluation.score.value"]) for a in scored()} == {
        ("solo-a", 3),
        ("solo-b", 3),
    }
