"""`otel-scorers demo`: the example agent, scored live by a default config, printed as a table."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_scorers.config import load_config, parse_config
from otel_scorers.demos import otlp_send
from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.emission.attributes import LABEL_ATTRIBUTE_PREFIX, SCORE_ATTRIBUTE_PREFIX
from otel_scorers.gen_ai_names import (
    GEN_AI_EVALUATION_EXPLANATION,
    GEN_AI_EVALUATION_NAME,
    GEN_AI_EVALUATION_SCORE_LABEL,
    GEN_AI_EVALUATION_SCORE_VALUE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
)
from otel_scorers.human_text import counted
from otel_scorers.inprocess.processor import ScoringSpanProcessor
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, unreachable
from otel_scorers.runs.trace_writer import write_traces
from otel_scorers.scorers.judge import ENV_MODEL, JudgeConfig, import_litellm
from otel_scorers.scorers.judge.config import ENV_API_BASE
from otel_scorers.span_record import OWN_SCOPE

WEATHER_ONLY = "{op: eq, left: {path: agent.name}, right: {literal: weather-agent}}"
DEMO_CONFIG = f"""
scorers:
  - type: no_tool_errors
  - type: called_tool
    args: {{tool: get_weather}}
    filter: {WEATHER_ONLY}
  - type: max_tool_calls
    args: {{max: 2}}
  - type: matches
    name: gives-temperature
    args: {{pattern: '-?\\d+°C'}}
    filter: {WEATHER_ONLY}
  - type: excludes
    name: no-apology
    args: {{unwanted: sorry}}
"""


def demo_document(out: Any = None) -> dict[str, Any]:
    """The demo's config, with answer_relevancy when a judge model is configured, with its key or
    at an `api_base` (a local server needs none); otherwise one line on how to turn it on."""
    document: dict[str, Any] = yaml.safe_load(DEMO_CONFIG)
    judge = JudgeConfig.from_env()
    if judge.model:
        missing = (
            import_litellm()
            .validate_environment(model=judge.model, api_key=judge.api_key, api_base=judge.api_base)
            .get("missing_keys")
        )
        # a server at api_base (a local model) is sent a placeholder when it is given no key
        if not missing or judge.api_base:
            document["scorers"].append({"type": "answer_relevancy", "args": {"threshold": 0.7}})
            document["judge"] = judge.model_dump(exclude_none=True)
            return document
        print(
            f"LLM judge off: {ENV_MODEL}={judge.model} also needs {', '.join(missing)}.",
            file=out or sys.stdout,
        )
        return document
    print(
        f"LLM judge off: set {ENV_MODEL}=openai/gpt-4o-mini (and OPENAI_API_KEY, or {ENV_API_BASE} "
        "for a local server that needs no key) to add answer_relevancy.",
        file=out or sys.stdout,
    )
    return document


def run_demo(
    otlp_endpoint: str | None = None,
    protocol: str = DEFAULT_PROTOCOL,
    config_path: Path | None = None,
    traces_out: Path | None = None,
) -> int:
    config = load_config(config_path) if config_path else parse_config(demo_document(), "demo config")
    # The demo keeps its signals in memory, to print them: these providers are the example
    # agent's own, which the in-process door scores into as it does into any host's, not
    # telemetry built from export settings. Its one OTLP send, with `--otlp-endpoint`, uses the
    # exporters those settings make (`otlp_send`).
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "otel-scorers-demo")})
    spans = InMemorySpanExporter()
    events = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    metric_reader = InMemoryMetricReader()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(events))
    problem = unreachable(otlp_endpoint, protocol) if otlp_endpoint else None
    meter_provider = MeterProvider(resource=resource, metric_readers=[metric_reader])
    tracer_provider = TracerProvider(resource=resource)
    recorded = InMemorySpanExporter()
    if traces_out is not None:  # the agent's spans as it ended them, before any score is added
        tracer_provider.add_span_processor(SimpleSpanProcessor(recorded))
    processor = ScoringSpanProcessor.from_config(
        config,
        downstream=SimpleSpanProcessor(spans),
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
    )
    tracer_provider.add_span_processor(processor)

    agent = ExampleAgent(tracer=tracer_provider.get_tracer("example-agent"))
    for script in DEMO_RUNS:
        agent.run(script)
    processor.force_flush()
    finished = spans.get_finished_spans()
    print_table(finished, [binding.name for binding in processor.bindings])

    evaluation_spans = [span for span in finished if _is_evaluation(span)]
    finished_events = events.get_finished_logs()
    metrics = metric_reader.get_metrics_data()
    tracer_provider.shutdown()
    logger_provider.shutdown()
    meter_provider.shutdown()
    print()
    if traces_out is not None:
        _write_agent_traces(recorded.get_finished_spans(), traces_out)
    _say_where_scores_are(len(evaluation_spans), len(finished_events))
    if not otlp_endpoint:
        print(
            "Here they stayed in memory: pass --otlp-endpoint http://localhost:4317 to send them to a collector."
        )
        return 0
    if problem is not None:
        print(f"Nothing was sent to {otlp_endpoint}: {problem}. Is a collector listening there?")
        return 1
    results = otlp_send.send(otlp_endpoint, protocol, finished, finished_events, metrics)
    print(otlp_send.summary(otlp_endpoint, protocol, results))
    return 0 if all(result.accepted for result in results) else 1


def _is_evaluation(span: ReadableSpan) -> bool:
    """A span of the scores (made by this package), not one of the agent's own."""
    return bool(span.instrumentation_scope and span.instrumentation_scope.name == OWN_SCOPE)


def _write_agent_traces(recorded: Sequence[ReadableSpan], traces_out: Path) -> None:
    """The agent's own spans as OTLP/JSON, without the evaluation spans, so that `score` can
    score them again as if they came from the agent."""
    agent_spans = [span for span in recorded if not _is_evaluation(span)]
    written = write_traces(traces_out, agent_spans)
    print(
        f"The agent's traces ({counted(written, 'trace')}, {counted(len(agent_spans), 'span')}) are in {traces_out}, as OTLP/JSON:"
    )
    print(f"  otel-scorers score {traces_out} -c CONFIG   scores them again, with any scorers.")


def _say_where_scores_are(evaluation_spans: int, events: int) -> None:
    print(f"The scores are {evaluation_spans} 'evaluate <scorer>' spans (children of each run span),")
    print(f"{events} gen_ai.evaluation.result events, the metrics gen_ai.evaluation.score and")
    print(
        "gen_ai.evaluation.results, and otel_scorers.score.* / otel_scorers.label.* attributes on the run spans."
    )


def print_table(spans: Sequence[ReadableSpan], scorer_names: Sequence[str], out: Any = None) -> None:
    """One block per run: the question, the answer, the tools, then each scorer's verdict."""
    out = out or sys.stdout
    runs = sorted(
        (span for span in spans if (span.attributes or {}).get(GEN_AI_OPERATION_NAME) == "invoke_agent"),
        key=lambda span: span.start_time or 0,
    )
    evaluations: dict[tuple[int, str], ReadableSpan] = {}
    tools: dict[int, list[str]] = {}
    for span in spans:
        attributes = span.attributes or {}
        if span.parent is None:
            continue
        if span.instrumentation_scope and span.instrumentation_scope.name == OWN_SCOPE:
            evaluations[(span.parent.span_id, str(attributes.get(GEN_AI_EVALUATION_NAME)))] = span
        elif attributes.get(GEN_AI_OPERATION_NAME) == "execute_tool":
            mark = "x" if span.status.status_code.name == "ERROR" else "ok"
            tools.setdefault(span.parent.span_id, []).append(f"{attributes.get('gen_ai.tool.name')} ({mark})")
    width = max(len(name) for name in scorer_names)
    for number, run in enumerate(runs, start=1):
        attributes = run.attributes or {}
        question, answer = (
            _message_text(attributes.get(GEN_AI_INPUT_MESSAGES)),
            _message_text(attributes.get(GEN_AI_OUTPUT_MESSAGES)),
        )
        print(f"run {number}  {attributes.get('gen_ai.agent.name')}", file=out)
        print(f"  asked:    {question if question is not None else '(not captured)'}", file=out)
        print(f"  answered: {answer if answer is not None else '(not captured)'}", file=out)
        print(f"  tools:    {', '.join(tools.get(run.context.span_id, [])) or '-'}", file=out)
        for name in scorer_names:
            print(
                f"    {name:<{width}}  {_verdict(evaluations.get((run.context.span_id, name)), attributes, name)}",
                file=out,
            )


def _message_text(raw: Any) -> str | None:
    import json

    if not isinstance(raw, str):
        return None
    messages = json.loads(raw)
    return "".join(part.get("content", "") for part in messages[-1]["parts"] if part.get("type") == "text")


def _verdict(evaluation: ReadableSpan | None, run_attributes: Any, name: str) -> str:
    if evaluation is None:
        return "-  (not applicable: filtered out)"
    attributes = evaluation.attributes or {}
    if "otel_scorers.skipped" in attributes:
        return f"skipped  ({attributes['otel_scorers.skipped']!s})"
    if "error.type" in attributes:
        return f"error  ({attributes['error.type']!s})"
    value = attributes.get(GEN_AI_EVALUATION_SCORE_VALUE)
    label = attributes.get(GEN_AI_EVALUATION_SCORE_LABEL) or ""
    # Hold mode put the score (and the label, when there is one) on the run's own span.
    on_span = SCORE_ATTRIBUTE_PREFIX + name in run_attributes and (
        not label or LABEL_ATTRIBUTE_PREFIX + name in run_attributes
    )
    verdict = f"{label:<4}  {value:g}{'' if on_span else '  (not on run span)'}"
    explanation = attributes.get(GEN_AI_EVALUATION_EXPLANATION)
    return f"{verdict}  {explanation}" if label == "fail" and explanation else verdict
