"""The weather scenarios as scripts of agent runs (`tests/conventions/genai_semconv_matrix.py`
writes them as spans), and the truth each script gives: its runs in the fixtures' truth-file
format (`tests/fixtures/generate/common/otlp_fixture.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    """A tool call the model asks for: what the tool returned, or the error it raised; a tool
    that runs another agent (`agent`) returns that agent's answer."""

    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None
    agent: Run | None = None

    @property
    def returned(self) -> Any:
        return self.agent.answer if self.agent is not None else self.result


@dataclass(frozen=True)
class Run:
    """One agent run: the question, the tool calls each model response asks for, the answer;
    earlier turns of its conversation (question, answer) come before the question."""

    agent: str
    question: str
    steps: tuple[tuple[Call, ...], ...]
    answer: str
    history: tuple[tuple[str, str], ...] = ()
    conversation_id: str | None = None
    #: Agents the run's own code invokes directly (no tool call) before it asks its model.
    delegates: tuple[Run, ...] = ()
    #: A remote agent: the caller's CLIENT `invoke_agent` span around the agent's own.
    remote: bool = False


@dataclass(frozen=True)
class Scenario:
    """Runs, each a trace of its own unless `one_trace` (under an application's span, or the
    `workflow` named); with `capture` off no span holds content."""

    name: str
    traces: tuple[Run, ...]
    one_trace: bool = False
    workflow: str | None = None
    capture: bool = True


WEATHER = Call("get_weather", {"city": "Paris"}, result="Sunny, 21°C")
TIME = Call("get_time", {"city": "Paris"}, result="14:05")
BROKEN_WEATHER = Call("get_weather", {"city": "Paris"}, error="weather service unavailable")
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny and 21°C in Paris."
TIME_QUESTION = "And what time is it there?"
TIME_ANSWER = "It is 14:05 in Paris."
REPORT = {"city": "Paris", "temp_c": 21, "sunny": True, "wind": None}
LONDON_WEATHER = Call("get_weather", {"city": "London"}, result="Rainy, 12°C")
WRITER = Run("writer", "Sunny and 21°C in Paris.", (), "Paris today: sunny, 21°C. Enjoy!")
EXPERT = Run(
    "weather_agent", "What is the weather in Paris today?", ((WEATHER,),), "Sunny and 21°C in Paris."
)
SCENARIOS = (
    Scenario("tool_then_answer", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER),)),
    Scenario(
        "two_tools",
        (
            Run(
                "weather_agent",
                "What is the weather in Paris, and what time is it there?",
                ((WEATHER, TIME),),
                "It is sunny and 21°C in Paris, and the local time is 14:05.",
            ),
        ),
    ),
    Scenario(
        "failing_tool",
        (
            Run(
                "weather_agent",
                QUESTION,
                ((BROKEN_WEATHER,),),
                "Sorry, I could not get the weather for Paris: the weather service is unavailable.",
            ),
        ),
    ),
    Scenario("no_tool", (Run("weather_agent", "Say hello in French.", (), "Bonjour !"),)),
    Scenario(
        "multi_turn",
        (
            Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, conversation_id="conv-7"),
            Run(
                "weather_agent",
                TIME_QUESTION,
                ((TIME,),),
                TIME_ANSWER,
                history=((QUESTION, ANSWER),),
                conversation_id="conv-7",
            ),
        ),
    ),
    Scenario(
        "nested",
        (
            Run(
                "trip_planner",
                "Should I pack an umbrella for Paris today?",
                ((Call("ask_weather_expert", {"question": EXPERT.question}, agent=EXPERT),),),
                "No umbrella needed: it is sunny and 21°C in Paris.",
            ),
        ),
    ),
    Scenario(
        "dict_result",
        (
            Run(
                "weather_agent",
                "Give me the weather report for Paris.",
                ((Call("get_weather_report", {"city": "Paris"}, result=REPORT),),),
                "Paris: 21°C, sunny, no wind.",
            ),
        ),
    ),
    Scenario(
        "same_tool_twice",
        (
            Run(
                "weather_agent",
                "What is the weather in Paris and in London?",
                ((WEATHER, LONDON_WEATHER),),
                "Paris is sunny at 21°C; London is rainy at 12°C.",
            ),
        ),
    ),
    Scenario("no_content", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER),), capture=False),
    Scenario(
        "two_runs_one_trace",
        (
            Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, conversation_id="conv-9"),
            Run(
                "weather_agent",
                TIME_QUESTION,
                ((TIME,),),
                TIME_ANSWER,
                history=((QUESTION, ANSWER),),
                conversation_id="conv-9",
            ),
        ),
        one_trace=True,
    ),
    Scenario("workflow", (EXPERT, WRITER), workflow="forecast_pipeline"),
    Scenario("remote_agent", (Run("weather_agent", QUESTION, ((WEATHER,),), ANSWER, remote=True),)),
    Scenario(
        "retried_tool",
        (
            Run(
                "weather_agent",
                QUESTION,
                ((BROKEN_WEATHER,), (WEATHER,)),
                "It is sunny and 21°C in Paris (the weather service answered on a second try).",
            ),
        ),
    ),
    Scenario(
        "structured",
        (
            Run(
                "forecaster",
                json.dumps({"city": "Paris", "days": 1}),
                ((WEATHER,),),
                json.dumps({"city": "Paris", "forecast": "sunny", "temp_c": 21}),
            ),
        ),
    ),
    Scenario(
        "delegated",
        (
            Run(
                "trip_planner",
                "Should I pack an umbrella for Paris today?",
                (),
                "No umbrella needed: it is sunny and 21°C in Paris.",
                delegates=(EXPERT,),
            ),
        ),
    ),
)


def truth_runs(run: Run) -> list[dict[str, Any]]:
    """The run and the runs it asked, in the order they started, as truth entries."""
    calls = [call for step in run.steps for call in step]
    entry: dict[str, Any] = {
        "agent_name": run.agent,
        "input": run.question,
        "output": run.answer,
        "tool_calls": [
            {
                "name": call.name,
                "arguments": call.arguments,
                "result": None if call.error else call.returned,
                "error": call.error is not None,
            }
            for call in calls
        ],
    }
    if run.conversation_id is not None:
        entry["conversation_id"] = run.conversation_id
    inner = [truth for delegate in run.delegates for truth in truth_runs(delegate)]
    inner += [truth for call in calls if call.agent is not None for truth in truth_runs(call.agent)]
    return [entry, *inner]
