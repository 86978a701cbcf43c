"""Runs rebuilt from traces of real agent frameworks must match what their generators know.

Each `tests/fixtures/traces/<framework>/<scenario>.json` was captured from the framework's real
instrumentation; its `.truth.json` was written by the generator from the script it ran. The
runs are read the way `otel-scorers runs` reads them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from otel_scorers import bind, checks
from otel_scorers.model import AgentRun, Score
from otel_scorers.pipeline.scorer_call import evaluate
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"
CASES = sorted(TRACES.glob("*/*.truth.json"))

#: The aspects of a fixture case its tests check, each failing or passing on its own: the runs
#: rebuilt match the truth (read from files, in process, marked late); the quick checks of its
#: scenario score as the truth says; without content, a text check skips (`TEXT_CHECKS`) and a
#: failure the trace cannot show is unknown (`FAILURE_CHECKS`); the tool results and documents the
#: generator scripted are in the runs' context (tests/runs/test_run_context.py).
RUNS = "runs"
QUICK_CHECKS = "quick_checks"
TEXT_CHECKS = "text_checks"
FAILURE_CHECKS = "failure_checks"
TOOL_RESULTS = "tool_results"
DOCUMENTS = "documents"


@dataclass(frozen=True)
class Pending:
    """Why a case is not read right yet, and the aspects of it that fail for that reason."""

    reason: str
    aspects: frozenset[str]


_NO_RUN_SPAN = (
    "the instrumentation writes no span of an agent run: without content, "
    "nothing joins its model calls, each a trace of its own, into the run they make"
)
_NOT_AN_AGENTS_CALL = (
    "a single model call that offers no tools, in a trace of its own with nothing around it, "
    "is not known to be an agent's"
)
_BEEAIJS = (
    "the trace names no agent (its run span is `beeai-framework-main`) and "
    "its events name each tool camel-cased (`getWeather` for `get_weather`)"
)
_SMOLAGENTS_011 = (
    "OpenInference's smolagents instrumentation 0.1.11 writes no "
    "agent's name: its run span is named by the agent's class (`ToolCallingAgent.run`), which the run "
    "is named after"
)

_HONEYHIVE_LONE_CHAIN = (
    "a trace (`no_tool`, the second turn or run) holds one `chain` span and nothing it called: "
    "nothing in it says the span is an agent's run rather than any other function traced as a "
    "`chain`, and what other traces showed of the key is not read into it"
)

_TRACEAI_LANGCHAIN = (
    "traceAI writes a tool named like an agent (`ask_weather_agent`) as an AGENT span, and the "
    "graph that tool runs carries the outer agent's `lc_agent_name` from LangChain's metadata: "
    "the tool is read as a run of the outer agent, the inner graph named after it"
)


_AGENTOPS_SMOLAGENTS = (
    "AgentOps' smolagents instrumentation records no run's request (neither on the agent's span "
    "nor in the messages its model spans hold) and names every tool `unknown` with no arguments: "
    "the runs list both as missing"
)


def corpora_running(package: str) -> frozenset[str]:
    """The corpora whose generator ran `package` (the `versions` of their truth): what a trace is,
    whatever its corpus is called."""
    return frozenset(
        directory.name
        for directory in TRACES.iterdir()
        if (truth := next(directory.glob("*.truth.json"), None)) is not None
        and package in json.loads(truth.read_text()).get("versions", {})
    )


#: Spring AI's `ChatClient` under its own observations, whichever release.
SPRING_AI = corpora_running("spring-ai")

#: Frameworks (or single `framework/scenario` cases, which win) not read right yet: the aspects
#: named are expected to fail, and to pass would fail them (strict).
PENDING: dict[str, Pending] = {
    "traceai-langchain/agent_in_tool": Pending(_TRACEAI_LANGCHAIN, frozenset({RUNS, TOOL_RESULTS})),
    "mlflow-smolagents/code_agent": Pending(
        "a CodeAgent's tools run outside the run's trace under MLflow's smolagents autolog",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    "mlflow-smolagents/nested": Pending(
        "MLflow records no call of a managed agent, and names tool spans by class",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    **{
        f"trulens-langgraph/{scenario}": Pending(
            "TruLens writes a graph a tool runs as an `unknown` span with no record keys (its "
            "agent named, if at all, only in the messages it returned): the inner run is not told "
            "from the tool's work",
            frozenset({RUNS, TOOL_RESULTS}),
        )
        for scenario in ("nested", "agent_in_tool")
    },
    "mlflow-llamaindex/handoff": Pending(
        "an AgentWorkflow's span is a CHAIN span, read as the unit of work around its loop: its handoffs are not read",
        frozenset({RUNS}),
    ),
    **{
        f"{framework}/no_content": Pending(_NO_RUN_SPAN, frozenset({RUNS, QUICK_CHECKS, TEXT_CHECKS}))
        for framework in ("openlit-ag2", "openlit-llamaindex", "openllmetry-haystack")
    },
    **{
        f"{framework}/failing_tool": Pending(
            "the framework sends a tool's failure to the model as plain text "
            "(`Error: ...`, the exception's message) and no tool span records it: the failure is read as the result",
            frozenset({RUNS, QUICK_CHECKS}),
        )
        for framework in ("openlit-llamaindex", *sorted(SPRING_AI))
    },
    **{
        f"openlit-llamaindex/{scenario}": Pending(_NOT_AN_AGENTS_CALL, frozenset({RUNS, QUICK_CHECKS}))
        for scenario in ("no_tool",)
    },
    "openlit-llamaindex/react_agent": Pending(
        "a ReAct agent's tool calls are in the model's text, not in tool-call parts: nothing joins its calls",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    "openlit-haystack/no_content": Pending(_NO_RUN_SPAN, frozenset({RUNS, QUICK_CHECKS, TEXT_CHECKS})),
    "openlit-haystack/no_tool": Pending(_NOT_AN_AGENTS_CALL, frozenset({RUNS, QUICK_CHECKS})),
    "openllmetry-langchainjs": Pending(
        "the instrumentation loses each LangChain.js callback's parent: the graph, "
        "its nodes, model and tool calls are each a trace of its own, and nothing joins them",
        frozenset({RUNS, QUICK_CHECKS, TOOL_RESULTS}),
    ),
    "monocle-openai-agents/agent_as_tool": Pending(
        "Monocle writes no turn span around an agent run as a tool: its turns under the tool's "
        "span are not joined into one run",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    "openinference-beeaijs": Pending(_BEEAIJS, frozenset({RUNS, QUICK_CHECKS, TOOL_RESULTS})),
    "wayflow/failing_tool": Pending(
        "WayFlow sends a tool's failure back as its result and its spans mark nothing: the "
        "failure is read as the result",
        frozenset({RUNS, QUICK_CHECKS}),
    ),
    # Without a tool, no tool's name is wrong: the quick checks agree.
    "openinference-beeaijs/no_tool": Pending(_BEEAIJS, frozenset({RUNS})),
    **{
        f"griptape/{path.name.removesuffix('.truth.json')}": Pending(
            "Griptape names a tool span by the tool's "
            "class (`WeatherTool.try_run()`): which of its activities the model called "
            "(`WeatherTool_get_weather`) is not in the trace, and the call is named by the class",
            frozenset({RUNS, QUICK_CHECKS}),
        )
        for path in (TRACES / "griptape").glob("*.truth.json")
        if path.name != "no_tool.truth.json"
    },
    "openinference011-smolagents": Pending(_SMOLAGENTS_011, frozenset({RUNS})),
    # The managed agent's run is named by its class too: its tool results are read as another's.
    "openinference011-smolagents/nested": Pending(_SMOLAGENTS_011, frozenset({RUNS, TOOL_RESULTS})),
    "llamaindex-otel": Pending(
        "LlamaIndex's own OpenTelemetry integration writes its dispatcher's spans with no "
        "GenAI or OpenInference keys, its events as span events: no reader finds a run in them",
        frozenset({RUNS, QUICK_CHECKS, TOOL_RESULTS, DOCUMENTS}),
    ),
    **{
        f"{framework}/failing_tool": Pending(
            "LoongSuite records a tool that raised as one that returned: its `execute_tool` span left "
            "unset, its result the exception's message (AgentScope's `ToolResponse` without its `error` "
            "state, AutoGen's `FunctionExecutionResult` without `is_error`), and the model is sent the "
            "same: nothing in the trace says the call failed",
            frozenset({RUNS, QUICK_CHECKS}),
        )
        for framework in ("loongsuite-agentscope", "loongsuite-autogen")
    },
    "openllmetry-openaijs/failing_tool": Pending(
        "OpenLLMetry JS's `withTool` does not end its span when the tool throws: no tool span "
        "reaches the exporter, and the application's loop sends the model the failure as plain "
        "text (`error: ...`), read as the call's result: nothing in the trace says the call failed",
        frozenset({RUNS, QUICK_CHECKS}),
    ),
    "honeyhive-openai/failing_tool": Pending(
        "HoneyHive records a tool that raised twice: its span, failed, and after it a sibling tool "
        "span of its own (`get_weather_error`, holding the error and no arguments), read as a second call",
        frozenset({RUNS}),
    ),
    "honeyhive-openai/no_tool": Pending(
        _HONEYHIVE_LONE_CHAIN,
        frozenset({RUNS, QUICK_CHECKS}),
    ),
    "honeyhive-openai/multi_turn": Pending(_HONEYHIVE_LONE_CHAIN, frozenset({RUNS, TOOL_RESULTS})),
    "honeyhive-openai/two_runs": Pending(_HONEYHIVE_LONE_CHAIN, frozenset({RUNS, TOOL_RESULTS})),
    "agentops-agno/team": Pending(
        "AgentOps' Agno team span holds no answer, its delegation's result is the default text of "
        "the generator the tool returned, and the member's span is beside that call, given no request: "
        "no model span records what either was sent or answered",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    **{
        f"agentops-smolagents/{scenario}": Pending(_AGENTOPS_SMOLAGENTS, frozenset({RUNS}))
        for scenario in (
            "failing_tool",
            "multi_turn",
            "nested",
            "no_tool",
            "tool_then_answer",
            "two_runs",
            "two_tools",
        )
    },
    "agentops-smolagents/code_agent": Pending(
        _AGENTOPS_SMOLAGENTS + "; a CodeAgent's tool calls have no span, and its model spans record none",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
    "loongsuite-crewai/agent_kickoff": Pending(
        "LoongSuite records `Agent.kickoff` as a flow's entry span "
        "(`enter_ai_application_system`, named `flow.kickoff`) holding neither the agent, its request nor its answer",
        frozenset({RUNS, TOOL_RESULTS}),
    ),
}

#: Frameworks whose traces record their tool calls only in the model's messages (no tool spans):
#: without the content, the trace does not carry the calls (docs/instrumentations.md).
CALLS_NEED_CONTENT = frozenset(
    {"crewai-openllmetry", "haystack-openinference", "openlit-crewai", "otel-smolagents"}
)
#: Frameworks whose traces hold no tool call at all, whatever the content setting: no tool spans
#: and no model spans (OpenLLMetry's CrewAI instrumentation without its OpenAI one, LoongSuite's
#: CrewAI instrumentation, whose tool wrapper CrewAI's native tool calls pass by), or tool spans
#: that name no tool and model spans without messages (OpenLIT's Pydantic AI instrumentation).
CALLS_NOT_TRACED = frozenset({"crewai-openllmetry-alone", "loongsuite-crewai", "openlit-pydantic-ai"})
#: Frameworks whose run span holds the request and the answer whatever the content setting
#: (OpenLLMetry's CrewAI task span): without content, the run still has them.
TEXT_ALWAYS_WRITTEN = frozenset({"crewai-openllmetry", "crewai-openllmetry-alone"})
#: Frameworks whose model spans keep their content whatever the content setting (OpenInference's
#: Google ADK instrumentation hides what its agent and tool spans hold, not its model calls'):
#: without content, the run still has the request, the answer and the arguments the model asked
#: for, not the tools' results.
MODEL_CONTENT_ALWAYS_WRITTEN = frozenset({"openinference-google-adk"})

#: Frameworks whose traces record a tool's failure only with the content: without it, whether
#: a call failed is unknown.
FAILURES_NEED_CONTENT = (
    frozenset(
        {
            "agno-openllmetry",
            "crewai-openllmetry-alone",
            "llamaindex-openllmetry",
            "llamaindex-openllmetry-alone",
        }
    )
    | CALLS_NEED_CONTENT
    | CALLS_NOT_TRACED
)
#: Frameworks whose instrumentation never writes the run's answer (docs/instrumentations.md), with
#: the scenarios that do hold it: OpenLLMetry's OpenAI Agents spans record a chat-completions
#: model's input but not its output; the Responses API model's they record.
ANSWER_UNRECORDED: dict[str, frozenset[str]] = {
    "openai-agents-openllmetry": frozenset({"responses_api"}),
    "openllmetry052-openai-agents": frozenset({"responses_api"}),
    "openllmetry-mcp": frozenset(),
    # LiteLLM's callback writing each call onto the agent span, with no raw request spans (GenAI
    # semantic conventions opted in): the last call, the answer, is written after the span ended.
    "litellm-otel-semconv": frozenset(),
}
UNRECORDED_SCENARIOS = sorted(
    (framework, path.name.removesuffix(".truth.json"))
    for framework, recorded in ANSWER_UNRECORDED.items()
    for path in (TRACES / framework).glob("*.truth.json")
    if path.name.removesuffix(".truth.json") not in recorded | {"no_content"}
)

#: The MLflow smolagents scenarios whose runs called a tool: their tool spans name no tool.
MLFLOW_SMOLAGENTS_TOOLS_UNNAMED = (
    "dict_result",
    "failing_tool",
    "multi_turn",
    "tool_then_answer",
    "two_runs",
    "two_tools",
)

#: (framework, scenario) -> why a difference from the truth is accepted, and which fields it spares.
TOLERATED: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    ("semantic-kernel", "agent_as_plugin"): (
        "Semantic Kernel records an agent's input only when its messages are passed positionally; "
        "an agent called as a plugin is passed them by keyword, so the inner run has no input",
        frozenset({"input"}),
    ),
    **{
        (framework, "no_content"): (
            "the instrumentation writes no tool spans: with content capture off the model spans "
            "hold no tool-call parts either, so the trace does not carry the call",
            frozenset({"tool_calls"}),
        )
        for framework in CALLS_NEED_CONTENT
    },
    **{
        (framework, "no_content"): (
            "LlamaIndex names the agent only in its workflow events, which content capture hides: "
            "the run's agent is missing, not guessed",
            frozenset({"agent_name"}),
        )
        for framework in (
            "llamaindex-openinference",
            "llamaindex-openllmetry",
            "llamaindex-openllmetry-alone",
        )
    },
    **{
        (framework, path.name.removesuffix(".truth.json")): (
            "Spring AI's observations hold neither the request nor the answer (its content options "
            "log them and write only a tool call's arguments and result on the span): the run lists "
            "them as missing",
            frozenset({"text"}),
        )
        for framework in sorted(SPRING_AI)
        for path in (TRACES / framework).glob("*.truth.json")
    },
    ("otel-genai-openai-agents", "handoff_without_model_spans"): (
        "without the OpenAI client's instrumentation the trace holds no model call, and the agents' "
        "spans hold no message: the run lists its request and answer as missing",
        frozenset({"text"}),
    ),
    **{
        ("griptape", path.name.removesuffix(".truth.json")): (
            "Griptape's spans hold neither the request, the answer, nor a tool's arguments or "
            "result: the run lists them as missing",
            frozenset({"text", "tool_content"}),
        )
        for path in (TRACES / "griptape").glob("*.truth.json")
    },
    ("openlit-openai-agents", "responses_api"): (
        "OpenLIT's Responses API wrapper fails on this SDK's request ('Reasoning' object has no "
        "attribute 'get': the chat spans are ERROR, with no messages): the trace holds neither the "
        "request nor the answer, which the run lists as missing",
        frozenset({"text"}),
    ),
    **{
        ("openlit-langchain", scenario): (
            "OpenLIT does not trace an agent graph that a tool runs as an agent: its model and tool "
            "spans sit directly under the tool span, the tool's work; the trace holds the outer run only",
            frozenset({"inner_run"}),
        )
        for scenario in ("nested", "agent_in_tool")
    },
    **{
        ("openlit-google-adk", path.name.removesuffix(".truth.json")): (
            "OpenLIT's ADK spans record the agent's answer, not the request nor the tools' arguments "
            "and results, which ADK's own spans hold only with their content capture switched on: "
            "the run lists them as missing",
            frozenset({"input", "tool_content"}),
        )
        for path in (TRACES / "openlit-google-adk").glob("*.truth.json")
        if path.name != "no_content.truth.json"
    },
    **{
        (framework, path.name.removesuffix(".truth.json")): (
            "the instrumentation writes no span of an agent run and the agent's name is in none of "
            "the model calls its run is joined from: the run's agent is missing, not guessed",
            frozenset({"agent_name"}),
        )
        for framework in ("openlit-haystack", "openlit-llamaindex", "openllmetry-haystack")
        for path in (TRACES / framework).glob("*.truth.json")
        # OpenLIT names a Haystack pipeline's run: only its agents' runs are joined from model calls.
        if (framework, path.name) != ("openlit-haystack", "in_pipeline.truth.json")
    },
    **{
        ("mlflow-smolagents", scenario): (
            "MLflow's smolagents autolog names each tool span after the method it wrapped "
            "(`SimpleTool.__call__`, `TimeTool.__call__`) and records no model call: no span "
            "says which tool ran, so the run lists its tool calls as missing",
            frozenset({"tool_calls"}),
        )
        for scenario in MLFLOW_SMOLAGENTS_TOOLS_UNNAMED
    },
    ("otel-smolagents", "code_agent"): (
        "a CodeAgent calls its tools from the code the model wrote, and OpenTelemetry's smolagents "
        "instrumentation writes no tool spans: the call is only Python in the model's text, which is "
        "not read as a call",
        frozenset({"tool_calls"}),
    ),
    ("otel-langchain", "agent_in_tool"): (
        "OpenTelemetry's LangChain instrumentation writes no name for an agent built without one "
        "(`invoke_agent` with no `gen_ai.agent.name`): the graph's default name is not in the trace, "
        "and the run's agent is missing, not guessed",
        frozenset({"agent_name"}),
    ),
    ("pydantic-ai-openinference", "no_content"): (
        "with content hidden, OpenInference's span processor leaves the model's tool-call parts "
        "without arguments, which its reader takes as {}",
        frozenset({"tool_calls"}),
    ),
    ("llamaindex-openllmetry-alone", "agent_in_tool"): (
        "the calling agent's call_tool step ends before OpenLLMetry writes its output (the "
        "ToolCallResult: 'Setting attribute on ended span'), and no model span repeats it: that "
        "call's arguments and result are not in the trace as read (see the test below)",
        frozenset({"tool_calls"}),
    ),
    **{
        (framework, path.name.removesuffix(".truth.json")): (
            "the instrumentation writes no tool spans and no model spans: the trace does not carry the calls",
            frozenset({"tool_calls"}),
        )
        for framework in CALLS_NOT_TRACED
        for path in (TRACES / framework).glob("*.truth.json")
    },
    ("openlit-pydantic-ai", "multi_turn"): (
        "OpenLIT's Pydantic AI run span records the request of a run given no message history only, "
        "and its tool spans name no tool: the second turn's request and every call are missing",
        frozenset({"input", "tool_calls"}),
    ),
    **{
        case: (
            "the instrumentation does not record the model's answer: the run's output is unrecorded, "
            "not guessed",
            frozenset({"output"}),
        )
        for case in UNRECORDED_SCENARIOS
    },
}


def case_id(truth_path: Path) -> str:
    return f"{truth_path.parent.name}/{truth_path.name.removesuffix('.truth.json')}"


def pending_marks(truth_path: Path, aspect: str) -> list[Any]:
    """An expected failure of the case's `aspect` when `PENDING` names the case (by itself, else
    by its framework) and the aspect among those that fail."""
    pending = PENDING.get(case_id(truth_path)) or PENDING.get(truth_path.parent.name)
    if pending is None or aspect not in pending.aspects:
        return []
    return [pytest.mark.xfail(reason=pending.reason, strict=True)]


def rebuilt_runs(truth_path: Path) -> list[AgentRun]:
    problems: list[InputProblem] = []
    trace_path = truth_path.with_name(truth_path.name.replace(".truth.json", ".json"))
    runs = sorted(runs_from_files([trace_path], problems), key=lambda run: run.start_ns)
    assert not problems, problems
    return runs


def tool_view(call: Any) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": call.arguments,
        "result": call.result,
        "error": call.state == "error",
    }


def expected_tool_view(
    call: dict[str, Any], content_captured: bool, arguments_captured: bool = False
) -> dict[str, Any]:
    view = {"name": call["name"], "error": call["error"]}
    view["arguments"] = call["arguments"] if content_captured or arguments_captured else None
    view["result"] = call["result"] if content_captured else None
    return view


def _strip(text: str | None) -> str | None:
    return text.rstrip() if isinstance(text, str) else text


def params(aspect: str) -> list[Any]:
    """Every case, marked when its `aspect` is pending."""
    return [pytest.param(path, id=case_id(path), marks=pending_marks(path, aspect)) for path in CASES]


def assert_runs_match(truth: dict[str, Any], framework: str, runs: list[AgentRun]) -> None:
    """The runs, in run-start order, are exactly what the generator knows happened."""
    scenario = truth["scenario"]
    _, spared = TOLERATED.get((framework, scenario), ("", frozenset()))
    if "inner_run" in spared:  # the trace holds the outer run only
        truth = {**truth, "runs": truth["runs"][:1]}
    if "agent_name" in spared:
        assert len(runs) == len(truth["runs"])
        # A run whose agent the trace does not name lists it as missing; the others are named.
        for run, expected in zip(runs, truth["runs"], strict=True):
            assert run.agent_name == expected["agent_name"] or (
                run.agent_name is None and "agent_name" in run.missing
            ), run.agent_name
    else:
        assert [run.agent_name for run in runs] == [expected["agent_name"] for expected in truth["runs"]]
    for run, expected in zip(runs, truth["runs"], strict=True):
        assert_run_matches(run, expected, framework, scenario)


def assert_run_matches(run: AgentRun, expected: dict[str, Any], framework: str, scenario: str) -> None:
    """One run is what the generator knows happened in it (bench/fidelity.py counts these)."""
    _, spared = TOLERATED.get((framework, scenario), ("", frozenset()))
    content_captured = scenario != "no_content"
    model_content = framework in MODEL_CONTENT_ALWAYS_WRITTEN
    text_captured = (
        content_captured or model_content or framework in TEXT_ALWAYS_WRITTEN
    ) and "text" not in spared
    where = f"{framework}/{scenario} run {expected['agent_name']}"
    if "agent_name" in spared and run.agent_name != expected["agent_name"]:
        assert run.agent_name is None and "agent_name" in run.missing, where
    else:
        assert run.agent_name == expected["agent_name"], where
    if text_captured:
        if "input" not in spared:
            assert run.input == expected["input"], where
        if "output" not in spared:
            assert _strip(run.output) == _strip(expected["output"]), where
        else:
            assert run.output is None and "output" in run.missing & run.unrecorded, where
    else:
        assert {"input", "output"} <= run.missing, where
        assert run.input is None and run.output is None, where
    if "tool_calls" not in spared:
        assert [tool_view(call) for call in run.tool_calls] == [
            expected_tool_view(call, content_captured and "tool_content" not in spared, model_content)
            for call in expected["tool_calls"]
        ], where
    # Agents that handed the conversation on: recorded on the run, not as tool calls. Where the
    # trace does not name the run's agent, the first handoff is from that agent, missing too.
    expected_handoffs = [dict(handoff) for handoff in expected.get("handoffs", [])]
    if "agent_name" in spared and expected_handoffs:
        expected_handoffs[0]["from"] = None
    assert [{"from": h.from_agent, "to": h.to_agent} for h in run.handoffs] == expected_handoffs, where
    assert run.final_agent == expected.get("final_agent"), where
    if "conversation_id" in expected:
        assert run.conversation_id == expected["conversation_id"], where


@pytest.mark.parametrize("truth_path", params(RUNS))
def test_runs_match_the_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    assert_runs_match(truth, truth_path.parent.name, rebuilt_runs(truth_path))


SCENARIO_CHECKS: dict[str, list[tuple[Any, float]]] = {
    "tool_then_answer": [(checks.called_tool("get_weather"), 1.0), (checks.no_tool_errors(), 1.0)],
    "failing_tool": [(checks.called_tool("get_weather"), 1.0), (checks.no_tool_errors(), 0.0)],
    "no_tool": [(checks.used_no_tools(), 1.0), (checks.no_tool_errors(), 1.0)],
    "two_tools": [(checks.tool_order(["get_weather", "get_time"]), 1.0), (checks.max_tool_calls(2), 1.0)],
    "no_content": [(checks.called_tool("get_weather"), 1.0)],
}


@pytest.mark.parametrize(
    "truth_path",
    [
        param
        for param in params(QUICK_CHECKS)
        if param.values[0].name.removesuffix(".truth.json") in SCENARIO_CHECKS
    ],
)
def test_quick_checks_agree_across_conventions(truth_path: Path) -> None:
    scenario = truth_path.name.removesuffix(".truth.json")
    run = rebuilt_runs(truth_path)[0]
    called = [call["name"] for call in json.loads(truth_path.read_text())["runs"][0]["tool_calls"]]
    for check, expected in SCENARIO_CHECKS[scenario]:
        if check.name == "called_tool" and called and check.args["tool"] not in called:
            # A generator that named its failing tool otherwise (Genkit's `broken_weather`).
            check = checks.called_tool(called[0])
        score = evaluate(bind(check), run)
        assert isinstance(score, Score)
        if "tool_calls" in run.missing:  # a trace that could not carry them: skipped, never a guess
            assert score.value is None and score.skipped is not None, (check.name, check.args)
        else:
            assert score.value == expected, (check.name, check.args)


@pytest.mark.parametrize(
    "truth_path", [param for param in params(TEXT_CHECKS) if param.values[0].name == "no_content.truth.json"]
)
def test_runs_without_content_skip_text_checks_instead_of_scoring_zero(truth_path: Path) -> None:
    runs = rebuilt_runs(truth_path)
    assert runs, "no run rebuilt"
    for run in runs:
        score = evaluate(bind(checks.includes("sunny")), run)
        assert isinstance(score, Score)
        if (
            truth_path.parent.name in TEXT_ALWAYS_WRITTEN | MODEL_CONTENT_ALWAYS_WRITTEN
        ):  # in the trace: scored
            assert score.value == 1.0
        else:
            assert score.value is None and score.skipped is not None


@pytest.mark.parametrize(
    "truth_path",
    [param for param in params(FAILURE_CHECKS) if param.values[0].name == "no_content.truth.json"],
)
def test_without_content_a_failure_the_trace_cannot_show_is_unknown_not_a_pass(truth_path: Path) -> None:
    framework = truth_path.parent.name
    for run in rebuilt_runs(truth_path):
        score = evaluate(bind(checks.no_tool_errors()), run)
        assert isinstance(score, Score)
        if framework in FAILURES_NEED_CONTENT:
            assert "tool_errors" in run.missing
            assert score.value is None and score.skipped is not None
        else:
            assert "tool_errors" not in run.missing
            assert score.value == 1.0


@pytest.mark.parametrize("case", UNRECORDED_SCENARIOS, ids=lambda case: "/".join(case))
def test_an_answer_the_instrumentation_never_records_skips_output_checks_saying_so(
    case: tuple[str, str],
) -> None:
    framework, scenario = case
    for run in rebuilt_runs(TRACES / framework / f"{scenario}.truth.json"):
        score = evaluate(bind(checks.includes("sunny")), run)
        assert isinstance(score, Score)
        assert score.value is None and score.skipped is not None
        assert "does not record" in score.skipped and "output" in score.skipped


def test_a_llamaindex_call_whose_step_lost_its_output_is_still_a_finished_call_without_content() -> None:
    outer, inner = rebuilt_runs(TRACES / "llamaindex-openllmetry-alone" / "agent_in_tool.truth.json")
    assert [(call.name, call.arguments, call.result, call.state) for call in outer.tool_calls] == [
        ("ask_weather_agent", None, None, "ok")
    ]
    assert {"tool_arguments", "tool_results"} <= outer.missing
    assert [(call.name, call.result) for call in inner.tool_calls] == [("get_weather", "Sunny, 21°C")]
