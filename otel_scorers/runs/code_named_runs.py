"""A run named only by its span's name when that name is a path to code: a tracer of any code may
name an agent's span after the function it traced, qualified (`agents.run.Runner.run_sync`: a
module, a class, a method). That names no agent; the runs joined into it as its steps
(`invocations.py`: the turns of its loop, asked the same request) name their agent by a key of
their own: the first of them names the run, and a turn of another agent than the turn before it
took the conversation over, a handoff (the last turn's agent answered)."""

from __future__ import annotations

import re
from itertools import pairwise

from otel_scorers.model import Handoff
from otel_scorers.runs.run_parts import RunParts, agent_name_of

#: A lower-case module, then at least two more dotted identifiers (a class and a method, or more
#: modules): `agents.run.Runner.run_sync`.
_CODE_PATH = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){2,}$")


class FirstJoined:
    """The steps joined into each run named by a path to code, and their agents' names."""

    def __init__(self) -> None:
        self._turns: dict[int, list[tuple[int, str]]] = {}

    def joined(self, step: RunParts, outer: RunParts) -> None:
        """Note that `step` joined `outer`: called for every step, it looks further only for a
        run whose span's name is shaped as a path to code."""
        if outer.given_name is not None or not _CODE_PATH.match(outer.span.name):
            return
        name = agent_name_of(step)
        if name is not None and name != step.span.name and agent_name_of(outer) == outer.span.name:
            self._turns.setdefault(outer.span.span_id, []).append((step.span.start_ns, name))

    def name(self, runs: dict[int, RunParts]) -> None:
        """Name each such run still in `runs` by the agent of the first step joined into it; each
        change of agent from one step to the next is a handoff, where the run has none."""
        for span_id, turns in self._turns.items():
            parts = runs.get(span_id)
            if parts is None or parts.given_name is not None:
                continue
            turns.sort()
            parts.given_name = turns[0][1]
            if parts.handoffs:
                continue
            for (_, before), (start_ns, after) in pairwise(turns):
                if after != before:
                    parts.handoffs.append(Handoff(before, after, start_ns))
            if parts.handoffs:
                parts.final_name = turns[-1][1]
