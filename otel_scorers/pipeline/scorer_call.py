"""Calling a scorer: a binding's scorer on a run (or a conversation) as that binding's `Score`.

`evaluate(binding, run)` turns whatever the scorer returns, raises or fails to return in time into
a `Score`, labelled against the binding's threshold; a field the trace did not carry skips it; an
asynchronous scorer's coroutine travels to the one that awaits it in an `Unawaited`. Never an
exception: a failing scorer is an error result. Which runs a binding scores is `selection/`'s.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Generic, TypeVar

from otel_scorers.model import AgentRun, Score, ScoreError, higher_is_worse, passes
from otel_scorers.runs.deep_values import tool_values_within_depth
from otel_scorers.scorers.judge import provider
from otel_scorers.scorers.judge.errors import JudgeError, redact
from otel_scorers.scorers.offloaded_check import OffloadedCheck
from otel_scorers.scorers.protocol import ScoreResult
from otel_scorers.scorers.quick_check import Check
from otel_scorers.selection.binding import Binding

T = TypeVar("T")
S = TypeVar("S")
_MISSING_REASON = {
    "output": "the trace did not carry the run's output (content capture off or unreadable)",
    "input": "the trace did not carry the run's input (content capture off or unreadable)",
    "tool_errors": "the trace did not say whether the run's tool calls failed (content capture off)",
    "tool_calls": "the trace did not carry the run's tool calls (content capture off)",
    "tool_arguments": "the trace did not carry the run's tool arguments (content capture off)",
    "tool_results": "the trace did not carry the run's tool results (content capture off)",
}
#: For a field the run's instrumentation never writes (`AgentRun.unrecorded`).
_UNRECORDED_REASON = "the run's instrumentation does not record its {field} (whatever the capture settings)"


def evaluate(binding: Binding, run: AgentRun) -> Score | Awaitable[Score]:
    """The score, directly for synchronous scorers, as an awaitable for asynchronous ones."""
    missing = run.missing and binding.scorer.needs & run.missing
    if missing:
        field_name = sorted(missing)[0]
        if field_name in run.unrecorded:
            reason = _UNRECORDED_REASON.format(field=field_name.replace("_", " "))
        elif field_name in run.text_sources:  # the span held a structure, not text
            reason = f"the run's {field_name} could not be found: {run.text_sources[field_name]}"
        else:
            reason = _MISSING_REASON.get(field_name, f"the trace did not carry the run's {field_name}")
        return Score(binding.name, skipped=reason, evaluator_version=binding.evaluator_version)
    if binding.context is not None:
        given = binding.context(run)
        if given is not None:
            run = replace(run, context=given)
    scorer = binding.scorer
    if type(scorer) is Check:  # a quick check's own function, without the method around it
        return call(binding, scorer.score_run, run)
    if binding.lane != "inline" and not isinstance(scorer, OffloadedCheck):
        # A user's code or a judge's prompt, which may write values out whole; the checks bound
        # what they read themselves (`bounded_schema.check_size`: a document too deep is an error).
        run = tool_values_within_depth(run)
    return call(binding, scorer.score, run)


def call(binding: Binding, score: Callable[[S], Any], subject: S) -> Score | Awaitable[Score]:
    """`score(subject)` as this binding's `Score`: timed, labelled, within its timeout, an
    error score for whatever it raises or returns wrong. The one implementation, for runs
    (`evaluate`) and for conversations (`ConversationBinding`)."""
    start_ns = time.time_ns()
    started = time.perf_counter()
    try:
        result = score(subject)
    except TimeoutError as exc:  # a check that gave up in time (a regular expression)
        error = ScoreError(
            "timeout", redact(str(exc)) or f"scorer did not finish within {binding.timeout_s:g}s"
        )
        return Score(
            binding.name,
            error=error,
            duration_s=time.perf_counter() - started,
            start_ns=start_ns,
            evaluator_version=binding.evaluator_version,
            sampling_probability=binding.fixed_probability,
        )
    except Exception as exc:
        return error_of(binding, exc, time.perf_counter() - started, start_ns)
    duration_s = time.perf_counter() - started
    if type(result) is Score:
        scorer = binding.scorer
        if type(scorer) is Check and scorer.fresh_scores and result.value is not None:
            # A quick check's score, made for this call alone (`Check.fresh_scores`): made the
            # binding's in place, as `to_score` makes a copy of any other.
            result.scorer = binding.name
            result.label = result.label or label(binding, result.value)
            result.duration_s = result.duration_s or duration_s
            result.start_ns = result.start_ns or start_ns
            result.sampling_probability = binding.fixed_probability
            result.evaluator_version = binding.evaluator_version
            result.binary = scorer.binary
            return result
    # A check's `Score` first: `isawaitable` walks ABCs, and most results are scores.
    elif type(result) is not float and inspect.isawaitable(result):
        return _finish(binding, Unawaited(result), started, start_ns)
    return to_score(binding, result, duration_s, start_ns)


async def _finish(
    binding: Binding, unawaited: Unawaited[ScoreResult], started: float, start_ns: int
) -> Score:
    pending = unawaited.take()
    if binding.lane == "judge":
        not_loaded = await judge_client_loaded(binding.name, pending, start_ns)
        if not_loaded is not None:
            return not_loaded
        started = time.perf_counter()  # the score's deadline starts once the client is there
    result, failed = await within_timeout(pending, binding.timeout_s, binding.name, started, start_ns)
    if failed is not None:  # an error stands for the runs not sampled as any score does
        return replace(
            failed,
            evaluator_version=binding.evaluator_version,
            sampling_probability=binding.fixed_probability,
        )
    return to_score(binding, result, time.perf_counter() - started, start_ns)


def error_of(binding: Binding, exc: BaseException, duration_s: float, start_ns: int = 0) -> Score:
    failed = error_score(binding.name, exc, duration_s, start_ns, binding.fixed_probability)
    failed.evaluator_version = binding.evaluator_version
    return failed


def to_score(binding: Binding, result: Any, duration_s: float, start_ns: int = 0) -> Score:
    if isinstance(result, Score):
        if result.value is None and result.error is None and result.skipped is None:
            return _invalid_value(binding, "Score has no value", start_ns)
        verdict = result.label or (label(binding, result.value) if result.value is not None else None)
        if type(result) is not Score:
            return _own_subclass(binding, result, verdict, duration_s, start_ns)
        # As `replace` does, without its per-call walk over the fields (twice per check and run).
        return Score(
            binding.name,
            result.value,
            verdict,
            result.reason,
            result.details,
            result.error,
            result.skipped,
            result.duration_s or duration_s,
            result.usage,
            result.start_ns or start_ns,
            binding.fixed_probability,
            binding.evaluator_version,
            binding.scorer.binary,
        )
    if isinstance(result, bool):
        value = 1.0 if result else 0.0
    elif isinstance(result, (int, float)) and math.isfinite(result):
        value = float(result)
    else:
        return _invalid_value(
            binding, f"scorer returned {result!r}; expected a number, bool or Score", start_ns, duration_s
        )
    # A bool is a verdict: pass/fail like a check's, whatever the scorer declared.
    verdict = ("pass" if result else "fail") if isinstance(result, bool) else label(binding, value)
    return Score(
        binding.name,
        value=value,
        label=verdict,
        duration_s=duration_s,
        start_ns=start_ns,
        sampling_probability=binding.fixed_probability,
        evaluator_version=binding.evaluator_version,
        binary=binding.scorer.binary,
    )


def _own_subclass(
    binding: Binding, result: Score, label: str | None, duration_s: float, start_ns: int
) -> Score:
    """A subclass of `Score` made this binding's: it keeps its type and its own fields."""
    return replace(
        result,
        scorer=binding.name,
        label=label,
        duration_s=result.duration_s or duration_s,
        start_ns=result.start_ns or start_ns,
        sampling_probability=binding.fixed_probability,
        evaluator_version=binding.evaluator_version,
        binary=binding.scorer.binary,
    )


def _invalid_value(binding: Binding, message: str, start_ns: int, duration_s: float = 0.0) -> Score:
    """The error score of a scorer whose result is not a verdict."""
    return Score(
        binding.name,
        error=ScoreError("invalid_value", message),
        duration_s=duration_s,
        start_ns=start_ns,
        evaluator_version=binding.evaluator_version,
        sampling_probability=binding.fixed_probability,
    )


def label(binding: Binding, value: float) -> str | None:
    if binding.threshold is not None:
        return "pass" if passes(value, binding.threshold, higher_is_worse(binding.scorer)) else "fail"
    if binding.scorer.binary:
        return "pass" if value >= 1.0 else "fail"
    return None


def error_score(
    name: str,
    exc: BaseException,
    duration_s: float,
    start_ns: int = 0,
    sampling_probability: float | None = None,
) -> Score:
    """A scorer's exception as an error score; its message may quote a key (a custom scorer that
    called a provider itself), so it is redacted as the judge's errors are."""
    return Score(
        name,
        error=ScoreError(type(exc).__name__, redact(str(exc))[:1000]),
        duration_s=duration_s,
        start_ns=start_ns,
        sampling_probability=sampling_probability,
    )


#: How long a judged score waits for the judge's client to load (litellm's first import: seconds,
#: tens of them on a loaded machine) before its own deadline starts; a stuck import still ends, in
#: an error that names it.
JUDGE_CLIENT_LOAD_S = 120.0


class Unawaited(Generic[T]):
    """A scorer's awaitable on its way to the coroutine that awaits it (`_finish`). If
    that coroutine never starts (a shutdown cancels the scores still waiting, some before their
    task has run), this closes it when dropped: a score that will not be made is not reported as
    a coroutine never awaited."""

    __slots__ = ("_awaitable",)

    def __init__(self, awaitable: Awaitable[T]) -> None:
        self._awaitable: Awaitable[T] | None = awaitable

    def take(self) -> Awaitable[T]:
        awaitable, self._awaitable = self._awaitable, None
        assert awaitable is not None, "taken once"
        return awaitable

    def __del__(self) -> None:
        if inspect.iscoroutine(self._awaitable):
            self._awaitable.close()


async def judge_client_loaded(name: str, pending: Awaitable[Any], start_ns: int) -> Score | None:
    """Wait for the judge's client, off the loop (the first time only; then it is there): None
    once it is loaded, else the error score of `name`, `pending` closed unawaited and unwarned."""
    if provider.litellm_loaded() or not provider.litellm_installed():  # nothing to load, or can't
        return None
    started = time.perf_counter()
    error: ScoreError | None = None
    try:
        await asyncio.wait_for(provider.load_litellm(), JUDGE_CLIENT_LOAD_S)
    except asyncio.TimeoutError:
        error = ScoreError(
            "timeout",
            f"the judge's client (litellm) did not load within {JUDGE_CLIENT_LOAD_S:g}s, its first import; "
            "no request was sent",
        )
    except JudgeError as exc:  # its import failed
        error = ScoreError(exc.type, exc.message)
    except Exception as exc:  # an import that raises: an error score, never an exception upward
        error = ScoreError(
            "judge_unavailable", f"the judge's client (litellm) failed to load: {redact(str(exc))}"
        )
    if error is None:
        return None
    if inspect.iscoroutine(pending):
        pending.close()
    return Score(name, error=error, duration_s=time.perf_counter() - started, start_ns=start_ns)


async def within_timeout(
    pending: Awaitable[T], timeout_s: float, name: str, started: float, start_ns: int
) -> tuple[T | None, Score | None]:
    """`pending`'s result within `timeout_s`, or (None, the error score of `name`) when it timed
    out or raised."""
    try:
        return await asyncio.wait_for(pending, timeout_s), None
    except asyncio.TimeoutError:
        timed_out = ScoreError("timeout", f"scorer did not finish within {timeout_s:g}s")
        return None, Score(name, error=timed_out, duration_s=time.perf_counter() - started, start_ns=start_ns)
    except Exception as exc:
        return None, error_score(name, exc, time.perf_counter() - started, start_ns)
