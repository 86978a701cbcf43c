"""Kind keys an inferred vocabulary believes across traces (`inferred.py`).

A kind key is read as a vocabulary where a trace shows runs calling tools or models under it. A
trace in which an agent answered at once holds a run span and nothing it called: on its own it
says too little. Once the same key has named runs and their calls in an earlier trace, a later
trace's run under it is believed even when it calls nothing.
"""

from __future__ import annotations

#: How many kind keys (with their run values) a vocabulary inference believes at most.
_MAX_BELIEVED = 64


def believed(keys: set[tuple[str, frozenset[str]]], key: tuple[str, frozenset[str]]) -> None:
    """Remember that a kind key named runs (of these values) and the calls they make in a trace:
    in a later trace, a run of the same values that calls nothing (an agent that answered at
    once) is believed too; a run of other values is not (a key believed for its `agent` spans
    says nothing of its `chain` spans)."""
    if len(keys) < _MAX_BELIEVED:
        keys.add(key)
