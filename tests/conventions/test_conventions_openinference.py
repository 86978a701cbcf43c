"""OpenInference: flattened messages, the OpenAI Agents, LangChain/LangGraph and smolagents layouts,
redacted content, and the run rules they need (handoffs and `final_answer` are not tool calls, a
managed agent answers its manager's tool-call part)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from otel_scorers import ScoringSpanProcessor
from otel_scorers.conventions.openinference_text import flattened_messages
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanEvent, SpanRecord
from tests.conftest import RunRecorder, Telemetry
from tests.spans import only_run, span

AGENTS = "openinference.instrumentation.openai_agents"
LANGCHAIN = "openinference.instrumentation.langchain"
SMOLAGENTS = "openinference.instrumentation.smolagents"


def oi(name: str, parent: SpanRecord | None, kind: str, scope: str, **attributes: Any) -> SpanRecord:
    return span(name, parent, scope=scope, **{"openinference.span.kind": kind, **attributes})


def messages(prefix: str, *items: dict[str, Any]) -> dict[str, Any]:
    """Flattened `llm.{prefix}_messages.{i}.message.*` keys for the given message fields."""
    flat: dict[str, Any] = {}
    for index, fields in enumerate(items):
        for key, value in fields.items():
            flat[f"llm.{prefix}_messages.{index}.message.{key}"] = value
    return flat


def llm(
    parent: SpanRecord, scope: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> SpanRecord:
    return oi(
        "generation", parent, "LLM", scope, **messages("input", *inputs), **messages("output", *outputs)
    )


def call(call_id: str, name: str, arguments: str, index: int = 0) -> dict[str, Any]:
    return {
        f"tool_calls.{index}.tool_call.id": call_id,
        f"tool_calls.{index}.tool_call.function.name": name,
        f"tool_calls.{index}.tool_call.function.arguments": arguments,
    }


def test_flattened_messages_keep_index_order_and_read_contents_tool_calls_and_tool_results() -> None:
    attributes = {
        **messages(
            "input",
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "contents.0.message_content.type": "text",
                "contents.0.message_content.text": "Hi ",
            },
            {"role": "assistant", **call("c1", "get_weather", '{"city": "Paris"}', index=3)},
            {"role": "tool", "content": "Sunny", "tool_call_id": "c1"},
        ),
        "llm.input_messages.1.message.contents.1.message_content.text": "there",
        "llm.input_messages.2.message.tool_calls.4.tool_call.function.name": "get_time",
    }
    parsed = flattened_messages(attributes, "llm.input_messages.")
    assert parsed.captured
    system, user, assistant, tool = parsed.items
    assert system["parts"] == [{"type": "text", "content": "Be brief."}]
    assert user["parts"] == [{"type": "text", "content": "Hi there"}]
    # Indices may start above 0; a call made with '{}' has no arguments key at all.
    assert [(p["id"], p["name"], p["arguments"]) for p in assistant["parts"]] == [
        ("c1", "get_weather", '{"city": "Paris"}'),
        (None, "get_time", {}),
    ]
    assert tool["parts"] == [{"type": "tool_call_response", "id": "c1", "response": "Sunny"}]
    assert not flattened_messages({}, "llm.output_messages.").captured


def openai_agents_trace(agent: str = "weather_agent") -> list[SpanRecord]:
    root = oi("Agent workflow", None, "AGENT", AGENTS)
    task = oi("Agent workflow", root, "CHAIN", AGENTS)
    run = oi(agent, task, "AGENT", AGENTS, **{"agent.name": agent})
    turn = oi("turn", run, "CHAIN", AGENTS)
    user = {"role": "user", "content": "Weather in Paris?"}
    ask = llm(turn, AGENTS, [user], [{"role": "assistant", **call("c1", "get_weather", '{"city": "Paris"}')}])
    tool = oi(
        "get_weather",
        turn,
        "TOOL",
        AGENTS,
        **{"tool.name": "get_weather", "input.value": '{"city": "Paris"}', "output.value": "Sunny"},
    )
    answer = llm(turn, AGENTS, [user], [{"role": "assistant", "content": "It is sunny."}])
    return [root, task, run, turn, ask, tool, answer]


def test_openai_agents_the_workflow_root_is_not_a_run_and_content_comes_from_llm_spans() -> None:
    run = only_run(openai_agents_trace())
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "openinference",
        "weather_agent",
        "Weather in Paris?",
        "It is sunny.",
    )
    (tool,) = run.tool_calls
    # No call id on the tool span: matched to the model's part by order and name.
    assert (tool.name, tool.call_id, tool.arguments, tool.result) == (
        "get_weather",
        "c1",
        {"city": "Paris"},
        "Sunny",
    )


def test_openai_agents_a_handoff_is_not_a_tool_call_and_the_agent_that_handed_off_has_no_answer() -> None:
    root = oi("Agent workflow", None, "AGENT", AGENTS)
    task = oi("Agent workflow", root, "CHAIN", AGENTS)
    triage = oi("triage", task, "AGENT", AGENTS, **{"agent.name": "triage"})
    turn = oi("turn", triage, "CHAIN", AGENTS)
    user = {"role": "user", "content": "Weather in Paris?"}
    ask = llm(
        turn,
        AGENTS,
        [user],
        [
            {
                "role": "assistant",
                "tool_calls.0.tool_call.id": "h1",
                "tool_calls.0.tool_call.function.name": "transfer_to_weather_agent",
            }
        ],
    )
    handoff = oi("handoff to Weather Agent", turn, "TOOL", AGENTS, **{"output.value": "Weather Agent"})
    runs = build_runs([root, task, triage, turn, ask, handoff])
    (run,) = runs
    assert run.agent_name == "triage" and run.tool_calls == ()
    assert run.output is None and "output" in run.missing


def test_openai_agents_streamed_generation_reads_the_responses_output_items() -> None:
    spans = openai_agents_trace()
    dump = [
        {
            "id": "r1",
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "It is sunny."}]},
            ],
        }
    ]
    streamed = [s for s in spans if s.name != "generation"]
    first = llm(spans[3], AGENTS, [{"role": "user", "content": "Weather in Paris?"}], [])
    tool_dump = [
        {"output": [{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"}]}
    ]
    first = _with(first, {"output.value": json.dumps(tool_dump)})
    last = _with(llm(spans[3], AGENTS, [], []), {"output.value": json.dumps(dump)})
    run = only_run([*streamed, first, last])
    assert run.output == "It is sunny."
    assert run.tool_calls[0].call_id == "c1"


def _with(record: SpanRecord, extra: dict[str, Any]) -> SpanRecord:
    return replace(record, attributes={**record.attributes, **extra})


def test_redacted_content_is_missing_not_empty() -> None:
    root = oi("Agent workflow", None, "AGENT", AGENTS)
    run_span = oi("weather_agent", root, "AGENT", AGENTS, **{"agent.name": "weather_agent"})
    model = oi(
        "generation",
        run_span,
        "LLM",
        AGENTS,
        **{"input.value": "__REDACTED__", "output.value": "__REDACTED__"},
    )
    tool = oi(
        "get_weather",
        run_span,
        "TOOL",
        AGENTS,
        **{"tool.name": "get_weather", "input.value": "__REDACTED__", "output.value": "__REDACTED__"},
    )
    run = only_run([root, run_span, model, tool])
    assert run.input is None and run.output is None
    assert {"input", "output"} <= run.missing
    assert [(c.name, c.arguments, c.result, c.state) for c in run.tool_calls] == [
        ("get_weather", None, None, "ok")
    ]


def test_a_failed_tool_has_no_result_even_when_the_framework_recorded_its_error_text() -> None:
    spans = openai_agents_trace()
    failed = spans[5]
    spans[5] = replace(
        failed,
        status="error",
        status_message="Error running tool (non-fatal)",
        attributes={**failed.attributes, "output.value": "An error occurred while running the tool."},
    )
    (call_,) = only_run(spans).tool_calls
    assert (call_.state, call_.result) == ("error", None)


def langgraph(
    name: str, parent: SpanRecord | None, kind: str, node: str | None, agent: str, **attributes: Any
) -> SpanRecord:
    metadata: dict[str, Any] = {"lc_agent_name": agent}
    if node is not None:
        metadata["langgraph_node"] = node
    return oi(name, parent, kind, LANGCHAIN, metadata=json.dumps(metadata), **attributes)


def test_langgraph_graph_nodes_are_not_runs_a_chain_named_after_its_agent_is_and_tool_messages_unwrap() -> (
    None
):
    outer_input = {"messages": [{"role": "user", "content": "Pack for Paris?"}]}
    outer_output = {
        "messages": [
            {"type": "human", "data": {"content": "Pack for Paris?"}},
            {"type": "ai", "data": {"content": "Pack light."}},
        ]
    }
    root = langgraph(
        "travel_agent",
        None,
        "AGENT",
        None,
        "travel_agent",
        **{"input.value": json.dumps(outer_input), "output.value": json.dumps(outer_output)},
    )
    node = langgraph("agent", root, "AGENT", "agent", "travel_agent")  # a model node named "agent"
    model = oi(
        "FakeChatModel",
        node,
        "LLM",
        LANGCHAIN,
        **messages("input", {"role": "user", "content": "Pack for Paris?"}),
        **messages("output", {"role": "assistant", **call("c7", "ask_expert", '{"question": "Weather?"}')}),
    )
    tools = langgraph("tools", root, "CHAIN", "tools", "travel_agent")
    tool_message = {"type": "tool", "data": {"content": "Sunny", "tool_call_id": "c7", "status": "success"}}
    tool = langgraph(
        "ask_expert",
        tools,
        "TOOL",
        "tools",
        "travel_agent",
        **{"tool.name": "ask_expert", "input.value": "Weather?", "output.value": json.dumps(tool_message)},
    )
    inner = langgraph(
        "weather_expert",
        tool,
        "CHAIN",
        "tools",
        "weather_expert",
        **{
            "input.value": json.dumps({"messages": [{"role": "user", "content": "Weather?"}]}),
            "output.value": json.dumps({"messages": [{"type": "ai", "data": {"content": "Sunny"}}]}),
        },
    )
    outer, expert = build_runs([root, node, model, tools, tool, inner])
    assert (outer.agent_name, outer.input, outer.output) == ("travel_agent", "Pack for Paris?", "Pack light.")
    (ask,) = outer.tool_calls
    # The bare one-argument input gives way to the model's arguments object; the ToolMessage unwraps.
    assert (ask.name, ask.call_id, ask.arguments, ask.result) == (
        "ask_expert",
        "c7",
        {"question": "Weather?"},
        "Sunny",
    )
    assert (expert.agent_name, expert.input, expert.output) == ("weather_expert", "Weather?", "Sunny")


def test_langgraph_an_unnamed_graph_is_a_run_but_its_nodes_are_not() -> None:
    graph = {"ls_integration": "langgraph"}
    root = oi("LangGraph", None, "CHAIN", LANGCHAIN, metadata=json.dumps(graph), **{"input.value": "Hi"})
    node = oi(
        "call_model", root, "CHAIN", LANGCHAIN, metadata=json.dumps({**graph, "langgraph_node": "agent"})
    )
    chain = oi("RunnableSequence", None, "CHAIN", LANGCHAIN, metadata="{}")
    (run,) = build_runs([root, node, chain])
    assert (run.agent_name, run.input) == ("LangGraph", "Hi")


def test_langgraph_a_tool_message_with_error_status_is_a_failed_call() -> None:
    root = langgraph("weather_agent", None, "AGENT", None, "weather_agent")
    message = {"type": "tool", "data": {"content": "Error: down", "tool_call_id": "c1", "status": "error"}}
    tool = langgraph(
        "get_weather", root, "TOOL", "tools", "weather_agent", **{"output.value": json.dumps(message)}
    )
    (failed,) = only_run([root, tool]).tool_calls
    assert (failed.state, failed.result, failed.error) == ("error", None, "Error: down")


def smol(name: str, parent: SpanRecord | None, kind: str, **attributes: Any) -> SpanRecord:
    return oi(name, parent, kind, SMOLAGENTS, **attributes)


def smol_tool(parent: SpanRecord, cls: str, tool: str, kwargs: dict[str, Any], output: str) -> SpanRecord:
    arguments = {"args": [], "sanitize_inputs_outputs": True, "kwargs": kwargs}
    return smol(
        cls,
        parent,
        "TOOL",
        **{"tool.name": tool, "input.value": json.dumps(arguments), "output.value": output},
    )


def smol_llm(parent: SpanRecord, name: str, arguments: dict[str, Any], call_id: str) -> SpanRecord:
    return smol(
        "OpenAIModel.generate",
        parent,
        "LLM",
        **messages("output", {"role": "assistant", **call(call_id, name, json.dumps(arguments))}),
    )


def test_smolagents_final_answer_is_the_answer_not_a_tool_call_and_arguments_come_from_kwargs() -> None:
    run_span = smol(
        "weather_agent.run",
        None,
        "AGENT",
        **{
            "input.value": json.dumps({"task": "Weather in Paris?", "stream": False}),
            "output.value": "Sunny.",
        },
    )
    step1 = smol("Step 1", run_span, "CHAIN")
    step2 = smol("Step 2", run_span, "CHAIN")
    spans = [
        run_span,
        step1,
        smol_llm(step1, "get_weather", {"city": "Paris"}, "c1"),
        smol_tool(step1, "SimpleTool", "get_weather", {"city": "Paris"}, "Sunny, 21°C"),
        step2,
        smol_llm(step2, "final_answer", {"answer": "Sunny."}, "c2"),
        smol_tool(step2, "FinalAnswerTool", "final_answer", {"answer": "Sunny."}, "Sunny."),
    ]
    run = only_run(spans)
    assert (run.agent_name, run.input, run.output) == ("weather_agent", "Weather in Paris?", "Sunny.")
    assert [(c.name, c.arguments, c.result, c.state) for c in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C", "ok")
    ]


def test_smolagents_a_managed_agent_answers_the_managers_tool_call_with_what_the_step_observed() -> None:
    manager = smol("manager.run", None, "AGENT", **{"input.value": json.dumps({"task": "Weather?"})})
    step = smol("Step 1", manager, "CHAIN", **{"output.value": "Report from 'weather_agent':\nSunny."})
    ask = smol_llm(step, "weather_agent", {"task": "Find the weather."}, "c9")
    inner = smol(
        "weather_agent.run",
        step,
        "AGENT",
        **{"input.value": json.dumps({"task": "Find the weather."}), "output.value": "Sunny."},
    )
    outer_run, inner_run = build_runs([manager, step, ask, inner])
    (delegated,) = outer_run.tool_calls
    assert (delegated.name, delegated.call_id, delegated.arguments, delegated.result, delegated.state) == (
        "weather_agent",
        "c9",
        {"task": "Find the weather."},
        "Report from 'weather_agent':\nSunny.",
        "ok",
    )
    assert (inner_run.agent_name, inner_run.input, inner_run.output) == (
        "weather_agent",
        "Find the weather.",
        "Sunny.",
    )


def test_a_failed_managed_agent_is_a_failed_call() -> None:
    manager = smol("manager.run", None, "AGENT")
    step = smol("Step 1", manager, "CHAIN")
    inner = smol(
        "helper.run",
        step,
        "AGENT",
        status="error",
        status_message="boom",
        events=(SpanEvent("exception", 1, {"exception.message": "boom"}),),
    )
    outer_run, _ = build_runs([manager, step, smol_llm(step, "helper", {"task": "x"}, "c1"), inner])
    assert [(c.name, c.state, c.result) for c in outer_run.tool_calls] == [("helper", "error", None)]


def test_a_span_of_another_openinference_framework_uses_the_generic_rules() -> None:
    agent = oi(
        "crew",
        None,
        "AGENT",
        "openinference.instrumentation.dspy",
        **{
            "input.value": "Plan a trip",
            "input.mime_type": "text/plain",
            "output.value": "Done",
            "session.id": "s1",
        },
    )
    (run,) = build_runs([agent])
    assert (run.agent_name, run.input, run.output, run.conversation_id) == (
        "crew",
        "Plan a trip",
        "Done",
        "s1",
    )


def test_in_process_an_agent_span_is_spotted_by_its_kind_when_it_starts(telemetry: Telemetry) -> None:
    """The real SDK and processor, spans shaped as OpenInference's OpenAI Agents processor makes
    them: the kind is set when a span starts, the rest when it ends."""
    recorder = RunRecorder()
    seen = recorder.runs

    processor = ScoringSpanProcessor([recorder], **telemetry.providers())
    telemetry.tracer_provider.add_span_processor(processor)
    tracer = telemetry.tracer_provider.get_tracer(AGENTS)
    kind = "openinference.span.kind"
    with (
        tracer.start_as_current_span("Agent workflow", attributes={kind: "AGENT"}),
        tracer.start_as_current_span("weather_agent", attributes={kind: "AGENT"}) as agent_span,
    ):
        with tracer.start_as_current_span("generation", attributes={kind: "LLM"}) as model:
            model.set_attributes(
                {
                    **messages("input", {"role": "user", "content": "Weather in Paris?"}),
                    **messages("output", {"role": "assistant", "content": "Sunny."}),
                }
            )
        agent_span.set_attribute("agent.name", "weather_agent")
    assert processor.force_flush(5000)
    (run,) = seen
    assert (run.convention, run.agent_name, run.input, run.output) == (
        "openinference",
        "weather_agent",
        "Weather in Paris?",
        "Sunny.",
    )
    processor.shutdown()


def test_a_loop_ending_tool_is_left_out_only_under_the_framework_that_owns_it() -> None:
    """`final_answer` is BeeAI's own tool, so it is not a call of a BeeAI run; an agent of
    another framework may well have a tool of its own by that name."""
    beeai = "openinference.instrumentation.beeai"
    other = "openinference.instrumentation.example"
    runs = []
    for scope in (beeai, other):
        agent = oi("weather_agent", None, "AGENT", scope, **{"agent.name": "weather_agent"})
        tool = oi(
            "final_answer", agent, "TOOL", scope, **{"tool.name": "final_answer", "output.value": "sent"}
        )
        (run,) = build_runs([agent, tool])
        runs.append(run.tool_names)
    assert runs == [[], ["final_answer"]]
