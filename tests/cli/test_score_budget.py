"""`otel-scorers score` keeps the judge's hourly cost budget over the runs and the conversations
together: one judge serves both, so what the runs spent is not there for the conversations.

Twelve runs in six conversations of two turns; the runs' judge scorer alone would want twelve
calls, the conversations' six more, and the budget holds about ten. The cost of each call is
what the fake judge server billed (its token counts, at the configured prices), summed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_scorers.cli.main import main

from ..judge_server import ALL_RELEVANT, count_tokens, judge_server, prompt_tokens
from ..spans import conversations_file

INPUT_USD_PER_MILLION = 1.0
OUTPUT_USD_PER_MILLION = 1.0
#: A call's prompt and reply are a few hundred tokens: this budget holds about ten calls.
BUDGET_USD = 0.002


def reply(body: dict[str, Any]) -> str:
    prompt = json.dumps(body["messages"])
    return json.dumps({"satisfied": True}) if "criterion" in prompt else ALL_RELEVANT


def cost(body: dict[str, Any]) -> float:
    """What one call cost, from the tokens the server billed for it."""
    tokens_in, tokens_out = prompt_tokens(body["messages"]), count_tokens(reply(body))
    return (tokens_in * INPUT_USD_PER_MILLION + tokens_out * OUTPUT_USD_PER_MILLION) / 1e6


def test_score_spends_at_most_its_budget_over_runs_and_conversations_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trips = {
        f"trip-{n}": [(f"Book flight {n} to Lisbon", []), (f"Now hotel {n} in the old town", [])]
        for n in range(6)
    }
    traces = conversations_file(tmp_path / "traces.jsonl", trips)
    with judge_server(reply) as server:
        config = tmp_path / "scorers.yaml"
        config.write_text(
            f"judge: {{model: openai/judge, api_base: '{server.url}', api_key: none, max_retries: 0,\n"
            f"  cost_budget_usd_per_hour: {BUDGET_USD},\n"
            f"  prices: {{input_usd_per_million: {INPUT_USD_PER_MILLION}, "
            f"output_usd_per_million: {OUTPUT_USD_PER_MILLION}}}}}\n"
            "scorers:\n  - type: answer_relevancy\n"
            "conversations:\n  scorers:\n    - type: multi_turn\n"
            "      args: {criterion: The agent answered every question.}\n"
        )
        main(["score", str(traces), "-c", str(config), "--concurrency", "1"])
        costs = [cost(request.body) for request in server.requests]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    skipped = [line for line in lines if (line.get("skipped") or "").startswith("budget")]
    assert skipped, "the budget binds: some scores were skipped for it"
    # The judge's rule: the hour is overspent by less than one call (the last one admitted).
    assert sum(costs) - max(costs) <= BUDGET_USD
    assert any(line["scorer"] == "multi_turn" for line in skipped), "the runs spent the conversations' share"
