"""The judge against people: labels joined with the judge's scores of the same runs, live in the
processor and the sidecar (labels as OTLP log records over HTTP and gRPC) in both arrival orders,
and from files with `otel-scorers calibrate`; agreement and Cohen's κ read back from the metrics.

The judge is a scripted server over real HTTP (litellm): for run i it finds the answer toxic when
i % 4 == 0, so it passes 150 of 200 runs. People disagree on 30: they fail 20 the judge passed
(i % 4 == 1 and i < 80) and pass 10 it failed (i % 4 == 0 and i < 40). Worked out by hand:

    judge  pass 150, fail 50;   people  pass 150 - 20 + 10 = 140, fail 60
    agreement  p_o = (200 - 30) / 200 = 0.85
    chance     p_e = (150 * 140 + 50 * 60) / 200^2 = 24000 / 40000 = 0.6
    kappa      (0.85 - 0.6) / (1 - 0.6) = 0.625
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers import ScoringSpanProcessor, bind, scorers
from otel_scorers.cli.main import main
from otel_scorers.labels.agreement import Agreement, LabelJoin, kappa_figures, spearman
from otel_scorers.labels.join_records import JudgeScore, Label
from otel_scorers.labels.label_records import labels_json, read_labels
from otel_scorers.scorers.judge import Judge, JudgeConfig, import_litellm

from ..conftest import Telemetry
from ..judge_server import JudgeServer, judge_server
from ..label_requests import label_request
from ..sidecar_harness import RunningSidecar, metrics_text, sample, sidecar_document
from ..spans import conversation_turn
from ..waiting import wait_until

MODEL = "openai/gpt-4o-mini"
RUNS = 200
AGREEMENT = 0.85
KAPPA = 0.625
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def judge_fails(i: int) -> bool:
    return i % 4 == 0


def person_passes(i: int) -> bool:
    if i % 4 == 1 and i < 80:
        return False
    if i % 4 == 0 and i < 40:
        return True
    return not judge_fails(i)


_RUN = re.compile(r"answer number (\d+)")


def responder(body: dict[str, Any]) -> str:
    text = "\n".join(str(message.get("content") or "") for message in body.get("messages", []))
    found = _RUN.search(text)
    verdict = "yes" if found is not None and judge_fails(int(found.group(1))) else "no"
    return json.dumps(
        {"units": [{"text": "the answer", "verdict": verdict, "reason": "r"}], "reason": "scripted"}
    )


@pytest.fixture(autouse=True, scope="module")
def litellm_imported() -> None:
    import_litellm()


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with judge_server(responder) as running:
        yield running


# ---- the figures, against worked examples -----------------------------------------------------


def test_kappa_of_a_textbook_table() -> None:
    # 50 items: both yes 20, judge yes / person no 5, judge no / person yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = 0.2 / 0.5 = 0.4
    figures = kappa_figures({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert figures["agreement"] == pytest.approx(0.7)
    assert figures["kappa"] == pytest.approx(0.4)
    assert figures["judge_rates"] == {"no": 0.5, "yes": 0.5}
    assert figures["human_rates"] == {"no": 0.4, "yes": 0.6}


def test_kappa_when_both_always_say_the_same_label_is_not_a_number() -> None:
    figures = kappa_figures({("pass", "pass"): 10})
    assert figures["agreement"] == 1.0 and figures["kappa"] is None


def test_spearman_of_hand_worked_pairs() -> None:
    # ranks (1,2),(2,1),(3,4),(4,3): sum d^2 = 4, rho = 1 - 6*4 / (4*(16-1)) = 0.6
    assert spearman([(1, 2), (2, 1), (3, 4), (4, 3)]) == pytest.approx(0.6)
    # ties share their mean rank: x ranks 1.5,1.5,3 and y 1,2,3; Pearson of the ranks is sqrt(3)/2
    assert spearman([(0, 0), (0, 1), (1, 2)]) == pytest.approx(3**0.5 / 2)
    assert spearman([(1, 1), (1, 2)]) is None


# ---- the join -----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_whichever_arrives_first_waits_and_what_waits_too_long_is_counted() -> None:
    pairs: list[Any] = []
    expired: list[tuple[str, str]] = []
    clock = Clock()
    join = LabelJoin(
        pairs.append, lambda side, scorer: expired.append((side, scorer)), wait_s=10, clock=clock
    )
    join.add_labels([Label("tox", 1, 1, label="pass")])  # label first
    join.add_scores([JudgeScore("tox", 1, 1, 0.0, "pass"), JudgeScore("tox", 2, 2, 1.0, "fail")])
    assert len(pairs) == 1
    join.add_labels([Label("tox", 2, 2, label="fail"), Label("tox", 2, 2, label="pass", reviewer="b")])
    assert len(pairs) == 3  # a score pairs with every label of its run
    join.add_labels([Label("tox", 3, 3, label="pass"), Label("other", 2, 2, label="pass")])
    clock.now = 11
    join.expire()
    assert sorted(expired) == [("label", "other"), ("label", "tox"), ("score", "tox"), ("score", "tox")]
    assert join.pending == (0, 0)


def test_the_join_is_bounded_and_counts_what_makes_room() -> None:
    expired: list[tuple[str, str]] = []
    join = LabelJoin(lambda pair: None, lambda side, scorer: expired.append((side, scorer)), max_pending=3)
    join.add_labels([Label("tox", n, 1, value=1.0) for n in range(1, 6)])
    join.add_scores([JudgeScore("tox", n, 2, 1.0, None) for n in range(1, 6)])
    assert join.pending == (3, 3)
    assert expired.count(("label", "tox")) == 2 and expired.count(("score", "tox")) == 2


def test_a_label_needs_a_run_or_conversation_and_a_verdict() -> None:
    with pytest.raises(ValueError, match="trace and span ids or a conversation id"):
        Label("tox", label="pass")
    with pytest.raises(ValueError, match="a value or a label"):
        Label("tox", 1, 1)
    assert Label("tox", conversation_id="c1", value=1.0).key == ("tox", "conversation", "c1")


def test_a_conversation_label_pairs_with_the_score_of_its_conversation() -> None:
    agreement = Agreement()
    agreement.add_labels([Label("completeness", conversation_id="c-7", label="fail")])
    agreement.add_scores([JudgeScore("completeness", 5, 6, 0.2, "fail", conversation_id="c-7")])
    (figures,) = agreement.snapshot().values()
    assert figures["pairs"] == 1 and figures["agreement"] == 1.0


# ---- 200 labelled runs, live and from files ------------------------------------------------------


def labels() -> list[Label]:
    return [
        Label(
            "toxicity",
            0,
            0,
            f"conversation-{i}",
            label="pass" if person_passes(i) else "fail",
            reviewer="ana",
        )
        for i in range(RUNS)
    ]


def judge(server: JudgeServer) -> Judge:
    # Timeouts far above a call's time: the test counts pairs, and a loaded machine must not drop one.
    return Judge(JudgeConfig(model=MODEL, api_base=server.url, api_key="k", timeout_s=120.0, concurrency=16))


def run_labels(finished: list[Any]) -> list[Label]:
    """The labels, addressed to the runs' trace and span ids as the traces recorded them."""
    by_conversation = {
        span.attributes["gen_ai.conversation.id"]: span
        for span in finished
        if span.name == "invoke_agent trip"
    }
    return [
        Label(
            label.scorer,
            by_conversation[label.conversation_id].context.trace_id,
            by_conversation[label.conversation_id].context.span_id,
            label=label.label,
            reviewer=label.reviewer,
        )
        for label in labels()
    ]


def agent_traffic(*processors: Any) -> list[Any]:
    """200 runs through a real tracer; the finished spans."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    for processor in processors:
        provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = provider.get_tracer("agent")
    for i in range(RUNS):
        conversation_turn(tracer, f"conversation-{i}", f"question {i}", f"Here is answer number {i}.")
    provider.force_flush()
    return list(spans.get_finished_spans())


def gauge(telemetry: Telemetry, name: str) -> float:
    (point,) = [
        p for p in telemetry.metric_points(name) if p.attributes["gen_ai.evaluation.name"] == "toxicity"
    ]
    return float(point.value)


@pytest.mark.parametrize("labels_first", [True, False], ids=["labels-first", "scores-first"])
def test_two_hundred_labelled_runs_through_the_processor(
    server: JudgeServer, telemetry: Telemetry, labels_first: bool
) -> None:
    toxicity = scorers.toxicity(judge=judge(server), threshold=0.5)
    processor = ScoringSpanProcessor([bind(toxicity, timeout_s=120)], labels=True, **telemetry.providers())
    try:
        if labels_first:
            # labels for runs whose spans have not ended yet: addressed by conversation id
            processor.add_labels(labels())
        spans = agent_traffic(processor)
        assert processor.force_flush(120_000)
        if not labels_first:
            processor.add_labels(run_labels(spans))
        assert gauge(telemetry, "otel_scorers.agreement.pairs") == RUNS
        assert gauge(telemetry, "otel_scorers.agreement.rate") == pytest.approx(AGREEMENT, abs=1e-12)
        assert gauge(telemetry, "otel_scorers.agreement.kappa") == pytest.approx(KAPPA, abs=1e-12)
        rates = {
            (
                p.attributes["otel_scorers.agreement.rater"],
                p.attributes["gen_ai.evaluation.score.label"],
            ): p.value
            for p in telemetry.metric_points("otel_scorers.agreement.base_rate")
        }
        assert rates == {
            ("judge", "pass"): 0.75,
            ("judge", "fail"): 0.25,
            ("human", "pass"): 0.7,
            ("human", "fail"): 0.3,
        }
        assert telemetry.counter("otel_scorers.labels.unpaired") == 0
        assert server.calls == RUNS
    finally:
        processor.shutdown()


def test_a_label_for_a_run_the_judge_did_not_score_is_unpaired(
    server: JudgeServer, telemetry: Telemetry
) -> None:
    toxicity = scorers.toxicity(judge=judge(server), threshold=0.5)
    processor = ScoringSpanProcessor(
        [bind(toxicity, sampling=0.0)], labels=Agreement(wait_s=60), **telemetry.providers()
    )
    spans = agent_traffic(processor)
    processor.force_flush(10_000)
    processor.add_labels(run_labels(spans)[:5])
    processor.shutdown()  # nothing will score them now
    assert telemetry.counter("otel_scorers.labels.unpaired", gen_ai__evaluation__name="toxicity") == 5
    assert telemetry.counter("otel_scorers.labels.received", gen_ai__evaluation__name="toxicity") == 5


def prometheus(sidecar: RunningSidecar, name: str) -> float:
    return sample(metrics_text(sidecar.http_url), name, gen_ai_evaluation_name="toxicity")


def version_key(figures: Any, scorer: str) -> Any:
    """The (scorer, evaluator version) key of `scorer`'s figures: one version per binding."""
    return next((key for key in figures if key[0] == scorer), None)


@pytest.mark.parametrize("labels_first", [True, False], ids=["labels-first-grpc", "scores-first-http"])
def test_two_hundred_labelled_runs_through_the_sidecar(server: JudgeServer, labels_first: bool) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from ..sidecar_harness import send_grpc

    spans = agent_traffic()
    # sent before the runs: by conversation id, as a reviewer of conversations would; after: by run
    body = label_request(labels() if labels_first else run_labels(spans))
    scorer = {"type": "toxicity", "args": {"threshold": 0.5}, "timeout_s": 30}
    document = sidecar_document("127.0.0.1:1", [scorer], scoring_process=False)
    document["sidecar"]["export"] = {"enabled": False}
    document["judge"] = {
        "model": MODEL,
        "api_base": server.url,
        "api_key": "k",
        "timeout_s": 10,
        "concurrency": 16,
    }
    document["labels"] = {"wait_s": 120}
    with RunningSidecar(document) as sidecar:

        def send_labels() -> None:
            if labels_first:
                with __import__("grpc").insecure_channel(sidecar.grpc_endpoint) as channel:
                    export = channel.unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")
                    export(body, timeout=10)
            else:
                posted = urllib.request.Request(
                    f"{sidecar.http_url}/v1/logs", body, {"Content-Type": "application/x-protobuf"}
                )
                with urllib.request.urlopen(posted, timeout=10) as response:
                    assert response.status == 200

        if labels_first:
            send_labels()
        send_grpc(sidecar.grpc_endpoint, encode_spans(spans).SerializeToString())
        wait_until(lambda: server.calls == RUNS, 60, f"the judge to be called for each of the {RUNS} runs")
        if not labels_first:
            send_labels()
        wait_until(
            lambda: prometheus(sidecar, "otel_scorers_agreement_pairs_total") == RUNS,
            60,
            f"{RUNS} pairs of a label and a score",
        )
        assert prometheus(sidecar, "otel_scorers_agreement_rate") == pytest.approx(AGREEMENT, abs=1e-12)
        assert prometheus(sidecar, "otel_scorers_agreement_kappa") == pytest.approx(KAPPA, abs=1e-12)


def test_calibrate_gives_the_same_figures_from_files(
    server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = agent_traffic()
    traces = tmp_path / "traces.json"
    traces.write_text(MessageToJson(encode_spans(spans)))
    labels_file = tmp_path / "labels.jsonl"
    stray = Label("toxicity", 0xAB, 0xCD, label="pass")  # a run the files do not hold
    labels_file.write_text(labels_json([*run_labels(spans), stray]))
    assert len(read_labels(labels_file)) == RUNS + 1
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "judge": {
                    "model": MODEL,
                    "api_base": server.url,
                    "api_key": "k",
                    "timeout_s": 10,
                    "concurrency": 16,
                },
                "scorers": [
                    {"type": "toxicity", "args": {"threshold": 0.5}, "sampling": {"rate": 0.1}},
                    {"type": "bias", "args": {"threshold": 0.5}},
                ],
            }
        )
    )
    junit = tmp_path / "calibrate.xml"
    code = main(
        [
            "calibrate",
            "-c",
            str(config),
            "--labels",
            str(labels_file),
            "--junit-xml",
            str(junit),
            "--min-kappa",
            "0.7",
            str(traces),
        ]
    )
    out, err = capsys.readouterr()
    documents = {document["scorer"]: document for document in map(json.loads, out.splitlines())}
    toxicity = documents["toxicity"]
    assert toxicity["pairs"] == RUNS  # every labelled run judged, though the binding samples a tenth
    assert toxicity["agreement"] == pytest.approx(AGREEMENT, abs=1e-12)
    assert toxicity["kappa"] == pytest.approx(KAPPA, abs=1e-12)
    assert len(toxicity["disagreements"]) == 30
    assert toxicity["unpaired_labels"] == 1  # a run not in the files: counted, not dropped
    assert "toxicity" in err and "0.625" in err and "disagree" in err
    assert code == 1  # kappa 0.625 is below the 0.7 asked for
    assert b"kappa 0.625 below 0.7" in junit.read_bytes()
    assert server.calls == RUNS  # only toxicity, which the labels name, judged


def test_a_bad_label_record_is_refused_by_name_and_counted(server: JudgeServer) -> None:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
    )

    request = ExportLogsServiceRequest.FromString(
        label_request([Label("toxicity", 1, 2, label="pass"), Label("toxicity", 3, 4, value=1.0)])
    )
    for attribute in request.resource_logs[0].scope_logs[0].log_records[1].attributes:
        if attribute.key == "gen_ai.evaluation.score.value":
            attribute.value.string_value = "high"
    document = sidecar_document("127.0.0.1:1", [{"type": "no_tool_errors"}], scoring_process=False)
    document["sidecar"]["export"] = {"enabled": False}
    document["labels"] = {}
    with RunningSidecar(document) as sidecar:
        posted = urllib.request.Request(
            f"{sidecar.http_url}/v1/logs",
            request.SerializeToString(),
            {"Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(posted, timeout=10) as response:
            answer = ExportLogsServiceResponse.FromString(response.read())
        assert answer.partial_success.rejected_log_records == 1
        assert "gen_ai.evaluation.score.value must be a number" in answer.partial_success.error_message
        agreement = sidecar.service.agreement
        assert agreement is not None
        assert agreement.labels_received == {"toxicity": 1} and agreement.labels_rejected == 1


def test_a_bad_labels_file_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels_file = tmp_path / "labels.jsonl"
    labels_file.write_text(
        '{"scorer": "toxicity", "conversation_id": "c1", "label": "pass"}\n{"scorer": "toxicity", "trace_id": "xyz", "span_id": "00", "label": "pass"}\n'
    )
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"scorers": [{"type": "no_tool_errors"}]}))
    traces = tmp_path / "traces.json"
    traces.write_text("{}")
    assert main(["calibrate", "-c", str(config), "--labels", str(labels_file), str(traces)]) == 2
    assert f"{labels_file}:2: not a label: trace_id must be 32 hex digits" in capsys.readouterr().err


def test_the_sidecars_scoring_process_hands_back_each_scores_inclusion_probability() -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from ..sidecar_harness import send_grpc

    spans = agent_traffic()
    says = {
        "type": "includes",
        "name": "says-answer",
        "args": {"expected": "answer"},
        "sampling": {"rate": 0.5},
    }
    document = sidecar_document("127.0.0.1:1", [says], scoring_process=True)
    document["sidecar"]["export"] = {"enabled": False}
    document["labels"] = {}
    labels = [
        Label("says-answer", label.trace_id, label.span_id, label="pass", reviewer="ana")
        for label in run_labels(spans)
    ]
    with RunningSidecar(document) as sidecar:
        send_grpc(sidecar.grpc_endpoint, encode_spans(spans).SerializeToString())
        agreement = sidecar.service.agreement
        assert agreement is not None
        service = sidecar.service

        def all_scored() -> bool:  # every trace buffered, scored and released
            return bool(service.assembler.buffered_traces == 0 and service._in_flight == 0)

        wait_until(
            lambda: version_key(agreement.judged_passes, "says-answer") is not None,
            60,
            "a judged pass of says-answer",
        )
        wait_until(lambda: sidecar.call(all_scored), 60, "every trace to be scored and released")
        sidecar.call(lambda: agreement.add_labels(labels))
        key = version_key(agreement.judged_passes, "says-answer")
        judged = agreement.judged_passes[key].sums
        assert 0 < judged.count < RUNS  # about half the runs, each weighted by 1/0.5
        assert judged.weight == 2 * judged.count
        figures = agreement.snapshot()[key]
        assert figures["pairs"] == judged.count and figures["agreement"] == 1.0


def test_labels_naming_any_number_of_scorers_keep_the_counts_bounded() -> None:
    from otel_scorers.labels.agreement import MAX_SCORER_NAMES, OTHER_SCORERS

    agreement = Agreement(wait_s=1e-9)
    agreement.add_labels(Label(f"made-up-{n}", n + 1, 1, label="pass") for n in range(MAX_SCORER_NAMES + 50))
    agreement.join.expire()
    assert len(agreement.labels_received) == MAX_SCORER_NAMES + 1
    assert agreement.labels_received[OTHER_SCORERS] == 50
    assert len(agreement.unpaired) <= MAX_SCORER_NAMES + 1
    assert sum(agreement.unpaired.values()) == MAX_SCORER_NAMES + 50  # every one counted


def test_a_conversation_scorers_score_pairs_with_a_label_of_its_conversation(telemetry: Telemetry) -> None:
    from otel_scorers.conversations.scoring import bind_conversation
    from otel_scorers.conversations.source import ConversationSettings
    from otel_scorers.conversations.stage import StageLimits
    from otel_scorers.scorers.conversation import turns

    clock = Clock()
    settings = ConversationSettings(
        bindings=(bind_conversation(turns()),),
        limits=StageLimits(idle_timeout_s=60),
        clock=clock,
        tick_s=3600,
    )
    processor = ScoringSpanProcessor([], conversations=settings, labels=True, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    for conversation, count in (("c-1", 3), ("c-2", 2)):
        for n in range(count):
            conversation_turn(tracer, conversation, f"question {n}")
    processor.add_labels(
        [Label("turns", conversation_id="c-1", value=3.0), Label("turns", conversation_id="c-2", value=4.0)]
    )
    processor.force_flush()
    clock.now = 120  # both idle long enough: scored once each
    processor.force_flush()
    assert processor.agreement is not None
    snapshot = processor.agreement.snapshot()
    figures = snapshot[version_key(snapshot, "turns")]
    assert figures["pairs"] == 2 and figures["value_pairs"] == 2
    assert figures["mean_absolute_difference"] == 1.0  # |3 - 3| and |2 - 4|, halved
    processor.shutdown()
