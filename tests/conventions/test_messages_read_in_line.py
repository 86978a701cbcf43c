"""Message texts read in line (a span's two sides looked up among its trace's texts, a decoded
message kept as decoded when it is already in the normalized shape, whether the messages carry
content decided in the same walk) read as every message text is read."""

from __future__ import annotations

import json

from otel_scorers.conventions.formats.messages import carries_content, genai_messages
from otel_scorers.conventions.formats.parsed_texts import parsed_once
from otel_scorers.conventions.genai import model_call
from otel_scorers.span_record import SpanRecord

QUESTION = {"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]}


def test_a_message_is_normalized_with_its_role_first_whatever_order_it_was_written_in() -> None:
    written = [{"parts": QUESTION["parts"], "role": "user"}, QUESTION]
    found = genai_messages(json.dumps(written))
    assert found.items == (QUESTION, QUESTION)
    assert [list(message) for message in found.items] == [["role", "parts"], ["role", "parts"]]


def test_keys_beside_the_shape_are_dropped_and_a_name_kept() -> None:
    written = [
        {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}], "finish_reason": "stop"}
    ]
    assert genai_messages(json.dumps(written)).items == (
        {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]},
    )
    named = [{"role": "user", "name": "ana", "parts": []}]
    assert genai_messages(json.dumps(named)).items == ({"role": "user", "parts": [], "name": "ana"},)


def test_whether_messages_carry_content_is_what_their_parts_say() -> None:
    shapes_only = [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather"}]}
    ]
    no_parts = [{"role": "user", "parts": []}]
    malformed_part = [{"role": "user", "parts": ["text", {"type": "text", "content": "hi"}]}]
    other_shape = [{"role": "user", "content": "hi"}, {"role": "assistant", "parts": [{"type": "text"}]}]
    for written, carried in (
        (shapes_only, False),
        (no_parts, True),
        (malformed_part, True),
        (other_shape, True),
    ):
        found = genai_messages(json.dumps(written))
        assert found.captured is carried, written
        assert carries_content(found.items) is carried, written


def test_a_model_span_s_sides_are_read_once_in_a_trace_and_plain_text_stays_a_message() -> None:
    request = json.dumps([QUESTION])
    span = SpanRecord(
        1,
        2,
        None,
        "chat m",
        end_ns=1,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": request,
            "gen_ai.output.messages": "It is sunny.",  # plain text, as OpenLIT's Pydantic AI writes
        },
    )
    with parsed_once() as parsed:
        first = model_call(span)
        again = model_call(span)
    assert first.input.items == (QUESTION,)
    assert first.output.items == (
        {"role": "assistant", "parts": [{"type": "text", "content": "It is sunny."}]},
    )
    assert again.input is first.input and parsed[request] is first.input
