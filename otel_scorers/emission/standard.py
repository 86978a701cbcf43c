"""The outputs a pipeline's scores go to, chosen once where the processor or the sidecar is made."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from opentelemetry._logs import LoggerProvider
from opentelemetry.trace import TracerProvider as TracerProviderApi

from otel_scorers.emission.console_output import ConsoleOutput
from otel_scorers.emission.metrics_output import MetricsOutput
from otel_scorers.emission.otlp_output import OtlpOutput
from otel_scorers.emission.outputs import Emission, ScoreOutput
from otel_scorers.emission.sdk_output import SdkOutput
from otel_scorers.metrics import PipelineMetrics
from otel_scorers.otlp.score_export import OtlpScoreExport


def standard_emission(
    metrics: PipelineMetrics,
    *,
    tracer_provider: TracerProviderApi | None = None,
    logger_provider: LoggerProvider | None = None,
    export: OtlpScoreExport | None = None,
    console: bool | TextIO = False,
    provider_backlog: Callable[[], float] | None = None,
) -> Emission:
    """Evaluation spans and events written as OTLP for `export` when there is one, else through the
    SDK providers (`provider_backlog()`: how full their export queues are); the metrics through
    `metrics`; with `console`, a line per score on standard output (or the given stream)."""
    outputs: list[ScoreOutput] = [
        OtlpOutput(export, tracer_provider)
        if export is not None
        else SdkOutput(tracer_provider, logger_provider, provider_backlog),
        MetricsOutput(metrics),
    ]
    if console:
        outputs.append(ConsoleOutput(None if console is True else console))
    return Emission(outputs)
