"""One run per agent invocation, its text found wherever the trace keeps it, its agent named from
every place a convention keeps a name, its tools' values as the tools saw them: the rules every
convention shares, on traces captured from real packages (tests/fixtures/traces)."""

from __future__ import annotations

import json
from pathlib import Path

from otel_scorers import bind, checks
from otel_scorers.emission.attributes import evaluation_attributes
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.explain import explain_files, explanation_lines
from otel_scorers.runs.otlp_files import read_spans, runs_from_files
from otel_scorers.runs.run_builder import build_runs
from otel_scorers.span_record import SpanRecord
from tests.runs.fixture_runs import attribute_values, runs_of

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PARIS = "What is the weather in Paris?"
ANSWER = "It is sunny and 21°C in Paris."


def spans_of(corpus: str, scenario: str) -> list[SpanRecord]:
    return list(read_spans(TRACES / corpus / f"{scenario}.json", []))


def view(run: AgentRun) -> tuple[object, ...]:
    return (run.agent_name, run.input, run.output, [(c.name, c.result, c.state) for c in run.tool_calls])


# ---- one run per agent invocation ----------------------------------------------------------


def test_unnamed_agent_spans_around_and_inside_a_named_run_are_not_runs_of_their_own() -> None:
    # OpenLIT's OpenAI Agents spans: an unnamed invoke_agent wrapper, the named one, one unnamed
    # invoke_agent per turn inside it.
    assert [view(run) for run in runs_of("openlit-openai-agents", "tool_then_answer")] == [
        ("weather_agent", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    ]


def test_a_graphs_nodes_marked_as_agents_beside_its_run_are_not_runs() -> None:
    # OpenLIT's LangGraph spans: `invoke_agent model` per node, beside `invoke_agent weather_agent`.
    runs = runs_of("openlit-langchain", "tool_then_answer")
    assert [run.agent_name for run in runs] == ["weather_agent"]


def test_an_agent_that_runs_once_per_turn_inside_a_run_is_its_steps() -> None:
    # create_react_agent under OpenLIT: an `invoke_agent agent` span per turn inside the run.
    runs = runs_of("openlit-langchain", "react_agent")
    assert [view(run) for run in runs] == [
        ("weather_agent", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    ]


def test_a_runner_span_around_the_agent_gives_it_the_request_and_answer_its_own_span_lacks() -> None:
    # MLflow's autolog: `AgentRunner.run` holds the request and answer; the agent's own span a
    # type descriptor ({"output_type": "str"}).
    (run,) = runs_of("mlflow-openai-agents", "tool_then_answer")
    assert view(run) == ("weather_agent", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    assert run.text_sources == {
        "input": "from the span around the run",
        "output": "from the span around the run",
    }


def test_a_handoff_no_tool_span_records_joins_the_two_agents_runs() -> None:
    # OpenLIT records no handoff span: the triage model asked for transfer_to_weather_agent.
    (run,) = runs_of("openlit-openai-agents", "handoff_after_tool")
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage_agent", "weather_agent")]
    assert [call.name for call in run.tool_calls] == ["get_time", "get_weather"]
    assert run.final_agent == "weather_agent"


def test_a_span_recording_a_handoff_in_the_genai_handoff_attributes_joins_the_two_agents_runs() -> None:
    # OpenTelemetry's OpenAI Agents instrumentation: an `agent_handoff` span (`gen_ai.handoff.to_agent`)
    # in the triage agent's turn, then `invoke_agent weather_agent` beside `invoke_agent triage_agent`;
    # the model's request for transfer_to_weather_agent is only a Python repr in a text part.
    (run,) = runs_of("otel-openai-agents", "handoff_after_tool")
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage_agent", "weather_agent")]
    assert view(run) == (
        "triage_agent",
        "What time is it in Paris, and what is the weather there?",
        "It is 14:05 in Paris, and it is sunny and 21°C.",
        [("get_time", "14:05", "ok"), ("get_weather", "Sunny, 21°C", "ok")],
    )
    assert run.final_agent == "weather_agent"


def test_the_same_model_call_recorded_by_two_instrumentations_counts_once() -> None:
    # anthropic 2.x's own span beside OpenLLMetry's for each of the two calls (20 + 10 tokens each).
    (run,) = runs_of("anthropic-openllmetry", "tool_then_answer")
    assert (run.usage.input_tokens, run.usage.output_tokens) == (40, 20)


def test_a_model_call_whose_outer_span_holds_no_messages_takes_them_from_the_lower_layer() -> None:
    # OpenLIT's Haystack generator component (`chat openai_chat_generator`, no messages) around
    # OpenLIT's OpenAI client span holding the call's messages, in a pipeline's workflow span.
    (run,) = runs_of("openlit-haystack", "in_pipeline")
    assert view(run)[1:] == (PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    assert (run.usage.input_tokens, run.usage.output_tokens) == (40, 20)


def test_a_pipeline_named_nowhere_is_named_after_the_one_component_its_input_went_to() -> None:
    # OpenLIT's `invoke_workflow pipeline` names no workflow; its recorded input is
    # {"weather_agent": {"messages": ...}}, the agent component the user's request went to.
    (run,) = runs_of("openlit-haystack", "in_pipeline")
    assert run.agent_name == "weather_agent"


def test_an_agent_graph_a_tool_runs_is_its_own_run_though_nothing_marks_it_an_agent() -> None:
    # Langfuse marks only the top graph an agent; the inner graph is a chain under the tool span.
    outer, inner = runs_of("langfuse-langchain", "nested")
    assert [(c.name, c.state) for c in outer.tool_calls] == [("ask_weather_expert", "ok")]
    assert view(inner) == ("weather_expert", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])


# ---- the run's text, found wherever the trace keeps it ---------------------------------------


def test_a_framework_state_on_the_run_span_is_reduced_to_the_new_request_and_the_last_answer() -> None:
    # Langfuse's LangChain handler: input {"messages": [...history, new]}, output the final state.
    _, second = runs_of("langfuse-langchain", "multi_turn")
    assert (second.input, second.output) == ("And what time is it there?", "It is 14:05 in Paris.")
    assert second.text_sources == {
        "input": "reduced from the structure on the run span",
        "output": "reduced from the structure on the run span",
    }


def test_a_run_whose_span_holds_only_a_type_descriptor_has_no_answer_and_text_checks_skip_it() -> None:
    # The MLflow agent span alone (its runner span and model calls left out): {"output_type": "str"}.
    spans = [span for span in spans_of("mlflow-openai-agents", "no_tool") if span.name == "weather_agent"]
    (run,) = build_runs(spans)
    assert run.output is None and "output" in run.missing
    score = evaluate(bind(checks.includes("Bonjour")), run)
    assert isinstance(score, Score) and score.value is None
    assert score.skipped == "the run's output could not be found: the run span holds a structure without text"


def test_where_derived_text_came_from_is_on_the_runs_scores_and_in_explain() -> None:
    (run,) = runs_of("openlit-openai-agents", "tool_then_answer")
    attributes = evaluation_attributes(run, Score("includes", value=1.0))
    assert attributes["otel_scorers.run.text_source.output"] == "from the run's model calls"
    lines = [
        line
        for explanation in explain_files([TRACES / "openlit-openai-agents" / "tool_then_answer.json"], [])
        for line in explanation_lines(explanation)
    ]
    assert any("output from the run's model calls" in line for line in lines if "run weather_agent" in line)


# ---- names and tool values -------------------------------------------------------------------


def test_an_agent_is_named_by_gen_ai_agent_name_when_its_reader_looks_elsewhere() -> None:
    # OpenInference's span processor over Pydantic AI's spans: no agent.name, gen_ai.agent.name.
    assert [run.agent_name for run in runs_of("pydantic-ai-openinference", "nested")] == [
        "trip_planner",
        "weather_agent",
    ]


def test_a_tool_result_written_as_a_message_objects_text_is_the_content_the_tool_returned() -> None:
    # OpenLIT writes str(ToolMessage): content='Sunny, 21°C' name='get_weather' tool_call_id='...'.
    (run,) = runs_of("openlit-langchain", "two_tools")
    assert [call.result for call in run.tool_calls] == ["Sunny, 21°C", "14:05"]


def test_a_tool_result_written_as_a_message_objects_dump_is_its_content() -> None:
    # Langfuse writes the ToolMessage as JSON: {"content": ..., "tool_call_id": ..., "type": "tool"}.
    (run,) = runs_of("langfuse-langchain", "tool_then_answer")
    assert [call.result for call in run.tool_calls] == ["Sunny, 21°C"]


def test_a_tool_result_that_is_a_command_carrying_a_tool_message_is_that_messages_content() -> None:
    # Deep Agents' `task` returns LangGraph's Command({"update": {"messages": [ToolMessage]}}),
    # as OpenLLMetry records it: the delegating agent's call returned the sub-agent's answer.
    (written,) = attribute_values(
        "openllmetry-deepagents", "sub_agent", "execute_tool task", "gen_ai.tool.call.result"
    )
    assert set(json.loads(written)["output"]) == {"graph", "update", "resume", "goto"}
    travel, weather = runs_of("openllmetry-deepagents", "sub_agent")
    assert [(call.name, call.arguments, call.result, call.state) for call in travel.tool_calls] == [
        ("task", {"description": PARIS, "subagent_type": "weather_agent"}, ANSWER, "ok")
    ]
    assert (weather.agent_name, weather.input, weather.output) == ("weather_agent", PARIS, ANSWER)


# ---- how an agent ends its loop, and tool spans known by their form --------------------------


def test_a_frameworks_loop_ending_tool_is_left_out_whichever_instrumentation_wrote_it() -> None:
    # smolagents' `final_answer` under OpenLIT (not OpenInference): with content and without.
    for scenario in ("tool_then_answer", "no_content"):
        (run,) = runs_of("openlit-smolagents", scenario)
        assert [call.name for call in run.tool_calls] == ["get_weather"], scenario


def test_a_last_tool_call_whose_argument_is_the_runs_answer_is_how_it_answered_whatever_its_name(
    tmp_path: Path,
) -> None:
    # smolagents' answer tool under a name no list knows: the model asked for it last, no model
    # call followed, and its argument is the run's answer.
    for scenario in ("tool_then_answer", "two_tools", "no_tool"):
        renamed = tmp_path / f"{scenario}.json"
        text = (TRACES / "openlit-smolagents" / f"{scenario}.json").read_text()
        renamed.write_text(text.replace("final_answer", "reply_to_user"))
        (run,) = runs_from_files([renamed], [])
        assert "reply_to_user" not in [call.name for call in run.tool_calls], scenario
        assert run.output is not None and run.output.startswith(("It is", "Bonjour")), scenario


def test_a_tool_span_known_only_by_its_execute_tool_name_is_a_failed_call() -> None:
    # OpenLIT writes only `error.type` on the span of a tool that raised.
    (run,) = runs_of("openlit-smolagents", "failing_tool")
    assert [(call.name, call.state, call.result) for call in run.tool_calls] == [
        ("get_weather", "error", None)
    ]


def test_a_workflow_of_agents_is_one_run_named_by_its_workflow_and_its_members_runs_are_their_own() -> None:
    # OpenLIT's Agno team: `invoke_workflow travel_team` (gen_ai.workflow.name) asks a model and
    # delegates to its member, whose `invoke_agent weather_agent` sits beside the delegation.
    team, member = runs_of("openlit-agno", "team")
    assert (team.agent_name, team.input, team.output) == ("travel_team", PARIS, ANSWER)
    assert [call.name for call in team.tool_calls] == ["delegate_task_to_member"]
    assert view(member) == (
        "weather_agent",
        "Find the current weather in Paris.",
        "Sunny and 21°C in Paris.",
        [("get_weather", "Sunny, 21°C", "ok")],
    )


def test_a_tool_result_recorded_as_an_objects_default_text_is_what_the_model_was_sent() -> None:
    # The delegation returned a generator: its span holds `<generator object ... at 0x...>`; the
    # team's next model call was sent the member's answer for that call id.
    team, _ = runs_of("openlit-agno", "team")
    assert [call.result for call in team.tool_calls] == ["Sunny and 21°C in Paris."]


def test_a_span_around_the_run_and_other_spans_does_not_lend_the_run_its_text() -> None:
    # OpenLIT's LangGraph `invoke_workflow` holds the graph's answer even with content capture off;
    # it also holds the graph's node spans, so it is not the run's wrapper: the answer stays missing.
    (run,) = runs_of("openlit-langchain", "no_content")
    assert run.output is None and "output" in run.missing


def test_a_tool_call_naming_the_next_agent_hands_the_run_on_whichever_reader_claimed_its_span() -> None:
    # Strands' Swarm under OpenInference's span processor: `handoff_to_agent` {"agent_name": ...}
    # read as an OpenInference TOOL span, then the weather agent's run beside the triage agent's.
    (run,) = runs_of("openinference-strands", "swarm_handoff")
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("triage_agent", "weather_agent")]
    assert view(run) == ("triage_agent", PARIS, ANSWER + "\n", [("get_weather", "Sunny, 21°C", "ok")])
    assert run.final_agent == "weather_agent"


def test_the_request_inside_the_context_a_swarm_gives_its_agent_is_the_users() -> None:
    # The triage agent's span holds "Context:\nUser Request: <request>\n\nOther agents ...".
    run = runs_of("openinference-strands", "swarm_handoff")[0]
    assert run.input == PARIS


def test_a_span_langchains_metadata_marks_an_agent_graph_is_a_run_whichever_reader_claimed_it() -> None:
    # MLflow's LangChain autolog marks no span an agent: the graph is a CHAIN span whose metadata
    # names it (`lc_agent_name`); its request and answer are the graph's input and final state.
    (run,) = runs_of("mlflow-langchain", "tool_then_answer")
    assert view(run) == ("weather_agent", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    assert run.text_sources["output"] == "reduced from the structure on the run span"
    assert [run.agent_name for run in runs_of("mlflow-langchain", "nested")] == [
        "travel_agent",
        "weather_expert",
    ]


# ---- an agent's invocation by an operation no convention lists -----------------------------


def test_a_span_naming_an_agent_by_an_unlisted_operation_around_its_steps_is_its_run() -> None:
    # OpenLIT's Pydantic AI spans: `execute_task {agent}` around the agent's graph and model
    # requests (each naming the agent), beside a `create_agent {agent}` trace of its own.
    assert [
        (run.agent_name, run.input, run.output) for run in runs_of("openlit-pydantic-ai", "tool_then_answer")
    ] == [("weather_agent", PARIS, ANSWER)]


def test_an_agent_invoked_inside_another_agents_unlisted_operation_is_its_own_run() -> None:
    # A trip planner whose tool asks a weather agent: its `execute_task` inside the planner's.
    runs = runs_of("openlit-pydantic-ai", "nested")
    assert [(run.agent_name, run.input, run.output) for run in runs] == [
        (
            "trip_planner",
            "Should I pack an umbrella for Paris today?",
            "No umbrella needed: it is sunny and 21°C in Paris.",
        ),
        ("weather_agent", "What is the weather in Paris today?", "Sunny and 21°C in Paris."),
    ]
    assert runs[1].parent_span_id is not None


def test_a_task_written_as_its_fields_on_the_run_span_is_read_as_the_tasks_description() -> None:
    # LoongSuite's CrewAI task span: `gen_ai.input.messages` holds one user message of two text
    # parts, `Task: {description}` and `Expected output: {expected_output}`.
    (written,) = attribute_values(
        "loongsuite-crewai", "no_tool", "invoke_agent Weather Reporter", "gen_ai.input.messages"
    )
    assert [part["content"] for part in json.loads(written)[0]["parts"]] == [
        "Task: Say hello in French.",
        "Expected output: One sentence.",
    ]
    (run,) = runs_of("loongsuite-crewai", "no_tool")
    assert (run.agent_name, run.input, run.output) == (
        "Weather Reporter",
        "Say hello in French.",
        "Bonjour !",
    )


def test_a_span_naming_an_agent_by_an_unlisted_operation_holding_only_agents_runs_is_not_a_run() -> None:
    # LoongSuite's CrewAI spans: the crew's `enter_ai_application_system` (operation `enter`,
    # `gen_ai.agent.name = crew`) around its two tasks' `invoke_agent {role}` spans, no other span.
    runs = runs_of("loongsuite-crewai", "two_agents")
    assert [(run.agent_name, run.output) for run in runs] == [
        ("Weather Reporter", ANSWER),
        ("Travel Writer", "Pack sunglasses: Paris is sunny and 21°C."),
    ]


def test_tool_spans_naming_their_model_not_a_tool_leave_the_calls_missing_not_guessed() -> None:
    # OpenLIT's Pydantic AI `execute_tool {model}`: one per model response, naming no tool.
    (run,) = runs_of("openlit-pydantic-ai", "tool_then_answer")
    assert run.tool_calls == ()
    assert {"tool_calls", "tool_errors"} <= run.missing
    score = evaluate(bind(checks.called_tool("get_weather")), run)
    assert isinstance(score, Score)
    assert score.value is None and score.skipped is not None


def test_a_frameworks_listing_of_an_mcp_servers_tools_is_neither_a_tool_call_nor_a_run() -> None:
    # OpenLIT writes the OpenAI Agents SDK's listing of its MCP server's tools as `execute_tool`
    # spans (`mcp_list_tools`): one in the unnamed agent span around the run, one per turn inside.
    assert [view(run) for run in runs_of("openlit-mcp", "two_tools")] == [
        (
            "weather_agent",
            "What is the weather in Paris, and what time is it there?",
            "It is sunny and 21°C in Paris, and the local time is 14:05.",
            [
                ("get_weather", {"type": "text", "text": "Sunny, 21°C"}, "ok"),
                ("get_time", {"type": "text", "text": "14:05"}, "ok"),
            ],
        )
    ]


def test_explain_says_a_tools_listing_span_is_not_a_tool_call() -> None:
    lines = [
        line
        for explanation in explain_files([TRACES / "openlit-mcp" / "tool_then_answer.json"], [])
        for line in explanation_lines(explanation)
    ]
    listings = [line for line in lines if "'execute_tool weather'" in line]
    assert len(listings) == 2
    assert all(
        line.endswith("no role (a framework listing a server's tools, not a tool call)") for line in listings
    )


def test_a_graph_node_recorded_inside_and_beside_the_graphs_run_is_a_step_of_it() -> None:
    # OpenLIT's LangChain instrumentation records the StateGraph's one `agent` node inside the
    # graph's `invoke_agent weather_agent`, its LangGraph instrumentation again beside it.
    assert [view(run) for run in runs_of("openlit-langgraph", "no_tool")] == [
        (
            "weather_agent",
            "Hello! What can you do?",
            "I can tell you the weather and the local time in any city.",
            [],
        )
    ]


def test_a_typescript_handoff_span_with_a_tool_name_is_a_handoff_not_a_tool_call() -> None:
    # OpenInference's OpenAI Agents JS instrumentation names the handoff span's tool
    # `handoff_to_{agent}` and records `{"to_agent": name}`: the run goes on in the agent handed to.
    assert [view(run) for run in runs_of("openinference-openai-agentsjs", "handoff")] == [
        ("triage_agent", PARIS, ANSWER, [("get_weather", "Sunny, 21°C", "ok")])
    ]
