"""The values a person's label may give a scorer, known from the scorer itself:

- a binary scorer (its result pass/fail: `binary`): 0 or 1;
- a scorer that declares its `value_range` (lowest, highest): within it (a judged scorer: 0 to
  its `scale`; `turns`: any count);
- the other built-in scorers (checks, code scorers, the conversation rates): 0 to 1;
- a scorer of the user's own (a function, `llm_scorer`): any finite number, its values being its
  own to define.

A label outside its scorer's range is refused by the label gate, counted and said with the label
it was (`label_gate`): a value of 7 for a pass/fail check would move the mean difference and the
corrected estimate by what no score could be.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from otel_scorers.labels.join_records import Label
from otel_scorers.scorers.llm import LLMScorer
from otel_scorers.scorers.protocol import FunctionScorer, Requiring

if TYPE_CHECKING:
    from otel_scorers.conversations.source import ConversationSettings
    from otel_scorers.selection.binding import Binding

_BUILT_IN = "otel_scorers.scorers."


@dataclass(frozen=True, slots=True)
class ValueRange:
    lowest: float
    highest: float
    binary: bool = False

    def holds(self, value: float) -> bool:
        if self.binary:
            return value in (0.0, 1.0)
        return self.lowest <= value <= self.highest

    def __str__(self) -> str:
        return "0 or 1 (pass/fail)" if self.binary else f"{self.lowest:g} to {self.highest:g}"


BINARY = ValueRange(0.0, 1.0, binary=True)
UNIT = ValueRange(0.0, 1.0)


def value_range(scorer: object) -> ValueRange | None:
    """The values `scorer`'s labels may take (see the module's docstring); None: any."""
    if isinstance(scorer, Requiring):  # config's `needs:` around a scorer
        scorer = scorer.scorer
    if getattr(scorer, "binary", False) is True:
        return BINARY
    declared = getattr(scorer, "value_range", None)
    if isinstance(declared, tuple) and len(declared) == 2:
        return ValueRange(float(declared[0]), float(declared[1]))
    if isinstance(scorer, (FunctionScorer, LLMScorer)):
        return None
    return UNIT if type(scorer).__module__.startswith(_BUILT_IN) else None


def value_ranges(named: Iterable[tuple[str, object]]) -> dict[str, ValueRange]:
    """Per scorer name (a binding's), its labels' range, for the scorers that have one."""
    ranges: dict[str, ValueRange] = {}
    for name, scorer in named:
        found = value_range(scorer)
        if found is not None:
            ranges[name] = found
    return ranges


def out_of_range(label: Label, allowed: ValueRange) -> str | None:
    """Why `label`'s value is outside `allowed`, naming the label; None when it is within."""
    if label.value is None or allowed.holds(label.value):
        return None
    if label.trace_id and label.span_id:
        what = f"run {label.trace_id:032x}/{label.span_id:016x}"
    else:
        what = f"conversation {label.conversation_id!r}"
    by = f" by {label.reviewer!r}" if label.reviewer else ""
    return (
        f"the label of {label.scorer!r} for {what}{by} has the value {label.value:g}, "
        f"outside the scorer's range ({allowed})"
    )


def scoring_ranges(
    bindings: Iterable[Binding], conversations: ConversationSettings | None = None
) -> dict[str, ValueRange]:
    """`value_ranges` of a configuration's run and conversation scorers, by their names."""
    named: list[tuple[str, object]] = [(binding.name, binding.scorer) for binding in bindings]
    if conversations is not None:
        named += [(binding.name, binding.scorer) for binding in conversations.bindings]
    return value_ranges(named)
