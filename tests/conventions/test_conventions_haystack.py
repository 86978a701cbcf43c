"""Haystack's messages, written by OpenInference as Python reprs, are read as data, never run."""

from __future__ import annotations

from otel_scorers.conventions.formats import haystack

TOOL_RESULT = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result=\"Failed: down\", "
    "origin=ToolCall(tool_name='get_weather', arguments={'city': 'Paris'}, id='call_7', extra=None), "
    "error=True)], _name=None, _meta={})"
)


def test_a_failed_tool_result_is_a_response_part_marked_as_an_error() -> None:
    message = haystack.chat_message(TOOL_RESULT)
    assert message == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_7", "response": "Failed: down", "error": True}],
    }


def test_code_inside_a_repr_is_not_run_and_the_message_still_reads() -> None:
    ran: list[str] = []
    globals()["record"] = ran.append
    text = (
        "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='hi')], "
        "_name=None, _meta=record('ran'))"
    )
    message = haystack.chat_message(text)
    assert ran == []
    assert message == {"role": "user", "parts": [{"type": "text", "content": "hi"}]}


def test_text_that_is_not_a_chat_message_reads_as_nothing() -> None:
    assert haystack.chat_message("ChatMessage(_role=<ChatRole.USER") is None
    assert haystack.chat_message("print('x')") is None
    assert not haystack.messages(["ChatMessage(oops", TOOL_RESULT]).captured
