"""What a command writes: runs and scores as JSON lines on stdout, lines for the person at the
terminal on stderr (escaped: trace text cannot steer the terminal)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.human_text import printable
from otel_scorers.model import AgentRun, Score, score_fields
from otel_scorers.runs.otlp_files import InputProblem, Reading


def run_to_json(run: AgentRun) -> dict[str, Any]:
    return {
        "trace_id": run.trace_id_hex,
        "span_id": run.span_id_hex,
        "agent_name": run.agent_name,
        "convention": run.convention,
        "input": run.input,
        "output": run.output,
        "tool_calls": [
            {
                "name": call.name,
                "call_id": call.call_id,
                # decoded as orjson reads them, 1,024 levels, where it writes 255
                "arguments": within_depth(call.arguments),
                "result": within_depth(call.result),
                "state": call.state,
            }
            for call in run.tool_calls
        ],
        "missing": sorted(run.missing),
        # The tools the model was offered (what tool_args_valid checks against), when declared.
        **(
            {
                "tool_definitions": [
                    {"name": tool.name, "parameters": within_depth(tool.parameters), "source": tool.source}
                    for tool in run.tool_definitions
                ]
            }
            if run.tool_definitions
            else {}
        ),
        # What no capture setting would have recorded, said only when there is some.
        **({"unrecorded": sorted(run.unrecorded)} if run.unrecorded else {}),
        **(
            {
                "handoffs": [{"from": h.from_agent, "to": h.to_agent} for h in run.handoffs],
                "final_agent": run.final_agent,
            }
            if run.handoffs
            else {}
        ),
    }


def score_to_json(run: AgentRun, score: Score) -> dict[str, Any]:
    return {
        "trace_id": run.trace_id_hex,
        "span_id": run.span_id_hex,
        "agent_name": run.agent_name,
        **score_fields(score),
    }


def write_line(document: dict[str, Any]) -> None:
    """One JSON line on stdout. JSON escapes C0 controls itself; C1 controls, the line separators
    and the bidirectional controls it writes raw, so they are escaped here (`\\u202e`): the same
    JSON, read back, and nothing a terminal would act on."""
    line = orjson.dumps(document, default=repr)
    if not line.isascii():
        line = printable(line.decode()).encode()
    sys.stdout.buffer.write(line + b"\n")


def say(message: str) -> None:
    """A line (or lines) for the person at the terminal, on stderr: input keys, names and trace
    text in it cannot steer the terminal (`human_text.printable`)."""
    print(printable(message, newlines=True), file=sys.stderr)


def progress(message: str) -> None:
    say(f"otel-scorers: {message}")


def report_problems(problems: Sequence[InputProblem]) -> int:
    for problem in problems:
        say(f"otel-scorers: skipped {problem}")
    return 1 if problems else 0


def nothing_read(paths: Sequence[Path], reading: Reading) -> int:
    """1, with the reason on stderr, when the files gave no runs; else 0."""
    why = reading.nothing_read(paths)
    if why is None:
        return 0
    say(f"otel-scorers: nothing to work on: {why}")
    return 1
