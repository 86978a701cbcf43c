"""The outputs a pipeline's scores go to: a registry of names, chosen once where the pipeline is
built (`pipeline_builder`), for the processor and the sidecar alike.

    outputs: [otlp, metrics, console]      # the config file; left out: [otlp, metrics]

A new output is a class with `emit`, `emit_conversation`, `flush` and `behind` (`ScoreOutput`)
and one line in `OUTPUTS`; or, outside this package, `"pkg.module:factory"` in the list, a
function of `OutputContext` returning the output.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from otel_scorers.user_modules import import_user_module


@dataclass(frozen=True)
class OutputContext:
    """What an output may be made from: the pipeline's metrics and the telemetry it sends with."""

    metrics: PipelineMetrics
    tracer_provider: TracerProviderApi | None = None
    logger_provider: LoggerProvider | None = None
    #: Where evaluation spans and events go written as OTLP; None: through the SDK providers.
    export: OtlpScoreExport | None = None
    #: How full the SDK providers' export queues are (0 to 1), when known.
    provider_backlog: Callable[[], float] | None = None
    #: Where `console` writes; None: standard output.
    console: TextIO | None = None


def _evaluations(context: OutputContext) -> ScoreOutput:
    """Evaluation spans and `gen_ai.evaluation.result` events: written as OTLP for the score
    export when there is one, else through the SDK providers (whose exporters send OTLP)."""
    if context.export is not None:
        return OtlpOutput(context.export, context.tracer_provider)
    return SdkOutput(context.tracer_provider, context.logger_provider, context.provider_backlog)


#: Every output by the name the config file gives it.
OUTPUTS: dict[str, Callable[[OutputContext], ScoreOutput]] = {
    "otlp": _evaluations,
    "metrics": lambda context: MetricsOutput(context.metrics),
    "console": lambda context: ConsoleOutput(context.console),
}
DEFAULT_OUTPUTS = ("otlp", "metrics")


def output_factory(name: str) -> Callable[[OutputContext], ScoreOutput]:
    """The factory of a registered output, or of `"pkg.module:factory"`; `ValueError` naming the
    known outputs (and the closest) for anything else."""
    found = OUTPUTS.get(name)
    if found is not None:
        return found
    if ":" in name:
        module_name, _, attribute = name.partition(":")
        try:
            factory = getattr(import_user_module(module_name), attribute)
        except (ValueError, AttributeError) as exc:
            raise ValueError(f"cannot import output {name!r}: {exc}") from None
        if not callable(factory):
            raise ValueError(f"output {name!r} is not a function of OutputContext")
        return factory  # type: ignore[no-any-return]
    close = difflib.get_close_matches(name, list(OUTPUTS), n=1)
    hint = f"did you mean {close[0]!r}? Known: " if close else "use one of "
    raise ValueError(f"unknown output {name!r}; {hint}{', '.join(OUTPUTS)}, or 'pkg.module:factory'")


def chosen_outputs(outputs: Sequence[str] | None, console: bool) -> tuple[str, ...]:
    """The output names: the list given (default `DEFAULT_OUTPUTS`), with `console` added when
    the console switch is on (`console: true`, `serve --console`: shorthands kept)."""
    names = tuple(outputs) if outputs is not None else DEFAULT_OUTPUTS
    if console and "console" not in names:
        names = (*names, "console")
    return tuple(dict.fromkeys(names))  # each once, in order


def emission_of(names: Sequence[str], context: OutputContext) -> Emission:
    return Emission([output_factory(name)(context) for name in names])


def standard_emission(
    metrics: PipelineMetrics,
    *,
    tracer_provider: TracerProviderApi | None = None,
    logger_provider: LoggerProvider | None = None,
    export: OtlpScoreExport | None = None,
    console: bool | TextIO = False,
    provider_backlog: Callable[[], float] | None = None,
    outputs: Sequence[str] | None = None,
) -> Emission:
    """The `outputs` named (default: evaluation spans and events, and metrics), plus a line per
    score on standard output (or the given stream) with `console`."""
    context = OutputContext(
        metrics,
        tracer_provider,
        logger_provider,
        export,
        provider_backlog,
        None if isinstance(console, bool) else console,
    )
    return emission_of(chosen_outputs(outputs, bool(console)), context)
