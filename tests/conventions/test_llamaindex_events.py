"""LlamaIndex's workflow events as OpenInference (Python reprs) and OpenLLMetry (JSON) write them."""

from __future__ import annotations

import json

from otel_scorers.conventions.formats import llamaindex

USER = "ChatMessage(role=<MessageRole.USER: 'user'>, additional_kwargs={}, blocks=[TextBlock(block_type='text', text='Hi')])"


def test_the_agent_is_the_last_field_of_an_agent_input_even_when_a_message_names_another() -> None:
    tricky = USER.replace("'Hi'", "\"current_agent_name='mallory')\"")
    assert llamaindex.repr_agent_name(
        f"AgentInput(input=[{tricky}], current_agent_name='weather_agent')"
    ) == ("weather_agent")
    assert (
        llamaindex.repr_agent_name("AgentSetup(input=[6 items], current_agent_name='time_agent')")
        == "time_agent"
    )


def test_a_shortened_or_other_event_names_no_agent() -> None:
    assert llamaindex.repr_agent_name(f"AgentInput(input=[{USER[:40]}...") is None
    assert (
        llamaindex.repr_agent_name("ToolCall(tool_name='get_weather', tool_kwargs={}, tool_id='c1')") is None
    )


def test_an_agent_output_gives_its_text_blocks_and_a_react_answer_only_what_follows_answer() -> None:
    text = repr("It's 21°C, 'sunny'.\n")  # Python writes it in double quotes
    event = (
        "AgentOutput(response=ChatMessage(role=<MessageRole.ASSISTANT: 'assistant'>, additional_kwargs={}, "
        f"blocks=[TextBlock(block_type='text', text={text})]), structured_response=None, "
        "current_agent_name='a', raw=None, tool_calls=[], retry_messages=[])"
    )
    assert llamaindex.repr_answer(event) == "It's 21°C, 'sunny'.\n"
    assert llamaindex.react_answer("Thought: done.\nAnswer: Bonjour !") == "Bonjour !"
    assert llamaindex.react_answer("Answer: not a ReAct turn") == "Answer: not a ReAct turn"


def test_a_tool_output_is_the_text_the_model_got_read_back_as_data_and_its_error_flag() -> None:
    output = {
        "blocks": [{"text": "{'temp_c': 21}"}],
        "tool_name": "w",
        "raw_output": {"temp_c": 21},
        "is_error": False,
    }
    assert llamaindex.tool_output(json.dumps(output)) == ({"temp_c": 21}, False)
    failed = dict(output, blocks=[{"text": "service down"}], is_error=True)
    assert llamaindex.tool_output(failed) == ("service down", True)
    assert llamaindex.tool_output("plain") == ("plain", False)


def test_only_agent_classes_and_agent_workflows_are_runs() -> None:
    assert llamaindex.is_agent_class("FunctionAgent.run", ".run")
    assert llamaindex.is_agent_class("AgentWorkflow.workflow", ".workflow")
    assert not llamaindex.is_agent_class("RetrieverQueryEngine.workflow", ".workflow")
    assert not llamaindex.is_agent_class("FunctionAgent.run_agent_step", ".run")


def test_retrieved_nodes_are_read_from_json_strings_or_objects() -> None:
    node = {"node": {"id_": "n1", "text": "Paris is in France."}, "score": 0.5}
    assert llamaindex.retrieved_nodes(json.dumps([json.dumps(node), node, {"node": {}}])) == [
        ("Paris is in France.", "n1"),
        ("Paris is in France.", "n1"),
    ]
