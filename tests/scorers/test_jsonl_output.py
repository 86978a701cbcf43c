"""A new output is one module and a name in the list: `tests/jsonl_output.py` receives the run
scores and the conversation scores that every other output receives."""

from __future__ import annotations

import json

import pytest

from otel_scorers import ScoringSpanProcessor
from otel_scorers.config import parse_config
from tests.conftest import Telemetry
from tests.spans import conversation_turn


def test_an_output_listed_by_import_path_receives_run_and_conversation_scores(
    telemetry: Telemetry, capsys: pytest.CaptureFixture[str]
) -> None:
    config = parse_config(
        {
            "scorers": [{"type": "includes", "args": {"expected": "ok"}}],
            "conversations": {"max_turns": 2, "scorers": [{"type": "turns"}]},
            "outputs": ["otlp", "metrics", "tests.jsonl_output:jsonl_output"],
        }
    )
    processor = ScoringSpanProcessor.from_config(config, **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer("agent")
    conversation_turn(tracer, "c-3", "first")
    conversation_turn(tracer, "c-3", "second")
    assert processor.force_flush()
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert sorted((line["scorer"], line["value"], line.get("conversation")) for line in lines) == [
        ("includes", 1.0, None),
        ("includes", 1.0, None),
        ("turns", 2.0, "c-3"),
    ]
    processor.shutdown()
