"""otel-scorers: live quality scoring for AI agents on OpenTelemetry."""

from otel_scorers import scorers
from otel_scorers.config import Config, load_config
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.errors import ConfigError
from otel_scorers.inprocess.processor import ScoringSpanProcessor
from otel_scorers.model import (
    AgentRun,
    ContextItem,
    Handoff,
    JudgeUsage,
    Score,
    ScoreError,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)
from otel_scorers.otlp.trace_file import TraceFileExporter
from otel_scorers.scorers import checks
from otel_scorers.scorers.judge import Judge, JudgeConfig, JudgeError
from otel_scorers.scorers.llm import ask_judge, llm_scorer
from otel_scorers.scorers.protocol import Scorer, scorer
from otel_scorers.selection.binding import Binding, bind
from otel_scorers.selection.paced_sampling import PacingPolicy
from otel_scorers.selection.risk import RiskWeights
from otel_scorers.version import __version__

__all__ = [
    "AgentRun",
    "Binding",
    "Config",
    "ConfigError",
    "ContextItem",
    "ConventionDescription",
    "Handoff",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeUsage",
    "PacingPolicy",
    "RiskWeights",
    "Score",
    "ScoreError",
    "Scorer",
    "ScoringSpanProcessor",
    "TokenUsage",
    "ToolCall",
    "ToolDefinition",
    "TraceFileExporter",
    "__version__",
    "ask_judge",
    "bind",
    "checks",
    "llm_scorer",
    "load_config",
    "scorer",
    "scorers",
]
