"""How many runs of a captured corpus are rebuilt right, and how many runs that do not exist are.

For each corpus directory given (a framework's `<scenario>.json` traces with their
`.truth.json`), every trace is read as `otel-scorers runs` reads it. A run of the truth is
right when one rebuilt run matches it in every field `tests/conventions/test_fixture_runs.py`
compares (agent, input, output, tool calls, handoffs); a rebuilt run beyond the truth's count
for its trace is a phantom run. Prints one line per corpus and the totals.

    python bench/corpus_figures.py tests/fixtures/traces/openlit-openai-agents [...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files


def _strip(text: str | None) -> str | None:
    return text.rstrip() if isinstance(text, str) else text


def _calls(run: AgentRun) -> list[tuple[Any, ...]]:
    return [(c.name, c.arguments, c.result, c.state == "error") for c in run.tool_calls]


def _expected_calls(truth: dict[str, Any], content: bool) -> list[tuple[Any, ...]]:
    return [
        (c["name"], c["arguments"] if content else None, c["result"] if content else None, c["error"])
        for c in truth["tool_calls"]
    ]


def matches(run: AgentRun, truth: dict[str, Any], content: bool) -> bool:
    """The rebuilt run is the truth's run, as the fixture tests compare them."""
    text_right = (
        (run.input == truth["input"] and _strip(run.output) == _strip(truth["output"]))
        if content
        else (run.input is None and run.output is None)
    )
    handoffs = [{"from": h.from_agent, "to": h.to_agent} for h in run.handoffs]
    return (
        run.agent_name == truth["agent_name"]
        and text_right
        and _calls(run) == _expected_calls(truth, content)
        and handoffs == truth.get("handoffs", [])
        and run.final_agent == truth.get("final_agent")
    )


def figures(directory: Path) -> tuple[int, int, int]:
    """(runs right, runs in the truth, phantom runs) of one corpus."""
    right = total = phantom = 0
    for truth_path in sorted(directory.glob("*.truth.json")):
        truth = json.loads(truth_path.read_text())
        trace_path = truth_path.with_name(truth_path.name.replace(".truth.json", ".json"))
        problems: list[InputProblem] = []
        runs = sorted(runs_from_files([trace_path], problems), key=lambda run: run.start_ns)
        content = truth["scenario"] != "no_content"
        unmatched = list(runs)
        for expected in truth["runs"]:
            total += 1
            found = next((run for run in unmatched if matches(run, expected, content)), None)
            if found is not None:
                right += 1
                unmatched.remove(found)
        phantom += max(0, len(runs) - len(truth["runs"]))
    return right, total, phantom


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    args = parser.parse_args()
    sums = [0, 0, 0]
    print(f"{'corpus':<34}{'right':>12}{'phantom runs':>14}")
    for directory in args.corpora:
        right, total, phantom = figures(directory)
        sums = [sums[0] + right, sums[1] + total, sums[2] + phantom]
        print(f"{directory.name:<34}{f'{right}/{total}':>12}{phantom:>14}")
    print(f"{'all':<34}{f'{sums[0]}/{sums[1]}':>12}{sums[2]:>14}")


if __name__ == "__main__":
    main()
