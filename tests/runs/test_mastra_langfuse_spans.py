"""What Mastra's spans hold when its Langfuse exporter writes them, read on traces captured from
Mastra agents through @mastra/langfuse 1.5 (tests/fixtures/traces/mastra-langfuse)."""

from __future__ import annotations

from .fixture_runs import attribute_values, runs_of


def test_a_run_s_request_and_answer_are_read_from_the_exporter_s_record_of_the_span() -> None:
    # Mastra's own keys (`mastra.agent_run.input`) are not on the span: Langfuse's record is.
    key = "langfuse.observation.output"
    assert attribute_values("mastra-langfuse", "tool_then_answer", "invoke_agent weather-agent", key) == [
        '{"text":"It is sunny and 21°C in Paris.","files":[]}'
    ]
    (run,) = runs_of("mastra-langfuse", "tool_then_answer")
    assert run.input == "What is the weather in Paris?"
    # The answer's object, its empty `files` beside the text, is reduced to the text.
    assert run.output == "It is sunny and 21°C in Paris."
    assert "output" not in run.text_sources or "model calls" not in run.text_sources["output"]
