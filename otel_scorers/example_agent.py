"""`otel_scorers.example_agent`, as earlier releases documented it: `otel_scorers.demos.example_agent`."""

from otel_scorers.demos.example_agent import (
    DEFAULT_TOOLS,
    DEMO_RUNS,
    ExampleAgent,
    ScriptedRun,
    ToolFailure,
    get_time,
    get_weather,
)

__all__ = [
    "DEFAULT_TOOLS",
    "DEMO_RUNS",
    "ExampleAgent",
    "ScriptedRun",
    "ToolFailure",
    "get_time",
    "get_weather",
]
