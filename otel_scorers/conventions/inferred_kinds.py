"""The kind values an inferred vocabulary reads: which name an agent run, a tool call, a model
call (`inferred.py` reads a trace's kind keys by them; the sidecar's screen, `span_marks`, too)."""

from __future__ import annotations

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
    }
)
#: Every kind value that names an agent run, of any tier.
ANY_RUN_KIND: frozenset[str] = frozenset().union(*RUN_KINDS)
#: Every kind value the inference reads.
KINDS: frozenset[str] = ANY_RUN_KIND | TOOL_KINDS | MODEL_KINDS


def normalised(value: Any) -> str | None:
    """A kind value as compared: JSON quotes off, lower case, `-` and spaces as `_`."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text: str = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return text.strip().lower().replace("-", "_").replace(" ", "_")
