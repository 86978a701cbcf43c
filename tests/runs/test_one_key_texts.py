"""A run's request or answer held alone under a well-known key is its text, whatever punctuation
the text holds (tests/fixtures/traces/langsmith-openai: LangSmith's record of a `traceable`
function's result that is no object, `{"output": ...}`)."""

from __future__ import annotations

from otel_scorers.runs.run_text import FROM_STRUCTURE, reduce_structure

from .fixture_runs import runs_of

CORPUS = "langsmith-openai"


def test_an_answer_with_a_colon_held_under_one_key_is_its_text() -> None:
    (run,) = runs_of(CORPUS, "failing_tool")
    assert run.output == "Sorry, I could not get the weather for Paris: the weather service is unavailable."
    assert run.text_sources["output"] == FROM_STRUCTURE


def test_every_turn_of_a_thread_is_read_with_its_answer() -> None:
    first, second = runs_of(CORPUS, "multi_turn")
    assert (first.output, second.output) == (
        "It is sunny and 21°C in Paris.",
        "No, you will not need an umbrella: it is sunny.",
    )
    assert first.conversation_id == second.conversation_id == "chat-42"


def test_a_quote_escaped_in_the_text_ends_no_key() -> None:
    assert reduce_structure('{"answer": "It is \\"sunny\\": 21°C."}', "output") == 'It is "sunny": 21°C.'
    # Two keys, one text each: not the one-key form, kept as it is.
    assert not isinstance(reduce_structure('{"output": "a: b", "note": "c: d"}', "output"), str)
