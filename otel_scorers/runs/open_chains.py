"""The chains of model calls waiting for their tools' results (`call_chains`): least recently
continued first, found by the ids of the tool calls their last call asked for, and counted in
bytes.

A model call continues only a chain whose last call asked for a tool it sends a result of, so a
call finds the chains it may continue by its results' ids, one lookup each, however many chains
are open: a stream that keeps thousands of chains open costs each call no more than one does.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

#: What an index entry takes beyond the id it is kept under (shared with the call's own ids): its
#: dict slot and the list of chains asking for that id.
INDEX_ENTRY_BYTES = 160


@dataclass(slots=True)
class _Open(Generic[T]):
    chain: T
    asked: frozenset[str]
    size: int
    #: When it was put in: the newest first among the chains one call may continue.
    order: int


def entry_bytes(size: int, asked: frozenset[str]) -> int:
    """What a chain of `size` bytes asking for `asked` holds once open, its index entries counted."""
    return size + INDEX_ENTRY_BYTES * len(asked)


class OpenChains(Generic[T]):
    """Open chains by their last call's span id, oldest first, with the bytes they hold."""

    def __init__(self) -> None:
        self._open: OrderedDict[int, _Open[T]] = OrderedDict()
        # Each id's chains in the order they were put in (a dict as an ordered set: a chain is
        # taken out in one step, however many others asked for the same id).
        self._by_asked: dict[str, dict[int, None]] = {}
        self._order = 0
        #: What the open chains hold, as they were counted when put in (`held_bytes`).
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._open)

    def put(self, key: int, chain: T, asked: frozenset[str], size: int) -> None:
        """Open `chain` under its last call's span id `key`, found by `asked`, holding `size`
        bytes (its index entries counted with them). A span id seen twice replaces the chain."""
        if key in self._open:
            self.take(key)
        self._order += 1
        size = entry_bytes(size, asked)
        self._open[key] = _Open(chain, asked, size, self._order)
        for tool_call_id in asked:
            self._by_asked.setdefault(tool_call_id, {})[key] = None
        self.bytes += size

    def asking(self, returned: Iterable[str]) -> list[tuple[int, T]]:
        """The open chains whose last call asked for one of the `returned` tool calls, the most
        recently continued first."""
        keys = {key for tool_call_id in returned for key in self._by_asked.get(tool_call_id, ())}
        found = sorted(keys, key=lambda key: self._open[key].order, reverse=True)
        return [(key, self._open[key].chain) for key in found]

    def take(self, key: int) -> T:
        """Close the chain under `key`: it is continued, or read as it is."""
        entry = self._open.pop(key)
        for tool_call_id in entry.asked:
            keys = self._by_asked[tool_call_id]
            del keys[key]
            if not keys:
                del self._by_asked[tool_call_id]
        self.bytes -= entry.size
        return entry.chain

    def oldest(self) -> tuple[int, T] | None:
        """The least recently continued chain, if any."""
        for key, entry in self._open.items():
            return key, entry.chain
        return None

    def take_oldest(self) -> T:
        return self.take(next(iter(self._open)))
