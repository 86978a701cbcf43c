"""Scale-out through the real Collector: the shipped `loadbalancing` configs (a static resolver on
loopback in place of DNS) in front of sidecar replicas, each `otel-scorers serve` in its own
process. Every run is scored exactly once; every conversation is closed and scored once, by one
replica, with all its turns; a replica killed mid-stream loses only what it held, counted and
bounded, and what the Collector queued for it meanwhile is scored when it is back; and a replica
added moves about 1/N of the keys, all of them to the new one."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from otel_scorers.demos.example_agent import ScriptedRun
from otel_scorers.span_record import OWN_SCOPE
from tests.collector.programs import Collector, loopback, on_loopback, shipped
from tests.otlp_capture import OtlpCapture, attrs
from tests.sidecar_harness import ServeProcess, agent_spans, is_run, metrics_text, sample
from tests.waiting import wait_until

pytestmark = pytest.mark.collector

REPLICAS = 3
#: How long no new score must come before the scores are taken as settled.
QUIET_S = 10.0


def static(config: dict[str, Any], replicas: Sequence[str]) -> dict[str, Any]:
    """Every `loadbalancing` exporter of a shipped config resolving `replicas` statically."""
    for name, exporter in config["exporters"].items():
        if name.split("/")[0] == "loadbalancing":
            exporter["resolver"] = {"static": {"hostnames": list(replicas)}}
    return config


def replica(
    tmp_path: Path, address: str, export_to: str, name: str, decision_wait_s: float = 0.2
) -> ServeProcess:
    document = {
        "scorers": [{"type": "no_tool_errors"}],
        "conversations": {
            # A conversation closes once no turn came for this long: the turn records of one
            # conversation come from several replicas through the Collector, seconds apart on a
            # loaded machine, and one closed early would be scored again by its next turn.
            "idle_timeout_s": 8.0,
            "tick_s": 0.1,
            "turn_records": True,
            "scorers": [{"type": "turns"}],
        },
        "sidecar": {
            "grpc": {"host": "127.0.0.1", "port": int(address.rsplit(":", 1)[1])},
            "http": {"host": "127.0.0.1", "port": 0},
            "decision_wait_s": decision_wait_s,
            "scoring_process": False,
            "shutdown_timeout_s": 5,
            "export": {"endpoint": f"http://{export_to}", "batch_delay_s": 0.1, "metric_interval_s": 5},
        },
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document))
    serve = ServeProcess(path)
    serve.grpc_port(90)
    return serve


class ScaledOut:
    """A capture playing the trace backend, the Collector with `config_name`, and the replicas."""

    def __init__(
        self, tmp_path: Path, config_name: str, backend: OtlpCapture, decision_wait_s: float = 0.2
    ) -> None:
        self.tmp_path = tmp_path
        self.agent_in, self.scores_in = loopback(), loopback()
        self.addresses = [loopback() for _ in range(REPLICAS)]
        self.replicas = [
            replica(tmp_path, address, self.scores_in, f"replica-{n}")
            for n, address in enumerate(self.addresses)
        ]
        config = on_loopback(
            shipped(config_name),
            {
                "otlp.grpc": self.agent_in,
                "otlp/scores.grpc": self.scores_in,
                "otlp/jaeger": backend.endpoint.removeprefix("http://"),
            },
        )
        self.collector = Collector(static(config, self.addresses), tmp_path)
        self.backend = backend

    def send(self, spans: Sequence[ReadableSpan]) -> None:
        exporter = OTLPSpanExporter(endpoint=self.agent_in, insecure=True)
        try:
            assert exporter.export(spans) == SpanExportResult.SUCCESS
        finally:
            exporter.shutdown()

    def evaluations(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """The `evaluate <name>` spans that reached the backend, with their resources."""
        return [
            (resource, span)
            for resource, scope, span in self.backend.spans()
            if scope == OWN_SCOPE and span.name == f"evaluate {name}"
        ]

    def stop(self) -> None:
        self.collector.stop()
        for serve in self.replicas:
            serve.stop()


@pytest.fixture
def backend() -> Iterator[OtlpCapture]:
    with OtlpCapture() as capture:
        yield capture


def test_three_replicas_score_every_run_once_and_every_conversation_once_by_one_replica(
    tmp_path: Path, backend: OtlpCapture
) -> None:
    generator = random.Random(11)
    lengths = {f"chat-{n}": generator.randint(2, 4) for n in range(12)}
    scripts = [
        ScriptedRun(f"turn {turn} of {conversation}", (), f"answer {turn}", conversation_id=conversation)
        for turn in range(max(lengths.values()))
        for conversation, length in lengths.items()
        if turn < length
    ]
    spans = agent_spans(scripts)
    runs = {span.context.span_id.to_bytes(8, "big") for span in spans if is_run(span)}
    stack = ScaledOut(tmp_path, "conversations.yaml", backend)
    try:
        stack.send(spans)
        wait_until(
            lambda: (
                len(stack.evaluations("no_tool_errors")) >= len(runs)
                and len(stack.evaluations("turns")) >= len(lengths)
            ),
            90,
            lambda: (
                f"{len(runs)} runs and {len(lengths)} conversations scored: {stack.collector.output()[-2000:]}"
            ),
        )
    finally:
        stack.stop()  # a conversation scored again at shutdown would show below
    scored_runs = Counter(span.parent_span_id for _, span in stack.evaluations("no_tool_errors"))
    assert scored_runs == Counter(dict.fromkeys(runs, 1))  # every run, exactly once
    by_replica = Counter(
        resource["service.instance.id"] for resource, _ in stack.evaluations("no_tool_errors")
    )
    assert len(by_replica) == REPLICAS  # the runs were spread over all three
    conversations = [attrs(span.attributes) for _, span in stack.evaluations("turns")]
    assert Counter(str(a["gen_ai.conversation.id"]) for a in conversations) == Counter(
        dict.fromkeys(lengths, 1)
    )
    for scored in conversations:  # closed once, with all its turns, though rebuilt by several
        assert scored["gen_ai.evaluation.score.value"] == lengths[str(scored["gen_ai.conversation.id"])]
    print(f"scale-out: {len(runs)} runs over {dict(by_replica.most_common())}, {len(lengths)} conversations")


def test_a_replica_killed_mid_stream_loses_only_what_it_held_and_the_rest_is_scored(
    tmp_path: Path, backend: OtlpCapture
) -> None:
    spans = agent_spans([ScriptedRun(f"question {n}", (), f"answer {n}") for n in range(90)])
    runs = [span for span in spans if is_run(span)]
    first = {span.context.trace_id for span in runs[:45]}
    before = [span for span in spans if span.context.trace_id in first]
    after = [span for span in spans if span.context.trace_id not in first]
    # Each replica holds a trace for 5 s before scoring it (more of its spans may come): the
    # killed one takes the traces it holds with it.
    stack = ScaledOut(tmp_path, "scale-out.yaml", backend, decision_wait_s=5.0)
    victim = stack.replicas[2]
    try:
        stack.send(before)
        wait_until(
            lambda: sum(accepted(serve) for serve in stack.replicas) == len(before), 60, "the spans delivered"
        )
        held = sample(metrics_text(f"http://127.0.0.1:{victim.http_port()}"), "otel_scorers_traces_buffered")
        victim.stop()  # SIGKILL, mid-stream: what it holds is gone
        stack.send(after)
        # Meanwhile the Collector queues and retries what routes to the dead replica
        # (sending_queue, retry_on_failure): it comes back, as a restarted pod would.
        stack.replicas[2] = replica(tmp_path, stack.addresses[2], stack.scores_in, "replica-back", 5.0)
        sent_after = {span.context.span_id.to_bytes(8, "big") for span in after if is_run(span)}
        last = {"count": -1, "since": time.monotonic()}

        def settled() -> bool:
            """Every run sent after the kill scored, and no new score for a while."""
            scored = {span.parent_span_id for _, span in stack.evaluations("no_tool_errors")}
            if len(scored) != last["count"]:
                last.update(count=len(scored), since=time.monotonic())
            return sent_after <= scored and time.monotonic() - last["since"] > QUIET_S

        wait_until(
            settled, 200, lambda: f"the runs sent after the kill scored: {stack.collector.output()[-2000:]}"
        )
    finally:
        stack.stop()
    scored = Counter(span.parent_span_id for _, span in stack.evaluations("no_tool_errors"))
    assert max(scored.values()) == 1  # never twice
    lost = len(runs) - len(scored)
    # What was lost is what the killed replica held, as its own gauge counted it; everything
    # sent after the kill was scored.
    assert 0 < lost <= held
    assert sent_after <= set(scored)
    print(
        f"kill: {len(runs)} runs sent, {len(scored)} scored, {lost} lost on the killed replica (it held {held:.0f})"
    )


def accepted(serve: ServeProcess) -> float:
    """The spans a running replica has accepted, from its /metrics (0 once it is gone)."""
    if serve.process.poll() is not None:
        return 0.0
    text = metrics_text(f"http://127.0.0.1:{serve.http_port()}")
    return sample(text, "otel_scorers_receiver_spans_total", otel_scorers_outcome="accepted")


def test_a_replica_added_moves_about_one_in_n_keys_all_to_the_new_replica(tmp_path: Path) -> None:
    spans = agent_spans([ScriptedRun(f"q{n}", (), f"a{n}") for n in range(400)])
    with OtlpCapture() as a, OtlpCapture() as b, OtlpCapture() as c, OtlpCapture() as d:
        captures = [a, b, c, d]

        def routed(count: int) -> dict[int, int]:
            """Which capture each trace reached, through a Collector balancing over `count`."""
            for capture in captures:
                capture.traces.clear()
            addresses = [capture.endpoint.removeprefix("http://") for capture in captures[:count]]
            config = static(on_loopback(shipped("scale-out.yaml"), {}), addresses)
            agent_in = loopback()
            config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"] = agent_in
            collector = Collector(config, tmp_path, f"otelcol-{count}")
            try:
                exporter = OTLPSpanExporter(endpoint=agent_in, insecure=True)
                assert exporter.export(spans) == SpanExportResult.SUCCESS
                exporter.shutdown()
                wait_until(
                    lambda: sum(len(x.span_list()) for x in captures) >= len(spans), 60, "every span routed"
                )
            finally:
                collector.stop()
            where: dict[int, int] = {}
            for index, capture in enumerate(captures):
                for span in capture.span_list():
                    trace_id = int.from_bytes(span.trace_id, "big")
                    assert where.setdefault(trace_id, index) == index  # a trace's spans, together
            return where

        before, after = routed(REPLICAS), routed(REPLICAS + 1)
    moved = [trace for trace in before if after[trace] != before[trace]]
    share = len(moved) / len(before)
    assert all(after[trace] == REPLICAS for trace in moved)  # only to the new replica
    assert 0.15 <= share <= 0.35  # about 1/4
    print(f"added: {len(moved)} of {len(before)} keys moved ({share:.0%}), all to the new replica")
