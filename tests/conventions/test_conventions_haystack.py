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


def test_a_whole_input_written_as_its_repr_reads_its_messages_never_runs_code_and_stays_bounded() -> None:
    ran: list[str] = []
    globals()["record"] = ran.append
    user = (
        "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='hi')], _name=None, _meta={})"
    )
    tool = "AgentTool(name='helper', function=<function ComponentTool.__init__.<locals>.invoke at 0x7f3c>)"
    found = haystack.repr_messages(f"{{'messages': [{user}, {TOOL_RESULT}], 'tools': [{tool}]}}")
    assert [message["role"] for message in found.items] == ["user", "tool"]
    # Code in the repr is parsed, never run: beside the messages it is not read, among them it
    # leaves them unread.
    assert haystack.repr_messages(f"{{'messages': [{user}], 'tools': [record('ran')]}}").captured
    assert not haystack.repr_messages(f"{{'messages': [{user}, record('ran')]}}").captured
    assert ran == []
    # Brackets and quotes inside a message's text do not end its list; what follows is not parsed.
    bracketed = user.replace("text='hi'", "text='a ] b \\' [ c'")
    (message,) = haystack.repr_messages(f"{{'messages': [{bracketed}], 'tools': [X(]}}").items
    assert message["parts"] == [{"type": "text", "content": "a ] b ' [ c"}]
    # A message that is not certainly one, or text past the bound, is not read at all.
    assert not haystack.repr_messages(f"{{'messages': [{user}, 'ChatMessage(oops']}}").captured
    assert not haystack.repr_messages(f"{{'messages': [{user}], 'pad': '{'x' * 20_000}'}}").captured


def test_a_pipeline_names_the_component_whose_inputs_or_outputs_are_the_runs_and_never_guesses() -> None:
    question = {"messages": ["ChatMessage(...question...)"]}
    run_input = {**question, "streaming_callback": None}
    run_output = {"last_message": "ChatMessage(...answer...)"}
    pipeline_input = {"data": {"weather_agent": question}}
    assert haystack.component_name(run_input, run_output, pipeline_input, {}) == "weather_agent"
    assert haystack.component_name({}, run_output, {}, {"writer": run_output}) == "writer"
    # Two components given the same inputs: which one ran here is not known.
    both = {"data": {"weather_agent": question, "time_agent": question}}
    assert haystack.component_name(run_input, {}, both, {}) is None
    # Content hidden: nothing to compare.
    assert haystack.component_name(None, None, None, None) is None


def test_an_agent_run_as_a_tool_is_named_after_the_tool_whose_result_is_its_answer() -> None:
    call = "ToolCall(tool_name='weather_agent', arguments={'messages': []}, id='call_1', extra=None)"
    result = f"ToolCallResult(result='Sunny.', origin={call}, error=False)"
    caller = {
        "messages": [
            f"ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[{call}], _name=None, _meta={{}})",
            f"ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[{result}], _name=None, _meta={{}})",
        ]
    }
    answer = "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[TextContent(text='Sunny.')], _name=None, _meta={})"
    assert haystack.tool_agent_name({"last_message": answer}, caller) == "weather_agent"
    other = answer.replace("Sunny.", "Rainy.")
    assert haystack.tool_agent_name({"last_message": other}, caller) is None
