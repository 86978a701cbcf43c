"""While a trace's runs are built, a message text met again is read from what its first parse
gave (the run span's messages are its model calls' request and answer, the same text)."""

from __future__ import annotations

import json

from otel_scorers.conventions.formats.messages import genai_messages
from otel_scorers.conventions.formats.parsed_texts import parsed_once

TEXT = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]}])


def test_a_text_met_again_while_building_is_not_parsed_again() -> None:
    with parsed_once():
        first = genai_messages(TEXT)
        again = genai_messages("".join(TEXT))  # an equal text, another string object
    assert again is first
    assert first.items == (
        {"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]},
    )
    assert first.captured


def test_outside_a_build_each_text_is_parsed_and_nothing_is_kept() -> None:
    with parsed_once():
        inside = genai_messages(TEXT)
    outside = genai_messages(TEXT)
    assert outside is not inside and outside == inside
    assert genai_messages(TEXT) is not outside
