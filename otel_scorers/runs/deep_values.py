"""A run as code that may write its values out whole is given it: tool arguments and results
within the depth bound of decoded values (`bounded_json.within_depth`).

Tool values are decoded as orjson allows (1,024 levels) and read within Python's stack by the
project's own readers; a user's scorer, or a judge's prompt, may hand them to `json.dumps`,
which needs a frame or two a level. A value nested deeper than the bound is given as
`DEEPER_TEXT`; a run without one is given as it is, unchanged and unread further."""

from __future__ import annotations

from dataclasses import replace

from otel_scorers.conventions.formats.bounded_json import within_depth
from otel_scorers.model import AgentRun, ToolCall, changed_tool_call


def tool_values_within_depth(run: AgentRun) -> AgentRun:
    """`run`, its tool calls' arguments and results nested too deep given as `DEEPER_TEXT`."""
    calls: list[ToolCall] | None = None
    for index, call in enumerate(run.tool_calls):
        arguments, result = within_depth(call.arguments), within_depth(call.result)
        if arguments is not call.arguments or result is not call.result:
            calls = list(run.tool_calls) if calls is None else calls
            calls[index] = changed_tool_call(call, arguments=arguments, result=result)
    return run if calls is None else replace(run, tool_calls=tuple(calls))
