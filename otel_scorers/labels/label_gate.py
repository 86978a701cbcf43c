"""What a label must be before the agreement counts it: once, in range, of bounded text.

Labels come over OTLP, which delivers at least once: a record sent again (a Collector's retry, a
client that did not see the answer) is the same label, and counting it again would move κ and the
corrected estimates by nothing but the network. A label is known by its scorer, its run (or
conversation) and its reviewer: the first one counts, the rest are duplicates, counted apart.
The last `MAX_REMEMBERED` labels taken (at least half as many) are remembered, by 64-bit digests
of that identity: about 60 bytes each, some 6 MB at most.

Their content is untrusted too: a value is a finite number of at most `MAX_VALUE` in magnitude
(the sums of the figures stay finite), and within its scorer's range when the scorer has one
(`label_ranges`: 0 or 1 for a pass/fail scorer, 0 to 1 for the other built-ins); a label (`pass`, `fail`...) at most `MAX_LABEL_CHARS`
characters, and a scorer's people use at most `MAX_LABEL_NAMES` of them (the rest count as
`OTHER_LABELS`: each is a metric series); the scorer's name, the reviewer and the conversation id
at most `MAX_NAME_CHARS` (a longer conversation id takes the bounded form conversations use, so
that it still pairs), and the comment is cut to `MAX_COMMENT_CHARS`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from otel_scorers.conversation_turns import bounded_conversation_id
from otel_scorers.human_text import cut
from otel_scorers.labels.label_ranges import ValueRange, out_of_range

if TYPE_CHECKING:
    from otel_scorers.labels.join_records import Label

MAX_VALUE = 1e9
MAX_LABEL_CHARS = 64
MAX_LABEL_NAMES = 16
OTHER_LABELS = "(other)"
MAX_NAME_CHARS = 256
MAX_COMMENT_CHARS = 1000
MAX_REMEMBERED = 100_000


@dataclass
class Admitted:
    """What became of a batch of labels: those to count, and how many were not."""

    labels: list[Label] = field(default_factory=list)
    duplicates: int = 0
    refused: int = 0
    problem: str = ""
    #: Of `refused`, those whose value is outside their scorer's range.
    out_of_range: int = 0


class LabelGate:
    """Admits labels: each once, checked and bounded as above. Not thread-safe: its owner holds a
    lock around `admit`."""

    def __init__(self) -> None:
        # Two generations of identities: when the newer holds half the bound, the older is let go.
        self._seen: set[int] = set()
        self._older: set[int] = set()
        #: scorer -> the label names its people used, at most `MAX_LABEL_NAMES` each.
        self._names: dict[str, set[str]] = {}
        #: scorer -> the values its labels may take (`label_ranges`); a scorer not here: any.
        self.ranges: dict[str, ValueRange] = {}

    def admit(self, labels: Iterable[Label]) -> Admitted:
        admitted = Admitted()
        for label in labels:
            problem = _problem(label)
            if problem is None and label.scorer in self.ranges:
                problem = out_of_range(label, self.ranges[label.scorer])
                admitted.out_of_range += problem is not None
            if problem is not None:
                admitted.refused += 1
                admitted.problem = admitted.problem or problem
                continue
            label = self._bounded(label)
            identity = _identity(label)
            if identity in self._seen or identity in self._older:
                admitted.duplicates += 1
                continue
            self._seen.add(identity)
            if len(self._seen) >= MAX_REMEMBERED // 2:
                self._older, self._seen = self._seen, set()
            admitted.labels.append(label)
        return admitted

    def _bounded(self, label: Label) -> Label:
        changes: dict[str, str | None] = {}
        if label.comment is not None and len(label.comment) > MAX_COMMENT_CHARS:
            changes["comment"] = cut(label.comment, MAX_COMMENT_CHARS)
        if label.reviewer is not None and len(label.reviewer) > MAX_NAME_CHARS:
            changes["reviewer"] = cut(label.reviewer, MAX_NAME_CHARS)
        if label.conversation_id is not None and len(label.conversation_id) > MAX_NAME_CHARS:
            changes["conversation_id"] = bounded_conversation_id(label.conversation_id)[0]
        if label.label is not None:
            names = self._names.get(label.scorer)
            if names is None:
                names = self._names[label.scorer] = set()
            if label.label not in names:
                if len(names) < MAX_LABEL_NAMES:
                    names.add(label.label)
                else:
                    changes["label"] = OTHER_LABELS
        return replace(label, **changes) if changes else label  # type: ignore[arg-type]


def _problem(label: Label) -> str | None:
    """Why `label` is refused, or None."""
    if len(label.scorer) > MAX_NAME_CHARS:
        return f"a label's scorer name is {len(label.scorer):,} characters, more than {MAX_NAME_CHARS}"
    if label.label is not None and len(label.label) > MAX_LABEL_CHARS:
        return f"a label is {len(label.label):,} characters, more than {MAX_LABEL_CHARS}"
    if label.value is not None and not (math.isfinite(label.value) and abs(label.value) <= MAX_VALUE):
        return f"a label's value must be a finite number of at most {MAX_VALUE:g} in magnitude, got {label.value!r}"
    return None


def _identity(label: Label) -> int:
    """The label's scorer, run or conversation, and reviewer, as a 64-bit digest."""
    text = repr((label.key, label.reviewer)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")
