"""The two sides of the agreement join: a person's `Label` and what the join keeps of a judge's
score (`JudgeScore`), and the `Pair` they make."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Label:
    """A person's verdict on one run (`trace_id`, `span_id`) or conversation (`conversation_id`)
    for `scorer`: a `value` and/or a `label`, by `reviewer`, with a `comment`."""

    scorer: str
    trace_id: int = 0
    span_id: int = 0
    conversation_id: str | None = None
    value: float | None = None
    label: str | None = None
    reviewer: str | None = None
    comment: str | None = None

    def __post_init__(self) -> None:
        if not self.scorer:
            raise ValueError("a label needs the scorer it is about")
        if self.value is None and self.label is None:
            raise ValueError(f"a label for {self.scorer!r} needs a value or a label")
        if self.value is not None and not math.isfinite(self.value):
            raise ValueError(f"a label's value must be a finite number, got {self.value!r}")
        if not (self.trace_id and self.span_id) and not self.conversation_id:
            raise ValueError(
                f"a label for {self.scorer!r} needs the run's trace and span ids or a conversation id"
            )

    @property
    def key(self) -> tuple[Any, ...]:
        if self.trace_id and self.span_id:
            return (self.scorer, self.trace_id, self.span_id)
        return (self.scorer, "conversation", self.conversation_id)


@dataclass(frozen=True, slots=True)
class JudgeScore:
    """What the join keeps of a judge's score: enough to compare and to weight it."""

    scorer: str
    trace_id: int
    span_id: int
    value: float | None
    label: str | None
    version: str = ""
    probability: float = 1.0
    conversation_id: str | None = None

    def join_keys(self) -> tuple[tuple[Any, ...], ...]:
        run = (self.scorer, self.trace_id, self.span_id)
        if self.conversation_id:
            return (run, (self.scorer, "conversation", self.conversation_id))
        return (run,)


@dataclass(frozen=True, slots=True)
class Pair:
    score: JudgeScore
    label: Label
