"""One YAML file configures the processor and the sidecar alike; errors name the bad key.

scorers:
  - type: includes              # a check, an LLM scorer, or "pkg.module:function"
    name: says-sunny            # optional, unique; default = type
    args: {expected: sunny}
    sampling: {rate: 0.5}       # judge scorers: or a budget, {usd_per_hour: 2} / {calls_per_hour: 600}
    filter: {op: eq, left: {path: agent.name}, right: {literal: weather}}
    threshold: 0.7
    max_per_minute: 600
    timeout_s: 30
    needs: [output]             # custom scorers only: skipped when the trace lacks these
processor:                      # optional, in-process knobs
  hold_timeout_s: 5
  console: true                 # one line per score on stdout
judge:                          # optional, for LLM judge scorers (answer_relevancy...)
  model: openai/gpt-4o-mini
  cost_budget_usd_per_hour: 2
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator, validate_call

from otel_scorers import environment
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conversations.config import ConversationsConfig
from otel_scorers.conversations.pipeline import ConversationSettings
from otel_scorers.emission.standard import output_factory
from otel_scorers.errors import ConfigError
from otel_scorers.filters import Predicate, parse_filter
from otel_scorers.keep.keeper import KeepConfig
from otel_scorers.labels.agreement import DEFAULT_MAX_PENDING, DEFAULT_WAIT_S, Agreement
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, OtlpProtocol
from otel_scorers.report_config import ReportConfig
from otel_scorers.runs.context import context_override
from otel_scorers.scorers import SCORER_FACTORIES
from otel_scorers.scorers.checks import CHECKS
from otel_scorers.scorers.conversation import CONVERSATION_FACTORIES, ConversationScorer
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.judge.config import check_model, unpriced_budget
from otel_scorers.scorers.judge.masking import RedactConfig, Redacting
from otel_scorers.scorers.protocol import Scorer, UsesJudge, import_scorer, requiring
from otel_scorers.selection.binding import DEFAULT_TIMEOUT_S, Binding, bind, unpriced_pacing
from otel_scorers.selection.paced_sampling import PacingPolicy, parse_sampling
from otel_scorers.selection.sampling import DEFAULT_RATE, MAX_PER_MINUTE

#: Stands for a judge model that is itself reported as an error, while the scorers using it are checked.
_UNCHECKED_MODEL = "openai/unchecked"
# `.inf` and `.nan` are valid YAML floats but never a valid timeout, rate or threshold.
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SamplingConfig(BaseModel):
    """A fixed rate, or (judge scorers) a budget with risk weights: `paced_sampling`."""

    model_config = _STRICT
    rate: float | None = Field(None, ge=0.0, le=1.0)
    usd_per_hour: float | None = Field(None, gt=0)
    calls_per_hour: float | None = Field(None, gt=0)
    weights: dict[str, Any] | None = None  # checked by `RiskWeights.from_mapping`, naming the key
    feedback_attribute: str | None = None
    # What one signal or one tenant can take of the budget: checked by `paced_sampling`, naming the key.
    max_signal_share: Any = None
    share_key: Any = None
    max_key_share: Any = None


class ScorerConfig(BaseModel):
    model_config = _STRICT
    type: str
    name: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    sampling: SamplingConfig = SamplingConfig()
    filter: dict[str, Any] | None = None
    threshold: float | None = None
    max_per_minute: int | None = Field(None, ge=1, le=MAX_PER_MINUTE)
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0)
    context: list[str] | str | None = None  # replaces the run's context: texts, or a path into the run
    #: Judge scorers: private text masked before the judge sees it, over the judge's `redact:`.
    redact: RedactConfig | None = None
    # What a custom scorer cannot do without: skipped, not scored, when the trace lacks it.
    needs: (
        list[
            Literal[
                "input", "output", "tool_arguments", "tool_results", "tool_errors", "tool_calls", "agent_name"
            ]
        ]
        | None
    ) = None


class ProcessorConfig(BaseModel):
    model_config = _STRICT
    hold_timeout_s: float = Field(environment.HOLD_TIMEOUT_S, gt=0)
    max_queue_size: int = Field(environment.MAX_QUEUE_SIZE, ge=1)
    max_traces: int = Field(environment.MAX_TRACES, ge=1)
    max_spans_per_trace: int = Field(environment.MAX_SPANS_PER_TRACE, ge=1)
    #: One line per score on standard output, as the Collector's debug exporter prints.
    console: bool = False
    #: Evaluation spans and events written as OTLP (true) or through the SDK providers (false);
    #: unset, written as OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (`ScoringSpanProcessor`'s `export`).
    export: bool | None = None


class ListenConfig(BaseModel):
    model_config = _STRICT
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(ge=0, le=65535)


class TlsConfig(BaseModel):
    """Server certificate and key; with `client_ca_file`, clients must present a certificate (mTLS)."""

    model_config = _STRICT
    cert_file: str
    key_file: str
    client_ca_file: str | None = None


class ExportConfig(BaseModel):
    """Where scores go. Unset fields fall back to the SDK's `OTEL_EXPORTER_OTLP_*` variables;
    `enabled: false` sends nothing over OTLP (the console and `/metrics` still show the scores)."""

    model_config = _STRICT
    enabled: bool = True
    endpoint: str | None = None
    protocol: OtlpProtocol | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    insecure: bool | None = None
    metric_interval_s: float = Field(10.0, gt=0)
    batch_delay_s: float = Field(1.0, gt=0)
    timeout_s: float = Field(10.0, gt=0)


class ForwardConfig(BaseModel):
    """Inline mode: where every received span goes on to (another collector, a backend)."""

    model_config = _STRICT
    endpoint: str
    protocol: OtlpProtocol = DEFAULT_PROTOCOL
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(10.0, gt=0)


class SidecarConfig(BaseModel):
    """`otel-scorers serve`: OTLP receivers, trace assembly across requests, limits and exports."""

    model_config = _STRICT
    mode: Literal["tap", "inline"] = "tap"
    grpc: ListenConfig = ListenConfig(port=14317)
    http: ListenConfig = ListenConfig(port=14318)
    token: str | None = None
    token_env: str | None = None
    #: Ask for the token on `/metrics` too (Prometheus then sends it: `authorization` in its
    #: scrape config). Off by default: metrics carry scores, never span content.
    metrics_require_token: bool = False
    tls: TlsConfig | None = None
    max_request_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    #: Longest a request may take to arrive (headers and body), and most connections at once per
    #: receiver: slow or idle senders cannot hold memory or sockets without bound.
    read_timeout_s: float = Field(30.0, gt=0)
    max_connections: int = Field(512, ge=1)
    decision_wait_s: float = Field(2.0, gt=0)
    max_wait_s: float = Field(30.0, gt=0)
    hold_timeout_s: float = Field(5.0, gt=0)
    max_traces: int = Field(20_000, ge=1)
    max_spans: int = Field(200_000, ge=1)
    max_bytes: int = Field(256 * 1024 * 1024, ge=1024)
    max_runs_in_flight: int = Field(1024, ge=1)
    scoring_process: bool = True
    scoring_processes: int = Field(1, ge=1, le=256)
    late_trace_memory: int = Field(100_000, ge=0)
    retry_after_s: float = Field(1.0, gt=0)
    shutdown_timeout_s: float = Field(10.0, gt=0)
    export: ExportConfig = ExportConfig()
    #: One line per score on standard output (`serve --console`), beside the export.
    console: bool = False
    forward: ForwardConfig | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SidecarConfig:
        if self.mode == "inline" and self.forward is None:
            raise ValueError("mode 'inline' needs a 'forward' section (where spans go on to)")
        if self.max_wait_s < self.decision_wait_s:
            raise ValueError("max_wait_s must be at least decision_wait_s")
        return self


class LabelsConfig(BaseModel):
    """People's labels joined with the scores of the same runs (`otel_scorers.labels.agreement`): how
    long either side waits for the other, and how many of each may wait."""

    model_config = _STRICT
    wait_s: float = Field(DEFAULT_WAIT_S, gt=0)
    max_pending: int = Field(DEFAULT_MAX_PENDING, ge=1)

    def agreement(self) -> Agreement:
        return Agreement(wait_s=self.wait_s, max_pending=self.max_pending)


class Config(BaseModel):
    """The whole file: the scorer bindings, and the settings of the parts that run them."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, allow_inf_nan=False)
    scorers: list[ScorerConfig] = Field(default_factory=list)
    processor: ProcessorConfig = ProcessorConfig()
    sidecar: SidecarConfig = SidecarConfig()
    judge: JudgeConfig | None = None  # shared by the LLM judge scorers; default: OTEL_SCORERS_JUDGE_*
    #: Conversation scorers and the stage that holds conversations until they end.
    conversations: ConversationsConfig | None = None
    #: Instrumentations described without code (docs/conventions.md), read before the shipped ones.
    conventions: list[ConventionDescription] = Field(default_factory=list)

    #: Where scores go: names in `otel_scorers.emission.standard.OUTPUTS` (or `pkg.module:factory`);
    #: unset, `[otlp, metrics]`. `processor.console` / `sidecar.console` add `console`.
    outputs: list[str] | None = None

    #: Human labels in, the judge's agreement with them out (`labels: {}` for the defaults).
    labels: LabelsConfig | None = None

    #: The traces of failing (or sampled) runs kept as a test set, by the sidecar and processor.
    keep: KeepConfig | None = None

    #: How `score --html`'s page links runs to their traces.
    report: ReportConfig = ReportConfig()

    def bindings(self, judge: Judge | None = None) -> list[Binding]:
        return build_bindings(self, judge)

    def conversation_settings(self, judge: Judge | None = None) -> ConversationSettings | None:
        """The `conversations:` section as settings, its scorers made as run scorers are."""
        if self.conversations is None:
            return None
        if judge is None and self.judge is not None:
            judge = Judge(self.judge)
        return self.conversations.settings(partial(make_conversation_scorer, judge=judge))

    def scoring(self) -> tuple[list[Binding], ConversationSettings | None]:
        """The run bindings and the conversation settings, their judge scorers sharing one
        `Judge` (one concurrency limit, cost budget and cache for all judge work)."""
        judge = Judge(self.judge) if self.judge is not None else None
        return self.bindings(judge), self.conversation_settings(judge)

    def processor_options(self) -> dict[str, Any]:
        """The `processor:` section, each setting overridden by its environment variable when set."""
        options = self.processor.model_dump()
        for key in environment.PROCESSOR_SETTINGS:
            found = environment.from_environment(key)
            if found is not None:
                options[key] = found
        return options


class _RunScorers(BaseModel):
    """Without a `conversations` section, a config needs at least one run-level scorer."""

    model_config = ConfigDict(extra="ignore")
    scorers: list[Any] = Field(min_length=1)


def _loc(loc: Sequence[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (`X`, `X | None`, `list[X]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        model = _model_in(argument)
        if model is not None:
            return model
    return None


def _keys_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys the model at `loc` (a path from `model`) accepts."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part) if current is not None else None
        current = _model_in(field.annotation) if field is not None else None
    return list(current.model_fields) if current is not None else []


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    """pydantic's message in the file's terms: no class names, a suggestion for a misspelled key."""
    kind, loc = error["type"], tuple(error["loc"])
    if kind == "extra_forbidden":
        known = _keys_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        if close:
            return f"unknown key; did you mean {close[0]!r}?"
        return f"unknown key; expected one of: {', '.join(known)}" if known else "unknown key"
    if kind in ("model_type", "model_attributes_type", "dataclass_type", "dict_type"):
        return f"should be a mapping of settings, got {_shown(error.get('input'))}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"should be a whole number, got {_shown(error.get('input'))}"
    if kind == "int_parsing_size":
        return f"too large a number: {_shown(error.get('input'))}"
    if kind == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    return str(error["msg"])


def _validation_errors(
    exc: ValidationError, model: type[BaseModel], prefix: Sequence[Any] = ()
) -> list[ConfigError]:
    return [
        ConfigError(_loc((*prefix, *error["loc"])), _message(error, model))
        for error in exc.errors(include_url=False)
    ]


def parse_config(document: Any, source: str = "config", scoring: bool = True) -> Config:
    """Validate a whole configuration; a `ConfigError` holds every mistake found, each with its key.
    Without `scoring` (`runs -c`, which only reads), a config needs no scorer."""
    if document is None:
        raise ConfigError("", f"{source} is empty; it needs at least a 'scorers' list")
    if not isinstance(document, Mapping):
        raise ConfigError(
            "", f"{source} must be a mapping with a 'scorers' list, got {type(document).__name__}"
        )
    try:
        if scoring and document.get("conversations") is None:  # then run-level scorers are what it scores
            _RunScorers.model_validate({"scorers": document["scorers"]} if "scorers" in document else {})
        config = Config.model_validate(document)
    except ValidationError as exc:
        errors = _validation_errors(exc, Config)
        # Whatever did validate is checked further, so that one bad key does not hide the rest.
        entries, judge = _valid_parts(document, {error.path for error in errors})
        raise ConfigError.combine([*errors, *_binding_errors(entries, judge)]) from None
    build_bindings(config)  # every scorer, argument and filter is checked before anything starts
    config.conversation_settings()
    for index, name in enumerate(config.outputs or ()):
        try:
            output_factory(name)
        except ValueError as exc:
            raise ConfigError(f"outputs[{index}]", str(exc)) from None
    return config


def _valid_parts(
    document: Mapping[str, Any], bad: set[str]
) -> tuple[list[tuple[int, ScorerConfig]], JudgeConfig | None]:
    """The scorer entries and judge section without their invalid keys, to be checked further."""

    def clean(prefix: str) -> bool:
        return not any(path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")) for path in bad)

    raw = document.get("scorers")
    entries: list[tuple[int, ScorerConfig]] = []
    for index, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, Mapping) or not clean(f"scorers[{index}].type"):
            continue
        kept = {key: value for key, value in entry.items() if clean(f"scorers[{index}].{key}")}
        try:
            entries.append((index, ScorerConfig.model_validate(kept)))
        except ValidationError:
            continue
    return entries, _checkable_judge(document.get("judge"), clean)


def _checkable_judge(judge: Any, clean: Callable[[str], bool]) -> JudgeConfig | None:
    """The judge section's valid keys, to check the scorers that use it. A bad key is reported
    where it is written; when that is the model (or the whole section), the scorers are checked
    as if it named one, so that a bad judge model is one error, not also a "no judge model" for
    each judge scorer."""
    if judge is None:
        return None
    if not isinstance(judge, Mapping):
        return JudgeConfig(model=_UNCHECKED_MODEL)
    kept = {key: value for key, value in judge.items() if clean(f"judge.{key}")}
    try:
        config = JudgeConfig.model_validate(kept)
    except ValidationError:
        return JudgeConfig(model=_UNCHECKED_MODEL)
    if "model" in judge and "model" not in kept:
        config = config.model_copy(update={"model": _UNCHECKED_MODEL})
    return config


def load_config(path: str | Path, scoring: bool = True) -> Config:
    """Read and validate a YAML file; every error names the file and the bad key. `scoring=False`:
    for reading traces only, a file of `conventions:` alone is whole."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("", f"cannot read config file {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            "",
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line} cannot be decoded",
            source=str(path),
        ) from None
    try:
        document = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError("", f"not valid YAML: {exc.problem}{where}", source=str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"not valid YAML: {exc}", source=str(path)) from None
    except RecursionError:
        raise ConfigError("", "not readable: nested too deeply", source=str(path)) from None
    try:
        return parse_config(document, str(path), scoring)
    except ConfigError as exc:
        raise exc.in_file(str(path)) from None


def build_bindings(config: Config, judge: Judge | None = None) -> list[Binding]:
    bindings: list[Binding] = []
    errors = _binding_errors(list(enumerate(config.scorers)), config.judge, bindings, judge)
    if errors:
        raise ConfigError.combine(errors)
    return bindings


def _binding_errors(
    entries: Sequence[tuple[int, ScorerConfig]],
    judge_config: JudgeConfig | None,
    out: list[Binding] | None = None,
    shared_judge: Judge | None = None,
) -> list[ConfigError]:
    """Build a binding per entry into `out`; return every error found on the way."""
    errors: list[ConfigError] = []
    seen: dict[str, int] = {}
    judge = _one_judge(judge_config, shared_judge)
    for index, entry in entries:
        path = f"scorers[{index}]"
        scorer = _entry_scorer(entry, path, judge, judge_config, errors)
        name = _unique_name(entry, scorer, path, index, seen, errors)
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
    return errors


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


def _unique_name(
    entry: ScorerConfig,
    scorer: Scorer | None,
    path: str,
    index: int,
    seen: dict[str, int],
    errors: list[ConfigError],
) -> str:
    """The binding's name, recorded in `seen`; a name already taken is an error, since spans and
    metrics tell bindings apart by name."""
    # A custom scorer is named after its function, not its import path, in spans and metrics.
    name = entry.name or (scorer.name if scorer is not None and ":" in entry.type else entry.type)
    if name in seen:
        errors.append(
            ConfigError(
                f"{path}.name",
                f"duplicate scorer name {name!r} (also scorers[{seen[name]}]); give each binding a unique name",
            )
        )
    seen.setdefault(name, index)
    return name


def _entry_sampling(
    entry: ScorerConfig, scorer: Scorer | None, path: str, errors: list[ConfigError]
) -> float | PacingPolicy:
    """The entry's sampling; a budget is checked against what the scorer costs, since pacing by
    cost means nothing for a free scorer or a model nobody prices."""
    sampling: float | PacingPolicy = DEFAULT_RATE
    try:
        sampling = parse_sampling(entry.sampling.model_dump(exclude_none=True), f"{path}.sampling")
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


def make_scorer(kind: str, args: Mapping[str, Any], path: str, judge: Judge | None = None) -> Scorer:
    """A run scorer from its `type` and `args`: a check, an LLM scorer (given `judge` unless its
    args name one) or `pkg.module:function`; a `ConfigError` naming the bad key."""
    factory: Callable[..., Any] | None = CHECKS.get(kind) or SCORER_FACTORIES.get(kind)
    if factory is None:
        if ":" in kind:
            try:
                return import_scorer(kind, dict(args))
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"{path}.type", str(exc)) from None
        if kind in CONVERSATION_FACTORIES:
            raise ConfigError(
                f"{path}.type", f"{kind} scores whole conversations: list it under conversations.scorers"
            )
        raise _unknown(kind, [*CHECKS, *SCORER_FACTORIES], path, "scorer type", ", or 'pkg.module:function'")
    scorer: Scorer = _made(kind, factory, args, path, judge)
    return scorer


def make_conversation_scorer(
    kind: str, args: Mapping[str, Any], path: str, judge: Judge | None = None
) -> ConversationScorer:
    """A conversation scorer, by the same factory call as a run scorer (`make_scorer`)."""
    factory = CONVERSATION_FACTORIES.get(kind)
    if factory is None:
        if kind in CHECKS or kind in SCORER_FACTORIES:
            raise ConfigError(f"{path}.type", f"{kind} scores single runs: list it under scorers")
        raise _unknown(kind, list(CONVERSATION_FACTORIES), path, "conversation scorer", "")
    scorer: ConversationScorer = _made(kind, factory, args, path, judge)
    return scorer


def _unknown(kind: str, known: list[str], path: str, what: str, more: str) -> ConfigError:
    close = difflib.get_close_matches(kind, known, n=1)
    hint = f"did you mean {close[0]!r}? Known: " if close else "use one of "
    return ConfigError(f"{path}.type", f"unknown {what} {kind!r}; {hint}{', '.join(known)}{more}")


def _made(
    kind: str, factory: Callable[..., Any], args: Mapping[str, Any], path: str, judge: Judge | None
) -> Any:
    """The factory called with `args`: a judge of its own checked as `judge:` is, else `judge`."""
    takes_judge = "judge" in inspect.signature(factory).parameters
    if takes_judge and isinstance(args.get("judge"), Mapping):  # a judge of its own, checked as `judge:` is
        try:
            args = {**args, "judge": JudgeConfig.model_validate(args["judge"])}
        except ValidationError as exc:
            raise ConfigError.combine(_validation_errors(exc, JudgeConfig, (path, "args", "judge"))) from None
    if judge is not None and "judge" not in args and takes_judge:
        args = {**args, "judge": judge}
    return _call_factory(kind, factory, args, f"{path}.args")


def _call_factory(kind: str, factory: Callable[..., Any], args: Mapping[str, Any], path: str) -> Any:
    parameters = inspect.signature(factory).parameters
    expected = ", ".join(parameters) or "no arguments"
    errors = [
        ConfigError(f"{path}.{key}", f"unknown argument for {kind}; expected: {expected}")
        for key in args
        if key not in parameters
    ]
    missing = [
        name
        for name, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty and name not in args
    ]
    if missing:
        errors.append(ConfigError(path, f"{kind} needs argument(s): {', '.join(missing)}"))
    if errors:
        raise ConfigError.combine(errors)
    try:
        return validate_call(config=ConfigDict(arbitrary_types_allowed=True, strict=False))(factory)(**args)
    except ValidationError as exc:
        raise ConfigError.combine(
            [
                ConfigError(f"{path}.{_loc(tuple(error['loc']))}", str(error["msg"]))
                for error in exc.errors(include_url=False)
            ]
        ) from None
    except (ValueError, TypeError) as exc:
        raise ConfigError(path, str(exc)) from None
