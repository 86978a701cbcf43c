"""The configuration file's sections as models: every key, its kind and its bound; `Config`
makes the scoring (the bindings and the conversation settings) from them."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from otel_scorers import environment
from otel_scorers.config.bindings import build_bindings
from otel_scorers.config.factories import make_conversation_scorer
from otel_scorers.config.scorer_entry import ScorerConfig
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conversations.config import ConversationsConfig
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.errors import ConfigError
from otel_scorers.keep.keeper import KeepConfig
from otel_scorers.labels.agreement import DEFAULT_MAX_PENDING, DEFAULT_WAIT_S, Agreement
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, OtlpProtocol
from otel_scorers.otlp.exporters import ExportConfig
from otel_scorers.pipeline_builder import makes_turns, scorer_names, widest_sampler
from otel_scorers.report_config import ReportConfig
from otel_scorers.runs.call_chains import CHAIN_WINDOW_NS, MAX_CHAIN_BYTES, MAX_OPEN_CHAINS
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.selection.binding import Binding, trace_rate, unique_names
from otel_scorers.selection.sampling import TraceIdSampler
from otel_scorers.setting_bounds import (
    MAX_CONNECTIONS,
    MAX_COUNT,
    MAX_GRPC_INT,
    MAX_READ_TIMEOUT_S,
    MAX_SECONDS,
)

# `.inf` and `.nan` are valid YAML floats but never a valid timeout, rate or threshold.
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ProcessorConfig(BaseModel):
    model_config = _STRICT
    hold_timeout_s: float = Field(environment.HOLD_TIMEOUT_S, gt=0, le=MAX_SECONDS)
    max_queue_size: int = Field(environment.MAX_QUEUE_SIZE, ge=1, le=MAX_COUNT)
    max_traces: int = Field(environment.MAX_TRACES, ge=1, le=MAX_COUNT)
    max_spans_per_trace: int = Field(environment.MAX_SPANS_PER_TRACE, ge=1, le=MAX_COUNT)
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


class ForwardConfig(BaseModel):
    """Inline mode: where every received span goes on to (another collector, a backend)."""

    model_config = _STRICT
    endpoint: str
    protocol: OtlpProtocol = DEFAULT_PROTOCOL
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(10.0, gt=0, le=MAX_SECONDS)


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
    max_request_bytes: int = Field(4 * 1024 * 1024, ge=1024, le=MAX_GRPC_INT)
    #: Longest a request may take to arrive (headers and body), and most connections at once per
    #: receiver: slow or idle senders cannot hold memory or sockets without bound.
    read_timeout_s: float = Field(30.0, gt=0, le=MAX_READ_TIMEOUT_S)
    max_connections: int = Field(512, ge=1, le=MAX_CONNECTIONS)
    decision_wait_s: float = Field(2.0, gt=0, le=MAX_SECONDS)
    max_wait_s: float = Field(30.0, gt=0, le=MAX_SECONDS)
    hold_timeout_s: float = Field(5.0, gt=0, le=MAX_SECONDS)
    max_traces: int = Field(20_000, ge=1, le=MAX_COUNT)
    max_spans: int = Field(200_000, ge=1, le=MAX_COUNT)
    max_bytes: int = Field(256 * 1024 * 1024, ge=1024, le=MAX_COUNT)
    max_runs_in_flight: int = Field(1024, ge=1, le=MAX_COUNT)
    #: Runs no span marks, joined from the model calls of traces without a run (docs/limits.md):
    #: whether to look for them, most chains of calls waiting for their tools' results, most
    #: bytes they hold together, and how long (in span time) a chain waits for the next call.
    join_calls: bool = True
    join_max_chains: int = Field(MAX_OPEN_CHAINS, ge=0, le=MAX_COUNT)
    join_max_bytes: int = Field(MAX_CHAIN_BYTES, ge=0, le=MAX_COUNT)
    join_window_s: float = Field(CHAIN_WINDOW_NS / 1e9, gt=0, le=MAX_SECONDS)
    scoring_process: bool = True
    scoring_processes: int = Field(1, ge=1, le=256)
    late_trace_memory: int = Field(100_000, ge=0, le=MAX_COUNT)
    retry_after_s: float = Field(1.0, gt=0, le=MAX_SECONDS)
    shutdown_timeout_s: float = Field(10.0, gt=0, le=MAX_SECONDS)
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
    wait_s: float = Field(DEFAULT_WAIT_S, gt=0, le=MAX_SECONDS)
    max_pending: int = Field(DEFAULT_MAX_PENDING, ge=1, le=MAX_COUNT)

    def agreement(self) -> Agreement:
        return Agreement(wait_s=self.wait_s, max_pending=self.max_pending)


class ConfiguredScoring(NamedTuple):
    """What a configuration scores with: its run bindings and its conversation settings."""

    bindings: list[Binding]
    conversations: ConversationSettings | None


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

    def scoring(self) -> ConfiguredScoring:
        """The run bindings and the conversation settings, their judge scorers sharing one
        `Judge` (one concurrency limit, cost budget and cache for all judge work): the only way
        to them, so that no door or command makes a second judge from one configuration."""
        judge = Judge(self.judge) if self.judge is not None else None
        conversations = None
        if self.conversations is not None:
            conversations = self.conversations.settings(partial(make_conversation_scorer, judge=judge))
        bindings = build_bindings(self.scorers, self.judge, judge)
        clashes = unique_names(scorer_names(bindings, conversations))
        if clashes:
            raise ConfigError.combine(clashes)
        return ConfiguredScoring(bindings, conversations)

    def buffered_sampler(self) -> TraceIdSampler:
        """Which traces an assembler buffers, read from the file alone: no scorer or judge is
        made (for a process that receives spans while others score them)."""
        rates = [trace_rate(entry.sampling_policy()) for entry in self.scorers]
        section = self.conversations
        turns = section is not None and makes_turns(len(section.scorers), section.turn_records)
        return widest_sampler([TraceIdSampler(rate) for rate in rates], turns)

    def processor_options(self) -> dict[str, Any]:
        """The `processor:` section, each setting overridden by its environment variable when set."""
        options = self.processor.model_dump()
        for key in environment.PROCESSOR_SETTINGS:
            found = environment.from_environment(key)
            if found is not None:
                options[key] = found
        return options
