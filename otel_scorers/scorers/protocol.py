"""The scorer seam: what the engine calls, and how a plain function becomes a scorer."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, overload, runtime_checkable

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.evaluator_version import Evaluator, evaluator_of, qualified_name
from otel_scorers.scorers.sync_workers import DEFAULT_SYNC_WORKERS, SyncWorkers
from otel_scorers.user_modules import import_user_module

if TYPE_CHECKING:
    from otel_scorers.scorers.judge import Judge

#: What a scorer may return: a number in [0, 1], a bool (pass/fail), or a full `Score`.
ScoreResult = float | int | bool | Score

#: Where the engine runs a scorer: `inline`, on its loop between runs (quick, synchronous: the
#: checks and code scorers); `async`, as a task with its timeout (a user's function, on worker
#: threads when it is synchronous); `judge`, in the bounded judge lane after the run's quick
#: scores are out, so that a slow judge holds up only judge work.
Lane = Literal["inline", "async", "judge"]


@runtime_checkable
class Scorer(Protocol):
    """Anything with a name and a `score(run)`.

    `score` returns a `ScoreResult` directly (it must then be fast: it runs on the engine's loop)
    or an awaitable of one (judges). `needs` lists the run fields it cannot do without
    (`"input"`, `"output"`): when the trace did not carry one, the score is skipped, not 0.
    `binary` scorers get the label pass/fail. A scorer may also declare its `lane` (see `Lane`,
    `DeclaresLane`); one that does not runs in the `async` lane.
    """

    @property
    def name(self) -> str: ...
    @property
    def needs(self) -> frozenset[str]: ...
    @property
    def binary(self) -> bool: ...

    def score(self, run: AgentRun) -> ScoreResult | Awaitable[ScoreResult]: ...


@runtime_checkable
class DeclaresLane(Protocol):
    """A scorer that says which lane the engine runs it in."""

    @property
    def lane(self) -> Lane: ...


def lane_of(scorer: Scorer) -> Lane:
    """The lane `scorer` declares; `async`, the lane that suits any scorer, when it declares none."""
    return scorer.lane if isinstance(scorer, DeclaresLane) else "async"


@runtime_checkable
class UsesJudge(Scorer, Protocol):
    """A scorer whose verdict comes from an LLM judge (`llm_scorer`, `answer_relevancy`): the
    engine scores it in its judge lane, so a slow judge never holds up the quick checks."""

    judge: Judge
    model: str


@dataclass(frozen=True, slots=True)
class FunctionScorer:
    """A user's function as a scorer. Sync functions run on the scorer's own worker threads
    (`workers` of them), so one that blocks or hangs costs one of its own threads and a timeout,
    never the engine's loop or another scorer's threads."""

    function: Callable[[AgentRun], Any]
    name: str
    needs: frozenset[str] = frozenset()
    binary: bool = False
    workers: int = DEFAULT_SYNC_WORKERS
    lane: ClassVar[Lane] = "async"
    is_async: bool = field(init=False)
    threads: SyncWorkers | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        is_async = inspect.iscoroutinefunction(self.function)
        object.__setattr__(self, "is_async", is_async)
        object.__setattr__(self, "threads", None if is_async else SyncWorkers(self.name, self.workers))

    def score(self, run: AgentRun) -> Awaitable[ScoreResult]:
        if self.threads is None:
            return self.function(run)  # type: ignore[no-any-return]
        return self.threads.run(self.function, run)

    def evaluator(self) -> Evaluator:
        """The function's import path (its code is the user's to version) and its options."""
        return Evaluator(qualified_name(self.function), {"needs": sorted(self.needs), "binary": self.binary})


@overload
def scorer(function: Callable[[AgentRun], Any], /) -> FunctionScorer: ...


@overload
def scorer(
    *,
    name: str | None = None,
    needs: Iterable[str] = (),
    binary: bool = False,
    workers: int = DEFAULT_SYNC_WORKERS,
) -> Callable[[Callable[[AgentRun], Any]], FunctionScorer]: ...


def scorer(
    function: Callable[[AgentRun], Any] | None = None,
    /,
    *,
    name: str | None = None,
    needs: Iterable[str] = (),
    binary: bool = False,
    workers: int = DEFAULT_SYNC_WORKERS,
) -> FunctionScorer | Callable[[Callable[[AgentRun], Any]], FunctionScorer]:
    """Turn a function of `AgentRun` (sync or async) into a scorer.

    Use bare (`@scorer`) or with options (`@scorer(name="polite", needs=["output"])`).
    A sync function runs on `workers` threads of its own.
    """

    def wrap(fn: Callable[[AgentRun], Any]) -> FunctionScorer:
        return FunctionScorer(fn, name or fn.__name__, frozenset(needs), binary, workers)

    return wrap(function) if function is not None else wrap


@dataclass(frozen=True, slots=True)
class Requiring:
    """A scorer with the run fields it needs declared from outside (config's `needs:`), so a
    user's function that reads the output is skipped, not scored, when the trace lacks it."""

    scorer: Scorer
    needs: frozenset[str]

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def lane(self) -> Lane:
        return lane_of(self.scorer)

    @property
    def binary(self) -> bool:
        return self.scorer.binary

    def score(self, run: AgentRun) -> ScoreResult | Awaitable[ScoreResult]:
        return self.scorer.score(run)

    def evaluator(self) -> Evaluator:
        inner = evaluator_of(self.scorer)
        args = {**inner.args, "needs": sorted(self.needs)}
        return Evaluator(inner.type, args, inner.prompt_version, inner.model)


def requiring(scorer: Scorer, needs: Iterable[str]) -> Scorer:
    """`scorer` needing `needs` besides what it declares itself."""
    return Requiring(scorer, scorer.needs | frozenset(needs))


def as_scorer(obj: Any, name: str | None = None) -> Scorer:
    """A `Scorer` as is; a plain callable of one argument (the run) wrapped as a `FunctionScorer`."""
    if isinstance(obj, Scorer):
        return obj
    if callable(obj) and not inspect.isclass(obj):
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            signature = None  # some builtins have none: let them be tried
        if signature is not None:
            try:
                signature.bind(None)
            except TypeError:
                raise TypeError(
                    f"not a scorer: {_described(obj)} takes {signature}, "
                    "but a scoring function takes one argument, the AgentRun"
                ) from None
        return scorer(obj, name=name) if name else scorer(obj)  # type: ignore[call-overload,no-any-return,return-value]
    raise TypeError(
        f"not a scorer: {_described(obj)} (expected a function of AgentRun, "
        "or an object with name, needs, binary and score(run))"
    )


def _described(obj: Any) -> str:
    qualified = getattr(obj, "__qualname__", None)
    if isinstance(qualified, str):
        return f"{'class' if inspect.isclass(obj) else 'function'} {qualified}"
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def import_scorer(reference: str, args: dict[str, Any] | None = None) -> Scorer:
    """Resolve `pkg.module:attribute`. A factory (a class, or a function taking arguments) is
    called with `args` and must make a scorer; a scorer or a scoring function is used as is."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"custom scorer {reference!r} must look like 'package.module:function'")
    try:
        module = import_user_module(module_name)
    except ValueError as exc:
        raise ValueError(f"scorer {reference!r}: {exc}") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if isinstance(target, Scorer):
        if args:
            raise ValueError(f"{reference!r} is already a scorer; it takes no args")
    elif args or inspect.isclass(target):
        try:
            target = functools.partial(target, **(args or {}))()
        except Exception as exc:
            raise ValueError(f"scorer factory {reference!r} failed: {type(exc).__name__}: {exc}") from None
    try:
        return as_scorer(target, name=attribute.rsplit(".", 1)[-1])
    except TypeError as exc:
        raise ValueError(f"{reference!r} is {exc}") from None
