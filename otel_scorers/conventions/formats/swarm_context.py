"""The context a multi-agent Swarm gives each of its agents around the user's request.

Strands' Swarm sends every agent it runs "Context:\n[Handoff Message: ...\n\n]User Request:
<request>\n\n..." as the agent's input, whichever instrumentation records it (Strands' own spans,
OpenInference's span processor over them): the run's request is the user's, inside it.
"""

from __future__ import annotations

#: What follows the user's request in the context a Swarm gives each of its agents.
_SWARM_SECTIONS = (
    "\n\nPrevious agents who worked on this: ",
    "\n\nShared knowledge from previous agents:\n",
    "\n\nOther agents available for collaboration:\n",
    "\n\nYou have access to swarm coordination tools",
)


def swarm_request(text: str | None) -> str | None:
    """The user's request inside the context a Strands Swarm sends its agents
    ("Context:\n[Handoff Message: ...\n\n]User Request: <request>\n\n..."), or None."""
    if text is None or not text.startswith("Context:\n"):
        return None
    start = text.find("User Request: ")
    if start < 0:
        return None
    start += len("User Request: ")
    ends = [end for section in _SWARM_SECTIONS if (end := text.find(section, start)) >= 0]
    return text[start : min(ends)] if ends else text[start:].rstrip("\n")
