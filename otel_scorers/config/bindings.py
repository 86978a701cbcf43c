"""The `scorers:` entries as bindings: each entry's scorer, name, sampling and filter, checked
together so that one entry can report several problems at once."""

from __future__ import annotations

from collections.abc import Sequence

from otel_scorers.config.factories import make_scorer
from otel_scorers.config.scorer_entry import ScorerConfig
from otel_scorers.errors import ConfigError
from otel_scorers.runs.context import context_override
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.judge.config import check_model, unpriced_budget
from otel_scorers.scorers.judge.masking import Redacting
from otel_scorers.scorers.protocol import Scorer, UsesJudge, requiring
from otel_scorers.selection.binding import Binding, bind, unique_names, unpriced_pacing
from otel_scorers.selection.filters import Predicate, parse_filter
from otel_scorers.selection.paced_sampling import PacingPolicy
from otel_scorers.selection.sampling import DEFAULT_RATE


def build_bindings(
    entries: Sequence[ScorerConfig], judge_config: JudgeConfig | None, judge: Judge | None = None
) -> list[Binding]:
    """The `scorers:` entries as bindings, their judge scorers sharing `judge` (else one made
    from `judge_config`); a `ConfigError` holds every problem found."""
    bindings: list[Binding] = []
    errors = binding_errors(list(enumerate(entries)), judge_config, bindings, judge)
    if errors:
        raise ConfigError.combine(errors)
    return bindings


def binding_errors(
    entries: Sequence[tuple[int, ScorerConfig]],
    judge_config: JudgeConfig | None,
    out: list[Binding] | None = None,
    shared_judge: Judge | None = None,
) -> list[ConfigError]:
    """Build a binding per entry into `out`; return every error found on the way."""
    errors: list[ConfigError] = []
    named: list[tuple[str, str]] = []
    judge = _one_judge(judge_config, shared_judge)
    for index, entry in entries:
        path = f"scorers[{index}]"
        scorer = _entry_scorer(entry, path, judge, judge_config, errors)
        name = _entry_name(entry, scorer)
        named.append((path, name))
        sampling = _entry_sampling(entry, scorer, path, errors)
        predicate = _entry_filter(entry, path, errors)
        # Bindings are built only while every entry so far is clean: one error anywhere means
        # the configuration is refused, so half a list would serve no one.
        if scorer is None or errors or out is None:
            continue
        out.append(
            bind(
                scorer,
                name=name,
                sampling=sampling,
                filter=predicate,
                threshold=entry.threshold,
                max_per_minute=entry.max_per_minute,
                timeout_s=entry.timeout_s,
                context=_context(entry.context, f"{path}.context"),
            )
        )
    return [*errors, *unique_names(named)]


def _one_judge(judge_config: JudgeConfig | None, shared_judge: Judge | None) -> Judge | None:
    """One judge for all judge bindings: they share its concurrency limit, cost budget and cache."""
    if shared_judge is not None:
        return shared_judge
    return Judge(judge_config) if judge_config is not None else None


def _entry_scorer(
    entry: ScorerConfig,
    path: str,
    judge: Judge | None,
    judge_config: JudgeConfig | None,
    errors: list[ConfigError],
) -> Scorer | None:
    """The entry's scorer with its `needs` and `redact` applied, or None when it cannot be made;
    what is wrong goes into `errors`, so one entry can report several problems at once."""
    try:
        scorer: Scorer | None = make_scorer(entry.type, entry.args, path, judge)
    except ConfigError as exc:
        errors.append(exc)
        scorer = None
    if entry.needs is not None:
        if ":" not in entry.type:
            errors.append(
                ConfigError(
                    f"{path}.needs", f"only a custom scorer takes needs; {entry.type} declares its own"
                )
            )
        elif scorer is not None:
            scorer = requiring(scorer, entry.needs)
    if isinstance(scorer, UsesJudge):
        errors.extend(_judge_errors(entry, scorer, path, judge_config is not None))
    if entry.redact is not None and scorer is not None:
        if isinstance(scorer, Redacting):
            scorer = scorer.with_redaction(entry.redact)
        else:
            errors.append(
                ConfigError(
                    f"{path}.redact", f"only judge scorers send text to a judge; {entry.type} does not"
                )
            )
    return scorer


def _entry_name(entry: ScorerConfig, scorer: Scorer | None) -> str:
    """The binding's name: given, else its type (a custom scorer's: its function's name, not its
    import path, in spans and metrics)."""
    return entry.name or (scorer.name if scorer is not None and ":" in entry.type else entry.type)


def _entry_sampling(
    entry: ScorerConfig, scorer: Scorer | None, path: str, errors: list[ConfigError]
) -> float | PacingPolicy:
    """The entry's sampling; a budget is checked against what the scorer costs, since pacing by
    cost means nothing for a free scorer or a model nobody prices."""
    sampling: float | PacingPolicy = DEFAULT_RATE
    try:
        sampling = entry.sampling_policy(f"{path}.sampling")
    except ConfigError as exc:
        errors.append(exc)
    if isinstance(sampling, PacingPolicy) and scorer is not None and not isinstance(scorer, UsesJudge):
        errors.append(
            ConfigError(
                f"{path}.sampling.{sampling.budget_key}",
                f"a budget paces judge scorers only; {entry.type} costs nothing to run: give it a rate",
            )
        )
    if isinstance(sampling, PacingPolicy) and scorer is not None:
        section = f"{path}.args.judge." if "judge" in entry.args else "judge."
        problem = unpriced_pacing(scorer, sampling, section)
        if problem is not None:
            errors.append(ConfigError(f"{path}.sampling.usd_per_hour", problem))
    return sampling


def _entry_filter(entry: ScorerConfig, path: str, errors: list[ConfigError]) -> Predicate | None:
    """The entry's parsed filter, or None when it has none or it does not parse."""
    if entry.filter is None:
        return None
    try:
        return parse_filter(entry.filter, f"{path}.filter")
    except ConfigError as exc:
        errors.append(exc)
        return None


def _judge_errors(
    entry: ScorerConfig, scorer: UsesJudge, path: str, judge_section: bool
) -> list[ConfigError]:
    """What keeps a judge scorer's binding from ever working: a model litellm cannot route, a
    binding timeout that cuts the judge's work off before the judge's own deadline, or a cost
    budget on a model nobody prices (it would let every call through)."""
    errors: list[ConfigError] = []
    model = entry.args.get("model")
    if isinstance(model, str):
        try:
            check_model(model)
        except ValueError as exc:
            errors.append(ConfigError(f"{path}.args.model", str(exc)))
    judge = scorer.judge
    section = f"{path}.args.judge" if "judge" in entry.args else "judge"
    unpriced = (
        unpriced_budget(judge.config, scorer.model, f"{section}.") if isinstance(judge, Judge) else None
    )
    if unpriced is not None:
        errors.append(ConfigError(f"{section}.cost_budget_usd_per_hour", unpriced))
    if isinstance(judge, Judge) and judge.config.timeout_s >= entry.timeout_s:
        if "judge" in entry.args:
            where = f"{path}.args.judge.timeout_s"
        else:
            where = "judge.timeout_s" if judge_section else "the judge's timeout_s"
        errors.append(
            ConfigError(
                f"{path}.timeout_s",
                f"{entry.timeout_s:g}s is not above {where} ({judge.config.timeout_s:g}s): the binding "
                f"would cut the judge's work off before its deadline; raise it, or lower {where}",
            )
        )
    return errors


def _context(spec: list[str] | str | None, path: str) -> list[str] | str | None:
    """The binding's `context:` checked at load, so a bad path names its key."""
    if spec is not None:
        context_override(spec, path)
    return spec
