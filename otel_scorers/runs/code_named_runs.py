"""A run named only by its span's name when that name is a path to code: a tracer of any code may
name an agent's span after the function it traced, qualified (`agents.run.Runner.run_sync`: a
module, a class, a method). That names no agent; the runs joined into it as its steps
(`invocations.py`: the turns of its loop, asked the same request) name their agent by a key of
their own, and the first of them names the run."""

from __future__ import annotations

import re

from otel_scorers.runs.run_parts import RunParts, agent_name_of

#: A lower-case module, then at least two more dotted identifiers (a class and a method, or more
#: modules): `agents.run.Runner.run_sync`.
_CODE_PATH = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){2,}$")


class FirstJoined:
    """The first step joined into each run named by a path to code, and its agent's name."""

    def __init__(self) -> None:
        self._first: dict[int, tuple[int, str]] = {}

    def joined(self, step: RunParts, outer: RunParts) -> None:
        """Note that `step` joined `outer`: called for every step, it looks further only for a
        run whose span's name is shaped as a path to code."""
        if outer.given_name is not None or not _CODE_PATH.match(outer.span.name):
            return
        key = outer.span.span_id
        found = self._first.get(key)
        if found is not None and found[0] <= step.span.start_ns:
            return
        name = agent_name_of(step)
        if name is not None and name != step.span.name and agent_name_of(outer) == outer.span.name:
            self._first[key] = (step.span.start_ns, name)

    def name(self, runs: dict[int, RunParts]) -> None:
        """Name each such run still in `runs` by the agent of the first step joined into it."""
        for span_id, (_, name) in self._first.items():
            parts = runs.get(span_id)
            if parts is not None and parts.given_name is None:
                parts.given_name = name
