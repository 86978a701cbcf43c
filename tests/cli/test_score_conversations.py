"""Conversation scorers in `otel-scorers score`'s summary (counted per conversation), its
`--fail-under` gates and JUnit report, and in `validate`'s count.

The input is three conversations of two turns each, made by a real tracer, whose scores follow
from what they were made of: `served` (two different requests, two calls that worked),
`asked-again` (the same request twice: one repeat in one later turn; one of two calls failed),
`no-tools` (two different requests, no tool call: `tool_error_rate` skips it).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from otel_scorers.cli.main import main

from ..spans import conversations_file

CONVERSATIONS = {
    "served": [("Book a flight to Lisbon", [False]), ("Now a hotel near the old town", [False])],
    "asked-again": [("Book a flight to Lisbon", [True]), ("book a flight to Lisbon", [False])],
    "no-tools": [("What is the baggage allowance?", []), ("Can I bring a bike?", [])],
}
CONFIG = """\
scorers:
  - type: no_tool_errors
conversations:
  scorers:
    - type: user_frustration
      threshold: 0.3
    - type: tool_error_rate
    - type: turns
"""


def row(stderr: str, scorer: str) -> list[str]:
    (line,) = [line for line in stderr.splitlines() if line.startswith(scorer + " ")]
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "scorers.yaml"
    config.write_text(CONFIG)
    return conversations_file(tmp_path / "traces.jsonl", CONVERSATIONS), config


def test_the_summary_counts_conversation_scores_per_conversation(
    inputs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    traces, config = inputs
    assert main(["score", str(traces), "-c", str(config)]) == 0
    out, err = capsys.readouterr()
    runs, conversations = 6, 3
    scores = runs * 1 + conversations * 3
    assert len(out.splitlines()) == scores
    assert f"otel-scorers: scored {runs} runs and {conversations} conversations, {scores} scores in " in err
    assert row(err, "user_frustration") == [
        "user_frustration",
        "3",
        f"{1 / 3:.3f}",
        "fail 1, pass 2",
        "0",
        "0",
        "-",
    ]
    assert row(err, "tool_error_rate") == [
        "tool_error_rate",
        "2",
        f"{(0 + 1 / 2) / 2:.3f}",
        "-",
        "1",
        "0",
        "-",
    ]
    assert row(err, "turns") == ["turns", "3", "2.000", "-", "0", "0", "-"]
    assert row(err, "no_tool_errors")[:2] == ["no_tool_errors", "6"]


def test_a_gate_on_a_conversation_scorer_holds_and_reports_in_junit(
    inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces, config = inputs
    report = tmp_path / "scores.xml"
    code = main(
        [
            "score",
            str(traces),
            "-c",
            str(config),
            "--fail-under",
            "user_frustration:pass_rate=0.9",
            "--junit-xml",
            str(report),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1, err
    assert "otel-scorers: gate failed: user_frustration pass_rate 0.667 < 0.9" in err
    cases = {case.get("name"): case for case in ET.parse(report).getroot().iter("testcase")}
    assert {"no_tool_errors", "user_frustration", "tool_error_rate", "turns"} <= set(cases)
    failure = cases["user_frustration"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith("conversation asked-again, last trace ")
    assert "asked again for an earlier request in 1 of 1 later turns" in failure.text

    assert (
        main(["score", str(traces), "-c", str(config), "--fail-under", "user_frustration:pass_rate=0.6"]) == 0
    )
    assert "pass_rate 0.667 >= 0.6: ok" in capsys.readouterr().err


def test_validate_counts_conversation_scorers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(CONFIG)
    assert main(["validate", "-c", str(both)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"{both}: valid (1 scorer: no_tool_errors; 3 conversation scorers: user_frustration, tool_error_rate, turns)"
    )
    only = tmp_path / "only.yaml"
    only.write_text("conversations:\n  scorers:\n    - type: turns\n")
    assert main(["validate", "-c", str(only)]) == 0
    assert capsys.readouterr().out.strip() == f"{only}: valid (1 conversation scorer: turns)"
