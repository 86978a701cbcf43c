"""One YAML file configures the processor and the sidecar alike; errors name the bad key.

Its sections as models (`schema.py`), read and validated whole (`loading.py`, with
`validation_errors.py`), its scorer entries (`scorer_entry.py`) made bindings (`bindings.py`) by the factories
(`factories.py`). A file:

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

from otel_scorers.config.bindings import build_bindings
from otel_scorers.config.factories import make_conversation_scorer, make_scorer
from otel_scorers.config.loading import load_config, parse_config
from otel_scorers.config.schema import (
    Config,
    ExportConfig,
    ForwardConfig,
    LabelsConfig,
    ListenConfig,
    ProcessorConfig,
    SidecarConfig,
    TlsConfig,
)
from otel_scorers.config.scorer_entry import SamplingConfig, ScorerConfig

__all__ = [
    "Config",
    "ExportConfig",
    "ForwardConfig",
    "LabelsConfig",
    "ListenConfig",
    "ProcessorConfig",
    "SamplingConfig",
    "ScorerConfig",
    "SidecarConfig",
    "TlsConfig",
    "build_bindings",
    "load_config",
    "make_conversation_scorer",
    "make_scorer",
    "parse_config",
]
