"""A tracer lent to another library: the Vercel AI SDK's spans written through Laminar's tracer
(`getTracer()` as `experimental_telemetry`'s tracer) come under Laminar's scope with its
`lmnr.span.*` keys beside the SDK's `ai.*` ones, and are read by the Vercel AI SDK's reader;
Laminar's own spans under that scope stay Laminar's."""

from __future__ import annotations

import json
from typing import Any

from otel_scorers.conventions import detect
from otel_scorers.span_record import SpanRecord
from tests.spans import only_run, span

LAMINAR = "lmnr.tracer"


def lent(operation: str, parent: SpanRecord | None = None, **attributes: Any) -> SpanRecord:
    """A Vercel AI SDK span as Laminar's span processor writes it."""
    return span(
        operation,
        parent,
        scope=LAMINAR,
        **{
            "ai.operationId": operation,
            "ai.telemetry.functionId": "weather-agent",
            "lmnr.span.path": [operation],
            "lmnr.span.instrumentation_source": "javascript",
            **attributes,
        },
    )


def test_the_sdk_spans_under_a_lent_tracer_are_read_as_the_sdk_writes_them() -> None:
    run_span = lent(
        "ai.generateText",
        **{"ai.prompt": json.dumps({"prompt": "Weather in Paris?"}), "ai.response.text": "Sunny."},
    )
    tool = lent(
        "ai.toolCall",
        run_span,
        **{
            "ai.toolCall.name": "get_weather",
            "ai.toolCall.args": '{"city":"Paris"}',
            "ai.toolCall.result": '"Sunny"',
        },
    )
    assert detect(run_span).name == "vercel-ai"  # type: ignore[union-attr]
    run = only_run([run_span, tool])
    assert (run.agent_name, run.input, run.output) == ("weather-agent", "Weather in Paris?", "Sunny.")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny")
    ]


def test_laminar_spans_carrying_another_readers_keys_stay_laminars() -> None:
    model_call = span(
        "openai.chat",
        scope=LAMINAR,
        lmnr__span__type="LLM",
        **{"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi"},
    )
    observed = span("agent", scope=LAMINAR, lmnr__span__input='["Hi"]')
    assert detect(model_call).name == "laminar"  # type: ignore[union-attr]
    assert detect(observed).name == "laminar"  # type: ignore[union-attr]
