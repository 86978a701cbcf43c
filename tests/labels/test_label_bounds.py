"""Labels that come again, out of range or oversized: a redelivered label counts once, a value
beyond range or a label beyond its length is refused by name, text is cut and counted in what the
join holds, and the label names a scorer's people use are bounded (each is a metric series)."""

from __future__ import annotations

import urllib.request

import pytest

from otel_scorers.labels.agreement import ENTRY_BYTES, Agreement, LabelJoin, label_bytes
from otel_scorers.labels.join_records import JudgeScore, Label
from otel_scorers.labels.label_gate import MAX_COMMENT_CHARS, MAX_LABEL_NAMES, OTHER_LABELS

from ..label_requests import label_request
from ..sidecar_harness import RunningSidecar, sidecar_document


def judged(count: int) -> list[JudgeScore]:
    """The judge passes the even runs and fails the odd ones."""
    return [JudgeScore("toxicity", n, n, None, "pass" if n % 2 == 0 else "fail") for n in range(1, count + 1)]


def test_a_redelivered_label_counts_once() -> None:
    agreement = Agreement()
    agreement.add_scores(judged(20))
    # People agree on runs 1..10 and disagree on 11..20: kappa 0 by hand (agreement 0.5, chance 0.5).
    labels = [
        Label(
            "toxicity",
            n,
            n,
            label=("pass" if n % 2 == 0 else "fail") if n <= 10 else ("fail" if n % 2 == 0 else "pass"),
            reviewer="ana",
        )
        for n in range(1, 21)
    ]
    agreement.add_labels(labels)
    (figures,) = agreement.snapshot().values()
    assert figures["pairs"] == 20 and figures["kappa"] == pytest.approx(0.0)
    for _ in range(9):  # the agreeing ten, delivered again and again
        admitted = agreement.add_labels(labels[:10])
        assert admitted.labels == [] and admitted.duplicates == 10
    (figures,) = agreement.snapshot().values()
    assert figures["pairs"] == 20 and figures["kappa"] == pytest.approx(0.0)
    assert agreement.labels_received == {"toxicity": 20} and agreement.labels_duplicate == 90
    # Another reviewer's label of the same run is another label.
    assert agreement.add_labels([Label("toxicity", 1, 1, label="fail", reviewer="bo")]).labels != []


def test_values_out_of_range_and_overlong_labels_are_refused_by_name() -> None:
    agreement = Agreement()
    agreement.add_scores([JudgeScore("toxicity", 1, 1, 0.5, None)])
    admitted = agreement.add_labels(
        [Label("toxicity", 1, 1, value=1e308), Label("toxicity", 1, 1, label="x" * 4000, reviewer="b")]
    )
    assert admitted.refused == 2 and "finite number of at most 1e+09" in admitted.problem
    assert agreement.labels_rejected == 2
    agreement.add_labels([Label("toxicity", 1, 1, value=0.25)])
    (figures,) = agreement.snapshot().values()
    assert figures["mean_absolute_difference"] == pytest.approx(0.25)


def test_label_names_are_bounded_per_scorer_and_comments_cut() -> None:
    agreement = Agreement()
    agreement.add_scores(judged(1000))
    agreement.add_labels(
        [
            Label("toxicity", n, n, label=f"verdict-{n:04d}-" + "z" * 40, comment="c" * 3_000_000)
            for n in range(1, 1001)
        ]
    )
    (figures,) = agreement.snapshot().values()
    assert len(figures["human_rates"]) == MAX_LABEL_NAMES + 1 and OTHER_LABELS in figures["human_rates"]
    kept = agreement.by_scorer[("toxicity", "")].disagreements
    assert kept and all(len(pair.label.comment or "") < MAX_COMMENT_CHARS + 40 for pair in kept)


def test_waiting_labels_count_their_text_in_the_bound() -> None:
    join = LabelJoin(lambda pair: None, lambda side, scorer: None, max_pending=100)
    labels = [Label("toxicity", n, n, label="pass", comment="c" * 1000) for n in range(1, 101)]
    join.add_labels(labels)
    waiting = join.pending[1]
    assert 0 < waiting < 100
    assert waiting * label_bytes(labels[0]) <= 100 * ENTRY_BYTES


def test_the_sidecar_counts_a_redelivered_request_once_and_refuses_a_huge_value() -> None:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    body = label_request([Label("toxicity", 1, 2, label="pass"), Label("toxicity", 3, 4, value=1.0)])
    huge = label_request([Label("toxicity", 5, 6, value=1e308)])
    document = sidecar_document("127.0.0.1:1", [{"type": "no_tool_errors"}], scoring_process=False)
    document["sidecar"]["export"] = {"enabled": False}
    document["labels"] = {}
    with RunningSidecar(document) as sidecar:
        answers = []
        for payload in (body, body, huge):
            posted = urllib.request.Request(
                f"{sidecar.http_url}/v1/logs", payload, {"Content-Type": "application/x-protobuf"}
            )
            with urllib.request.urlopen(posted, timeout=10) as response:
                answers.append(ExportLogsServiceResponse.FromString(response.read()))
        agreement = sidecar.service.agreement
        assert agreement is not None
        assert agreement.labels_received == {"toxicity": 2} and agreement.labels_duplicate == 2
        assert answers[2].partial_success.rejected_log_records == 1
        assert "finite number of at most 1e+09" in answers[2].partial_success.error_message


def test_label_values_outside_their_scorers_range_are_refused_naming_the_label() -> None:
    """A pass/fail check's labels are 0 or 1, a continuous built-in's 0 to 1, a judged scorer's 0
    to its scale; a value beyond is refused, counted as rejected and answered by name."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    scorers = [
        {"type": "no_tool_errors"},
        {"type": "similarity", "args": {"expected": "Sunny."}},
        {"type": "faithfulness", "args": {"scale": 10}},
    ]
    document = sidecar_document("127.0.0.1:1", scorers, scoring_process=False)
    document["sidecar"]["export"] = {"enabled": False}
    document["labels"] = {}
    document["judge"] = {"model": "openai/gpt-4o-mini", "api_key": "k", "api_base": "http://127.0.0.1:1"}
    refused = [
        Label("no_tool_errors", 0xA1, 0xB1, value=7.0, reviewer="ana"),
        Label("no_tool_errors", 0xA2, 0xB2, value=0.5),
        Label("similarity", 0xA3, 0xB3, value=1.5),
        Label("similarity", 0xA4, 0xB4, value=-0.2),
        Label("faithfulness", 0xA9, 0xB9, value=12.0),
    ]
    kept = [
        Label("no_tool_errors", 0xA5, 0xB5, value=1.0, label="pass"),
        Label("no_tool_errors", 0xA6, 0xB6, label="fail"),
        Label("similarity", 0xA7, 0xB7, value=0.4),
        Label("faithfulness", 0xAA, 0xBA, value=8.0),
        Label("not_configured", 0xA8, 0xB8, value=42.0),  # no scorer to know a range by: unpaired
    ]
    with RunningSidecar(document) as sidecar:
        answers = []
        for labels in ([refused[0], *kept], refused[1:]):
            posted = urllib.request.Request(
                f"{sidecar.http_url}/v1/logs",
                label_request(labels),
                {"Content-Type": "application/x-protobuf"},
            )
            with urllib.request.urlopen(posted, timeout=10) as response:
                answers.append(ExportLogsServiceResponse.FromString(response.read()))
        agreement = sidecar.service.agreement
        assert agreement is not None
        assert agreement.labels_rejected == 5
        assert agreement.labels_received == {
            "no_tool_errors": 2,
            "similarity": 1,
            "faithfulness": 1,
            "not_configured": 1,
        }
    first = answers[0].partial_success
    assert first.rejected_log_records == 1
    assert first.error_message == (
        f"the label of 'no_tool_errors' for run {0xA1:032x}/{0xB1:016x} by 'ana' has the value 7, "
        "outside the scorer's range (0 or 1 (pass/fail))"
    )
    assert answers[1].partial_success.rejected_log_records == 4
    assert "'no_tool_errors'" in answers[1].partial_success.error_message
