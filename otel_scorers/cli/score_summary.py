"""What a batch of scores came to, per scorer, and the gates a CI run holds it to.

`otel-scorers score` tallies every score it writes: how many runs each scorer scored (for a
conversation scorer, how many conversations), their labels, how many it skipped or failed on, and
the mean value. A gate (`--fail-under`) names a
scorer, a statistic and the least it may be:

- `SCORER=0.8`, or `SCORER:mean=0.8`: the mean value of the scorer's scored runs;
- `SCORER:pass_rate=0.9`: the share of its `pass`/`fail` labels that are `pass`.

Skipped runs and scorer errors are in neither statistic (they are counted and shown beside
them); a gated scorer with nothing to compute the statistic from fails its gate, so an empty or
broken input never passes a CI run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from otel_scorers.conversation_turns import Conversation
from otel_scorers.human_text import counted, cut, printable
from otel_scorers.model import AgentRun, Score

Statistic = Literal["mean", "pass_rate"]
STATISTICS: tuple[Statistic, ...] = ("mean", "pass_rate")
#: Failing runs kept per scorer, to show in a report (the count is always whole).
_MAX_FAILURES_KEPT = 20
#: Characters kept of a failing run's reason and agent name: a report of 20 failures per scorer
#: stays small (a reason can quote a tool name or an answer of megabytes; the scores have it whole).
MAX_REASON_CHARS = 1_000
MAX_NAME_CHARS = 200


@dataclass(frozen=True, slots=True)
class Gate:
    """The least `statistic` of `scorer`'s scores may be."""

    scorer: str
    statistic: Statistic
    threshold: float


def parse_gate(text: str) -> Gate:
    """`SCORER=THRESHOLD` (the mean), `SCORER:mean=THRESHOLD` or `SCORER:pass_rate=THRESHOLD`."""
    name, equals, number = text.rpartition("=")
    if not equals or not name:
        raise ValueError(f"expected SCORER=THRESHOLD (e.g. no_tool_errors=0.9), got {text!r}")
    statistic: Statistic = "mean"
    head, colon, tail = name.rpartition(":")
    if colon and tail in STATISTICS:
        name, statistic = head, ("mean" if tail == "mean" else "pass_rate")
    try:
        threshold = float(number)
    except ValueError:
        raise ValueError(f"the threshold of {text!r} is not a number: {number!r}") from None
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ValueError(f"the threshold of {text!r} must be between 0 and 1, got {number}")
    if not name:
        raise ValueError(f"no scorer name in {text!r}")
    return Gate(name, statistic, threshold)


@dataclass(frozen=True, slots=True)
class Failure:
    """A run (or conversation) a scorer failed (label `fail`) or failed on (an error), for
    reports. A conversation is named by its id and its last run's trace and span."""

    trace_id: str
    span_id: str
    agent_name: str | None
    reason: str
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    """What a score was of: a run, or a conversation (by its last run)."""

    trace_id: str
    span_id: str
    agent_name: str | None
    conversation_id: str | None = None

    @classmethod
    def run(cls, run: AgentRun) -> Scored:
        return cls(run.trace_id_hex, run.span_id_hex, run.agent_name)

    @classmethod
    def conversation(cls, conversation: Conversation) -> Scored:
        last = conversation.last
        return cls(f"{last.trace_id:032x}", f"{last.span_id:016x}", conversation.agent_name, conversation.id)


@dataclass
class ScorerTally:
    """One scorer's scores so far (`per`: what it scores, runs or conversations)."""

    scorer: str
    per: Literal["run", "conversation"] = "run"
    scored: int = 0
    skipped: int = 0
    errors: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    total: float = 0.0
    valued: int = 0
    #: Sum of the squared values, for the variance a baseline comparison needs (`score_baseline`).
    squares: float = 0.0
    #: The least and the greatest value scored: the range a mean's interval stays within.
    lowest: float | None = None
    highest: float | None = None
    failures: list[Failure] = field(default_factory=list)
    failure_count: int = 0
    #: Runs the binding did not score: `sampled_out`, `filtered`, `rate_limited`.
    not_admitted: Counter[str] = field(default_factory=Counter)

    def add(self, scored: Scored, score: Score) -> None:
        if score.skipped is not None:
            self.skipped += 1
            return
        if score.error is not None:
            self.errors += 1
            self._keep(scored, f"error {score.error.type}: {score.error.message}")
            return
        self.scored += 1
        if score.label is not None:
            self.labels[score.label] += 1
            if score.label == "fail":
                self._keep(scored, score.reason or "fail")
        if score.value is not None:
            self.total += score.value
            self.squares += score.value * score.value
            self.valued += 1
            self.lowest = score.value if self.lowest is None else min(self.lowest, score.value)
            self.highest = score.value if self.highest is None else max(self.highest, score.value)

    def _keep(self, scored: Scored, reason: str) -> None:
        self.failure_count += 1
        if len(self.failures) < _MAX_FAILURES_KEPT:
            agent = cut(scored.agent_name, MAX_NAME_CHARS) if scored.agent_name is not None else None
            conversation = scored.conversation_id
            self.failures.append(
                Failure(
                    scored.trace_id,
                    scored.span_id,
                    agent,
                    cut(reason, MAX_REASON_CHARS),
                    cut(conversation, MAX_NAME_CHARS) if conversation is not None else None,
                )
            )

    @property
    def labels_text(self) -> str:
        """`fail 1, pass 5`: each label and its count, or `-` for none."""
        return ", ".join(f"{label} {count}" for label, count in sorted(self.labels.items())) or "-"

    @property
    def only_errors(self) -> bool:
        """The scorer failed on every run it tried (and it tried one): it measured nothing. Runs
        it skipped (lacking what it needs) do not hide a scorer that never worked."""
        return self.errors > 0 and self.scored == 0

    @property
    def failed_text(self) -> str:
        """`it failed on all 5 runs it tried (1 skipped)`."""
        skipped = f" ({self.skipped} skipped)" if self.skipped else ""
        return f"it failed on {'the' if self.errors == 1 else 'all'} {counted(self.errors, self.per)} it tried{skipped}"

    @property
    def mean(self) -> float | None:
        return self.total / self.valued if self.valued else None

    @property
    def pass_rate(self) -> float | None:
        judged = self.labels["pass"] + self.labels["fail"]
        return self.labels["pass"] / judged if judged else None

    def statistic(self, statistic: Statistic) -> float | None:
        return self.mean if statistic == "mean" else self.pass_rate


@dataclass(frozen=True, slots=True)
class GateResult:
    """A gate held against its scorer's tally."""

    gate: Gate
    value: float | None

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.gate.threshold

    @property
    def measured(self) -> str:
        """What was measured against what was needed, e.g. `mean 0.833 < 0.9`."""
        if self.value is None:
            missing = "no scored runs" if self.gate.statistic == "mean" else "no pass/fail labels"
            return f"{self.gate.statistic}: {missing} (needs >= {self.gate.threshold:g})"
        sign = ">=" if self.passed else "<"
        return f"{self.gate.statistic} {self.value:.3f} {sign} {self.gate.threshold:g}"

    def __str__(self) -> str:
        return f"{self.measured}: {'ok' if self.passed else 'FAIL'}"


class ScoreSummary:
    """Tallies, per scorer in the order the bindings were given (the run scorers', then the
    conversation scorers'), and the gates' results."""

    def __init__(
        self, scorers: Sequence[str], gates: Sequence[Gate] = (), conversation_scorers: Sequence[str] = ()
    ) -> None:
        self.tallies = {name: ScorerTally(name) for name in scorers}
        self.tallies.update((name, ScorerTally(name, "conversation")) for name in conversation_scorers)
        self.gates = tuple(gates)
        self.runs = 0
        self.conversations = 0

    def add_run(self, run: AgentRun, scores: Iterable[Score]) -> None:
        self.runs += 1
        self._add(Scored.run(run), scores, "run")

    def not_admitted(self, scorer: str, why: str) -> None:
        """`scorer`'s binding did not score a run, for `why` (`sampled_out`, ...)."""
        tally = self.tallies.get(scorer)
        if tally is None:
            tally = self.tallies[scorer] = ScorerTally(scorer)
        tally.not_admitted[why] += 1

    def add_conversation(self, conversation: Conversation, scores: Iterable[Score]) -> None:
        self.conversations += 1
        self._add(Scored.conversation(conversation), scores, "conversation")

    def _add(self, scored: Scored, scores: Iterable[Score], per: Literal["run", "conversation"]) -> None:
        for score in scores:
            tally = self.tallies.get(score.scorer)
            if tally is None:
                tally = self.tallies[score.scorer] = ScorerTally(score.scorer, per)
            tally.add(scored, score)

    def headline(self) -> str:
        """`scored 6 runs, 22 scores`, with the conversations when there were conversation scorers."""
        conversations = any(tally.per == "conversation" for tally in self.tallies.values())
        return (
            f"scored {counted(self.runs, 'run')}"
            + (f" and {counted(self.conversations, 'conversation')}" if conversations else "")
            + f", {counted(self.scores, 'score')}"
        )

    @property
    def scores(self) -> int:
        return sum(t.scored + t.skipped + t.errors for t in self.tallies.values())

    def only_errors(self) -> list[str]:
        """The scorers that failed on every run they tried: they measured nothing."""
        return [name for name, tally in self.tallies.items() if tally.only_errors]

    def gate_results(self) -> list[GateResult]:
        return [
            GateResult(gate, self.tallies[gate.scorer].statistic(gate.statistic))
            if gate.scorer in self.tallies
            else GateResult(gate, None)
            for gate in self.gates
        ]

    @property
    def passed(self) -> bool:
        return all(verdict.passed for verdict in self.gate_results())

    def table(self) -> str:
        """One row per scorer: scored, mean, labels, skipped, errors, and its gates' results."""
        verdicts: dict[str, list[GateResult]] = {}
        for verdict in self.gate_results():
            verdicts.setdefault(verdict.gate.scorer, []).append(verdict)
        header: tuple[str, ...] = ("scorer", "scored", "mean", "labels", "skipped", "errors", "gate")
        # the runs a binding sampled out, when one did (a budget-paced binding, a rate below 1)
        sampled = any(tally.not_admitted["sampled_out"] for tally in self.tallies.values())
        if sampled:
            header = (*header[:6], "sampled out", header[6])
        rows = [header]
        for name, tally in self.tallies.items():
            mean = tally.mean
            gates = "; ".join(str(v) for v in verdicts.get(name, ())) or "-"
            rows.append(
                (
                    printable(cut(name, MAX_NAME_CHARS)),  # one line each, of a bounded width
                    str(tally.scored),
                    f"{mean:.3f}" if mean is not None else "-",
                    printable(cut(tally.labels_text, MAX_REASON_CHARS)),
                    str(tally.skipped),
                    str(tally.errors),
                    *([str(tally.not_admitted["sampled_out"])] if sampled else []),
                    gates,
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        right = {1, 2, 4, 5, 6} if sampled else {1, 2, 4, 5}  # numbers line up on the right
        lines = []
        for row in rows:
            cells = [
                cell.rjust(w) if i in right else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)
