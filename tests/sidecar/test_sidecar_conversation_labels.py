"""People's labels of whole conversations meet the scores of those conversations in the sidecar's
agreement join, wherever the conversations were scored: on the receiving process's scoring thread
or in a scoring process (whose conversation scores travel back to the join)."""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.labels.join_records import Label

from ..label_requests import label_request
from ..otlp_capture import OtlpCapture
from ..sidecar_harness import RunningSidecar, encode, metrics_text, sample, send_grpc, sidecar_document
from ..spans import conversation_turn
from ..waiting import wait_until

CONVERSATIONS = 10
#: Every conversation has two turns, so `turns` scores each 2; people count 3 in the last three.
PEOPLE_SAY = [2.0] * 7 + [3.0] * 3


def conversation_spans() -> list[Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    for index in range(CONVERSATIONS):
        conversation_turn(tracer, f"c-{index}", "book a table")
        conversation_turn(tracer, f"c-{index}", "for two, please")
    provider.shutdown()
    return list(exporter.get_finished_spans())


def conversation_labels() -> list[Label]:
    return [
        Label("turns", conversation_id=f"c-{index}", value=value, reviewer="ana")
        for index, value in enumerate(PEOPLE_SAY)
    ]


def turns_figure(sidecar: RunningSidecar, name: str) -> float:
    return sample(metrics_text(sidecar.http_url), name, gen_ai_evaluation_name="turns")


@pytest.mark.parametrize("scoring_process", [False, True], ids=["scoring-thread", "scoring-process"])
def test_labels_of_conversations_pair_with_the_conversations_scores(scoring_process: bool) -> None:
    with OtlpCapture() as capture:
        document = sidecar_document(capture.endpoint, scoring_process=scoring_process)
        document["conversations"] = {"max_turns": 2, "tick_s": 0.05, "scorers": [{"type": "turns"}]}
        document["labels"] = {"wait_s": 60}
        with RunningSidecar(document) as sidecar:
            posted = urllib.request.Request(
                f"{sidecar.http_url}/v1/logs",
                label_request(conversation_labels()),
                {"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(posted, timeout=10) as response:
                assert response.status == 200
            send_grpc(sidecar.grpc_endpoint, encode(conversation_spans()).SerializeToString())
            wait_until(
                lambda: turns_figure(sidecar, "otel_scorers_agreement_pairs_total") == CONVERSATIONS,
                60,
                lambda: (
                    f"{CONVERSATIONS} pairs, not {turns_figure(sidecar, 'otel_scorers_agreement_pairs_total')}"
                ),
            )
            difference = turns_figure(sidecar, "otel_scorers_agreement_mean_absolute_difference")
            assert difference == pytest.approx(0.3, abs=1e-12)
            assert turns_figure(sidecar, "otel_scorers_labels_unpaired_total") == 0.0
