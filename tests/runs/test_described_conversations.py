"""A description may say which of its run spans are a conversation between agents
(`run.conversation`): the agent spans nested in one are its turns, not runs. MLflow's AG2 autolog
records a chat (`initiate_chat`) around an AGENT span per message an agent receives, the weather
agent's and the user proxy's running its tools alike: one chat is one run."""

from __future__ import annotations

from tests.runs.fixture_runs import runs_of


def test_an_ag2_chat_recorded_by_mlflow_is_one_run_of_the_agent_it_was_started_with() -> None:
    (run,) = runs_of("mlflow-ag2", "tool_then_answer")
    assert (run.agent_name, run.input, run.output) == (
        "weather_agent",
        "What is the weather in Paris?",
        "It is sunny and 21°C in Paris.",
    )
    assert [(call.name, call.arguments, call.result) for call in run.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "Sunny, 21°C")
    ]


def test_each_ag2_chat_recorded_by_mlflow_is_a_run_and_its_turns_none() -> None:
    # Two chats, one with a tool: five AGENT spans (three turns, then one) make two runs.
    runs = runs_of("mlflow-ag2", "two_runs")
    assert [(run.agent_name, run.output) for run in runs] == [
        ("weather_agent", "It is sunny and 21°C in Paris."),
        ("weather_agent", "Bonjour !"),
    ]
