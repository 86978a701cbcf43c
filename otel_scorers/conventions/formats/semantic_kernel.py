"""What Semantic Kernel writes the same under every instrumentation: the plugin-qualified name it
gives the model for a function (`{plugin}-{function}`), the argument its agents add to every
function they call (`instructions_override`, null unless set), and the key of its function
loop's span (`AutoFunctionInvocationLoop`), between an agent's span and its model and tool
calls."""

from __future__ import annotations

#: What a ChatCompletionAgent adds to the arguments of every function it calls.
ADDED_ARGUMENTS = frozenset({"instructions_override"})
#: The functions offered to the model, on the span of the loop that calls them: Semantic
#: Kernel's own key, whichever tracer records the span.
LOOP_KEYS = frozenset({"sk.available_functions"})


def function_name(qualified: str) -> str:
    """`{plugin}-{function}` -> `{function}` (a name without a plugin stays as it is)."""
    _, dash, function = qualified.partition("-")
    return function if dash and function else qualified
