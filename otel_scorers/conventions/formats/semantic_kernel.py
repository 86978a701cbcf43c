"""What Semantic Kernel writes the same under every instrumentation: the plugin-qualified name it
gives the model for a function (`{plugin}-{function}`), and the argument its agents add to every
function they call (`instructions_override`, null unless set)."""

from __future__ import annotations

#: What a ChatCompletionAgent adds to the arguments of every function it calls.
ADDED_ARGUMENTS = frozenset({"instructions_override"})


def function_name(qualified: str) -> str:
    """`{plugin}-{function}` -> `{function}` (a name without a plugin stays as it is)."""
    _, dash, function = qualified.partition("-")
    return function if dash and function else qualified
