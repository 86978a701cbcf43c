"""The kind values an inferred vocabulary reads: which name an agent run, a tool call, a model
call (`inferred.py` reads a trace's kind keys by them; the sidecar's screen, `span_marks`, too).
A value of dotted parts names the kind of the part before an act (`agentic.invocation`: an
agent's run; `agentic.tool.invocation`: a tool call), else of a first part naming one, qualified
(`workflow.langgraph`, `inference.framework`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: Kind values (lower case, `-` and spaces as `_`) that name an agent run, in tiers: where values
#: of the first tier are present, those of the second are steps or wrappers of it.
RUN_KINDS: tuple[frozenset[str], ...] = (
    frozenset({"agent", "agent_run", "invoke_agent", "run_agent"}),
    frozenset({"flow", "workflow", "chat_client", "crew", "team"}),
)
#: Kind values naming a composed unit of work (LangChain's chain, a traced function's `chain`
#: type): an agent run only where a kind key names no run of `RUN_KINDS` and no model call, names
#: tool calls, and no framework's metadata marks an agent's graph among the spans
#: (`inferred._kind_key`); a key naming model calls too leaves its runs to the rules every reader
#: shares (the span whose model calls are its own).
CHAIN_KINDS = frozenset({"chain"})
TOOL_KINDS = frozenset({"tool", "tool_call", "function", "function_call", "execute_tool", "tool_use"})
MODEL_KINDS = frozenset(
    {
        "llm",
        "model",
        "generation",
        "chat",
        "chat_model",
        "generate",
        "completion",
        "chat_completion",
        "call_llm",
        "inference",
    }
)
#: Every kind value that names an agent run, of any tier.
ANY_RUN_KIND: frozenset[str] = frozenset().union(*RUN_KINDS)
#: Every kind value the inference reads.
KINDS: frozenset[str] = ANY_RUN_KIND | TOOL_KINDS | MODEL_KINDS


#: The last part of a dotted kind value that says the part before it is invoked, not a kind of its
#: own (`agentic.tool.invocation`).
ACTS = frozenset({"invocation", "invoke", "call", "run", "execution", "execute"})
_PARTS = re.compile(r"[.:/]")


def normalised(value: Any) -> str | None:
    """A kind value as compared: JSON quotes off, lower case, `-` and spaces as `_`; a value of
    dotted parts as the kind it names (`dotted_kind`), else as written. Read once per text: kind
    values repeat."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    return _normalised_text(value)


@lru_cache(maxsize=4096)
def _normalised_text(value: str) -> str:
    text: str = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    text = text.strip().lower().replace("-", "_").replace(" ", "_")
    if text in KINDS or not _PARTS.search(text):
        return text
    return dotted_kind(_PARTS.split(text)) or text


def dotted_kind(parts: list[str]) -> str | None:
    """The kind a value of parts names: the part before an act (`agentic.invocation`,
    `agentic.tool.invocation`: the agent's, the tool's, an adjective read as its noun), else a
    first part naming a kind, qualified (`workflow.langgraph`, `inference.framework`); None for any
    other (`agentic.turn` says no kind of work)."""
    if len(parts) >= 2 and parts[-1] in ACTS:
        before = parts[-2]
        noun = before[:-2] if before.endswith("ic") else before
        return before if before in KINDS else noun if noun in KINDS else None
    return parts[0] if parts[0] in KINDS else None
