"""`otel-scorers score` at the judge's speed: runs scored concurrently up to the judge's
concurrency, and with --otlp-endpoint the scores sent as telemetry to a real OTLP receiver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_scorers.cli.main import main
from otel_scorers.scorers.judge import import_litellm

from ..judge_server import judge_server
from ..otlp_capture import OtlpCapture

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
#: Eight one-run traces, each with a question and answer of its own (identical ones would share
#: one judge call).
FILES = [
    TRACES / path
    for path in (
        "google-adk/multi_turn.json",
        "google-adk/no_tool.json",
        "google-adk/tool_then_answer.json",
        "google-adk/two_tools.json",
        "langgraph-openinference/failing_tool_handled.json",
        "langgraph-openinference/no_tool.json",
        "langgraph-openinference/two_tools.json",
        "openai-agents/failing_tool.json",
    )
]
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")
REPLY = json.dumps(
    {"statements": [{"statement": "It is sunny.", "verdict": "yes"}], "explanation": "on topic"}
)


def config(tmp_path: Path, url: str, concurrency: int = 8) -> Path:
    path = tmp_path / "judge.yaml"
    path.write_text(
        f"judge: {{model: openai/gpt-4o-mini, api_base: '{url}', api_key: k, concurrency: {concurrency}}}\n"
        "scorers:\n  - type: answer_relevancy\n"
    )
    return path


def test_eight_runs_are_at_the_judge_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import_litellm()
    with judge_server(lambda _body: REPLY, latency_s=0.5) as server:
        assert main(["score", *map(str, FILES), "-c", str(config(tmp_path, server.url))]) == 0
        # All eight runs at the judge at once (one at a time, each waited for the one before).
        assert server.max_in_flight == 8
    scores = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(scores) == 8 and all(score["value"] == 1.0 for score in scores)


def test_the_judges_concurrency_bounds_the_runs_in_flight(tmp_path: Path) -> None:
    import_litellm()
    with judge_server(lambda _body: REPLY, latency_s=0.2) as server:
        assert main(["score", *map(str, FILES), "-c", str(config(tmp_path, server.url, concurrency=3))]) == 0
        assert server.max_in_flight == 3


def test_scores_go_out_as_telemetry_in_the_runs_own_traces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import_litellm()
    with judge_server(lambda _body: REPLY) as server, OtlpCapture() as capture:
        code = main(
            [
                "score",
                *map(str, FILES[:3]),
                "-c",
                str(config(tmp_path, server.url)),
                "--otlp-endpoint",
                capture.endpoint,
            ]
        )
        assert code == 0
        captured = capsys.readouterr()
        scored = {json.loads(line)["trace_id"] for line in captured.out.splitlines()}
        spans = [
            span
            for request in capture.traces
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        assert {span.trace_id.hex() for span in spans} == scored and len(spans) == 3
        assert all(span.name == "evaluate answer_relevancy" for span in spans)
        assert "sent 3 evaluation spans and 3 events" in captured.err


def test_an_unreachable_endpoint_is_refused_before_scoring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ..judge_server import refused_url

    with judge_server(lambda _body: REPLY) as server:
        code = main(
            [
                "score",
                str(FILES[0]),
                "-c",
                str(config(tmp_path, server.url)),
                "--otlp-endpoint",
                refused_url().removesuffix("/v1"),
            ]
        )
        assert code == 1 and server.calls == 0
    assert "nothing scored" in capsys.readouterr().err
