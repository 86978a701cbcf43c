"""tool_call_accuracy_llm: whether each tool the agent called was the right one for the request."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.rules.base import Ask, Task, ask_once, need_input


class CallEvaluation(BaseModel):
    tool: str
    appropriate: bool
    reason: str = ""


class ToolCallsReply(BaseModel):
    calls: list[CallEvaluation]
    missing_tools: list[str] = []
    reason: str = ""


def tool_calls_text(run: AgentRun) -> str:
    lines = []
    for n, call in enumerate(run.tool_calls, 1):
        arguments = (
            json.dumps(within_depth(call.arguments), ensure_ascii=False, default=str)
            if call.arguments is not None
            else ""
        )
        lines.append(f"{n}. {call.name}({arguments}) -> {call.state}")
    return "\n".join(lines) or "(no tool calls)"


@dataclass(frozen=True, slots=True)
class ToolCallAccuracyLLM:
    available_tools: tuple[tuple[str, str], ...] = ()  # (name, description)

    kind = "tool_call_accuracy_llm"
    shape = ToolCallsReply
    mastra_steps = 2
    needs = frozenset({"input"})
    higher_is_worse = False
    instructions = (
        "You judge an AI agent's choice of tools for the user's request. For each numbered tool call say "
        "whether calling that tool was appropriate for the request (`tool` is its name). List the tools "
        "the agent should have called but did not (missing_tools), from the available tools when given."
    )
    reply_format = (
        '{"calls":[{"tool":"...","appropriate":true,"reason":"..."}],"missing_tools":["..."],"reason":"..."}'
    )

    @property
    def version(self) -> str:
        return "tool_call_accuracy_llm/1"

    def prepare(self, run: AgentRun) -> Task | Score:
        early = need_input(run, self.kind)
        if early is not None:
            return early
        data: list[tuple[str, str]] = [("request", run.input or ""), ("tool_calls", tool_calls_text(run))]
        if self.available_tools:
            data.append(
                ("available_tools", "\n".join(f"{name}: {text}" for name, text in self.available_tools))
            )
        return Task(tuple(data), {"calls": len(run.tool_calls)})

    def value(self, reply: ToolCallsReply, task: Task) -> tuple[float, dict[str, Any]]:
        details: dict[str, Any] = {
            "calls": [
                {"tool": c.tool, "appropriate": c.appropriate, "reason": c.reason} for c in reply.calls
            ],
            "missing_tools": reply.missing_tools,
        }
        if not reply.calls:
            return (0.0 if reply.missing_tools else 1.0), details
        return sum(1 for c in reply.calls if c.appropriate) / len(reply.calls), details

    def reason(self, reply: ToolCallsReply) -> str:
        return reply.reason.strip()

    async def steps(self, ask: Ask[Any], task: Task) -> ToolCallsReply:
        return await ask_once(self, ask, task)


def as_tool_list(tools: Sequence[str] | Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """`available_tools` as (name, description): a mapping, or names ("name: description" allowed)."""
    if tools is None:
        return ()
    if isinstance(tools, Mapping):
        return tuple((str(name), str(text)) for name, text in tools.items())
    found = []
    for entry in tools:
        name, _, text = str(entry).partition(":")
        found.append((name.strip(), text.strip()))
    return tuple(found)
