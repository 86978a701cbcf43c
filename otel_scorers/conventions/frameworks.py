"""What an agent framework does the same under every instrumentation, known by the framework.

A framework's loop-ending tool, the prompt it wraps the user's request in, the text it sends the
model for a tool that failed, the object it wraps a tool's plain return value in: these are the
framework's, not the instrumentation's, so every instrumentation of the framework is read alike,
whichever reader claimed the span. The framework is named by the span's instrumentation scope:
the part after `instrumentation` (`openinference.instrumentation.crewai`,
`openlit.instrumentation.crewai`, `opentelemetry.instrumentation.crewai.instrumentation`: CrewAI;
after `instrumentation.genai` for OpenTelemetry's own: `opentelemetry.instrumentation.genai.smolagents`),
or, in a JavaScript package name, the part after `instrumentation-`
(`@arizeai/openinference-instrumentation-beeai`, `@traceloop/instrumentation-langchain`),
else its first part when that is a listed framework (a framework's own tracing, scoped by its
modules: `semantic_kernel.functions.kernel_function`), else its last part. When the scope names
no listed framework (an instrumentation not shown: renamed, forked, new), the span is known by
what only that framework writes on it (`Framework.mark_keys`, `Framework.mark_name`: BeeAI's
component metadata, ADK's event keys, DSPy's agent modules), and a tool call by an argument only that framework adds
to its calls (`Framework.added_arguments`), else by the run it is made in. A framework not
listed is read by the general rules alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from otel_scorers.conventions import google_adk, openinference_frameworks
from otel_scorers.conventions.base import Message
from otel_scorers.conventions.call_parameters import adds_to, calls_with, without_framework_arguments
from otel_scorers.conventions.formats import (
    ag2,
    crewai,
    haystack,
    openai_agents,
    qwen_agent,
    semantic_kernel,
    smolagents,
)
from otel_scorers.conventions.openinference_scopes import BEEAI_CLASS, BEEAI_EVENT, DSPY_RUN_SUFFIXES
from otel_scorers.gen_ai_names import GEN_AI_TOOL_DESCRIPTION
from otel_scorers.model import ToolCall, ToolDefinition
from otel_scorers.span_record import SpanRecord

_INSTRUMENTATION = "instrumentation"
#: The package OpenTelemetry's own GenAI instrumentations sit in, before the framework's name.
_GENAI = "genai"
#: A JavaScript instrumentation's package names its framework after this.
_JS_INSTRUMENTATION = "instrumentation-"


@dataclass(frozen=True, slots=True)
class Framework:
    """What one framework does under every instrumentation.

    `loop_tools`: the tools it gives its agent to end the loop (smolagents' and BeeAI's
    `final_answer` carry the answer, DSPy ReAct's `finish` says it is done): they answer the
    model's request of that name but are machinery, not the agent's tools. `request_in_prompt`:
    the user's request in the prompt the framework made of it (CrewAI's "Current Task: ..."),
    None for other text. `tool_error`: the failure a result sent the model for a call, or returned
    as the tool's result, says the call had (CrewAI's "Error executing tool: ...", Qwen-Agent's
    "An error occurred when calling tool ..."), None for a result; `tool_error_prefix` begins it.
    `loop_tool_descriptions`: the descriptions it gives those tools, which its tool spans carry
    (smolagents' `FinalAnswerTool`, BeeAI's): by them a loop tool is known whichever scope wrote
    the span. `loop_tool_results`: what such a tool returns, by its name, when its span keeps no
    description (DSPy's `finish` returns "Completed."): known by the pair whichever scope.
    `result_key`: the key of the one-key object the framework wraps a tool's return value in
    when it is not an object (ADK's `{"result": value}`). `step_fields`: what its modules' result
    holds beside the answer, the steps that led to it (DSPy's prediction: `trajectory`,
    `reasoning`), never the answer.
    `tool_name`: the function's name from the name the framework gave the model for it (Semantic
    Kernel's plugin-qualified `{plugin}-{function}`). `added_arguments`: arguments the framework
    adds to every call its agent makes, null unless set, which the model did not ask for
    (Semantic Kernel's `instructions_override`). `mark_keys`, `mark_name`: what only the
    framework writes on a span, whichever instrumentation wrote it, by which its spans are known
    under a scope that names no listed framework: keys of its own, or a span name its own
    (`mark_name`, asked of names ending in one of `mark_name_suffixes`). `listing_tools`: the tool
    spans its own tracing writes when it lists a server's tools (the OpenAI Agents SDK's
    `mcp_list_tools`, before each turn of an agent given an MCP server): no model asked for them
    and they run no tool, so they are neither a tool call of the run nor work of the agent span
    around them. `history_results`: what the calls before a request returned, as the framework
    writes its steps into the request's text (smolagents' `Calling tools:` and `Observation:`
    messages), where the trace keeps them when no span records the tools. `untraced_tools`: its
    agents call their tools past the wrappers instrumentations trace tools by (CrewAI's native
    tool calls: only OpenInference's instrumentation writes a span for them), so a run of it with
    no tool span and no model call holds nothing of its calls, not the absence of any.
    `call_parameters`: its tool-calling method's own, beside the tool's (`call_parameters.py`)."""

    loop_tools: frozenset[str] = frozenset()
    loop_tool_descriptions: frozenset[str] = frozenset()
    loop_tool_results: frozenset[tuple[str, str]] = frozenset()
    request_in_prompt: Callable[[str], str | None] | None = None
    tool_error: Callable[[Any], str | None] | None = None
    tool_error_prefix: str | None = None
    result_key: str | None = None
    step_fields: frozenset[str] = frozenset()
    tool_name: Callable[[str], str] | None = None
    added_arguments: frozenset[str] = frozenset()
    listing_tools: frozenset[str] = frozenset()
    mark_keys: frozenset[str] = frozenset()
    mark_name_suffixes: tuple[str, ...] = ()
    mark_name: Callable[[str], bool] | None = None
    history_results: Callable[[Sequence[Message]], smolagents.HistoryResults] | None = None
    untraced_tools: bool = False
    call_parameters: frozenset[str] = frozenset()

    def marks(self, span: SpanRecord) -> bool:
        """The span carries what only this framework writes (`mark_keys`, `mark_name`)."""
        if not span.attributes.keys().isdisjoint(self.mark_keys):
            return True
        named = self.mark_name
        return named is not None and span.name.endswith(self.mark_name_suffixes) and named(span.name)

    def unwrapped(self, result: Any) -> Any:
        """A tool's result without the object the framework wrapped a plain value in."""
        key = self.result_key
        # Decoded JSON: a dict, so the cheap check (no ABC) is the whole check.
        if key is not None and isinstance(result, dict) and len(result) == 1 and key in result:
            return result[key]
        return result

    def as_called(self, call: ToolCall) -> ToolCall:
        """The call named by its function's name, without the arguments the framework added."""
        name = self.tool_name(call.name) if self.tool_name is not None else call.name
        arguments = call.arguments
        if adds_to(arguments, self.added_arguments) or calls_with(arguments, self.call_parameters):
            arguments = without_framework_arguments(arguments, self.added_arguments, self.call_parameters)
        if name == call.name and arguments is call.arguments:
            return call
        return replace(call, name=name, arguments=arguments)

    def as_declared(self, tools: tuple[ToolDefinition, ...]) -> tuple[ToolDefinition, ...]:
        """The tools the run declares, named as their calls are (`tool_name`)."""
        rename = self.tool_name
        if rename is None:
            return tools
        return tuple(replace(tool, name=rename(tool.name)) for tool in tools)


FRAMEWORKS: Mapping[str, Framework] = {
    "smolagents": Framework(
        loop_tools=frozenset({"final_answer"}),
        loop_tool_descriptions=frozenset({"Provides a final answer to the given problem."}),
        history_results=smolagents.history_results,
        call_parameters=smolagents.CALL_PARAMETERS,
    ),
    "dspy": Framework(
        loop_tools=frozenset({"finish"}),
        loop_tool_results=frozenset({("finish", "Completed.")}),
        step_fields=frozenset({"trajectory", "reasoning"}),
        mark_name_suffixes=DSPY_RUN_SUFFIXES,
        mark_name=openinference_frameworks.names_dspy_agent,
    ),
    "beeai": Framework(
        # BeeAI for TypeScript names its tool `finalAnswer` and wraps a tool's output in `result`.
        loop_tools=frozenset({"final_answer", "finalAnswer"}),
        loop_tool_descriptions=frozenset({"Sends the final answer to the user"}),
        result_key="result",
        mark_keys=frozenset({BEEAI_CLASS, BEEAI_EVENT}),
    ),
    "crewai": Framework(
        request_in_prompt=crewai.task_in_prompt,
        tool_error=crewai.tool_error,
        tool_error_prefix=crewai.TOOL_ERROR_PREFIX,
        untraced_tools=True,
        mark_keys=crewai.INSTRUMENTATION_KEYS,
    ),
    "google_adk": Framework(result_key="result", mark_keys=google_adk.ADK_KEYS),
    "openai_agents": Framework(
        listing_tools=frozenset({"mcp_list_tools"}),
        tool_error=openai_agents.tool_error,
        tool_error_prefix=openai_agents.TOOL_ERROR_PREFIX,
    ),
    "haystack": Framework(tool_error=haystack.tool_error, tool_error_prefix=haystack.TOOL_ERROR_PREFIX),
    "ag2": Framework(tool_error=ag2.tool_error, tool_error_prefix=ag2.TOOL_ERROR_PREFIX),
    "qwen_agent": Framework(tool_error=qwen_agent.tool_error, tool_error_prefix=qwen_agent.TOOL_ERROR_PREFIX),
    "semantic_kernel": Framework(
        tool_name=semantic_kernel.function_name,
        added_arguments=semantic_kernel.ADDED_ARGUMENTS,
        mark_keys=semantic_kernel.LOOP_KEYS,
    ),
}


_TOOL_ERRORS = tuple(f.tool_error for f in FRAMEWORKS.values() if f.tool_error is not None)
#: How every listed framework's failure text begins: a text beginning otherwise is none (one check).
_TOOL_ERROR_PREFIXES = tuple(f.tool_error_prefix for f in FRAMEWORKS.values() if f.tool_error_prefix)
_REQUESTS_IN_PROMPT = tuple(
    f.request_in_prompt for f in FRAMEWORKS.values() if f.request_in_prompt is not None
)
_LOOP_TOOL_DESCRIPTIONS = frozenset(text for f in FRAMEWORKS.values() for text in f.loop_tool_descriptions)
_LOOP_TOOL_RESULTS = frozenset(pair for f in FRAMEWORKS.values() for pair in f.loop_tool_results)
#: Where a tool span keeps the tool's description: the GenAI key, OpenInference's.
_TOOL_DESCRIPTION_KEYS = (GEN_AI_TOOL_DESCRIPTION, "tool.description")
_HISTORY_READERS = tuple(f.history_results for f in FRAMEWORKS.values() if f.history_results is not None)
_STEP_FIELDS = frozenset(field for f in FRAMEWORKS.values() for field in f.step_fields)
_ADDING = tuple(f for f in FRAMEWORKS.values() if f.added_arguments or f.call_parameters)
#: Every key by which a call's arguments may be a listed framework's (one check for most calls).
_ADDED_ARGUMENTS = frozenset(key for f in _ADDING for key in f.added_arguments | f.call_parameters)
_MARKED = tuple(f for f in FRAMEWORKS.values() if f.mark_keys or f.mark_name is not None)
#: Every framework's mark keys and name endings together: a span carrying none of them (most
#: spans) is no listed framework's by its marks, two checks instead of one per framework.
_MARK_KEYS = frozenset(key for f in _MARKED for key in f.mark_keys)
_MARK_NAME_SUFFIXES = tuple(suffix for f in _MARKED for suffix in f.mark_name_suffixes)


@lru_cache(maxsize=256)
def framework_name(scope: str) -> str:
    """The framework an instrumentation scope names (see the module's docstring)."""
    if _JS_INSTRUMENTATION in scope:
        return scope.rsplit(_JS_INSTRUMENTATION, 1)[1].replace("-", "_")
    parts = scope.split(".")
    if _INSTRUMENTATION in parts[:-1]:
        named = parts.index(_INSTRUMENTATION) + 1
        # OpenTelemetry's own GenAI instrumentations: `opentelemetry.instrumentation.genai.{framework}`.
        if parts[named] == _GENAI and named + 1 < len(parts):
            named += 1
        return parts[named]
    return parts[0] if parts[0] in FRAMEWORKS else parts[-1]


#: The listed framework each instrumentation scope names (None: none), decided once per scope:
#: scopes are few in a stream. Past this many, a scope's is worked out anew each time.
_MAX_REMEMBERED_SCOPES = 1024
_scope_frameworks: dict[str, Framework | None] = {}
#: What `_scope_frameworks` gives for a scope not decided yet.
_UNDECIDED = Framework()


def scope_framework(scope: str) -> Framework | None:
    """The listed framework `scope` names (`framework_name`), decided once per scope."""
    framework = _scope_frameworks.get(scope, _UNDECIDED)
    if framework is not _UNDECIDED:
        return framework
    framework = FRAMEWORKS.get(framework_name(scope)) if scope else None
    if len(_scope_frameworks) < _MAX_REMEMBERED_SCOPES:
        _scope_frameworks[scope] = framework
    return framework


def framework_of(span: SpanRecord) -> Framework | None:
    """The framework the span's instrumentation scope names, when it is one listed, else the one
    whose marks the span carries (`Framework.marks`). Read where it is needed, once per span:
    a run's is its `RunParts.framework`."""
    # `scope_framework`'s lookup inline, as `framework_marking`'s check below: this runs for
    # most spans.
    framework = _scope_frameworks.get(span.scope, _UNDECIDED)
    if framework is _UNDECIDED:
        framework = scope_framework(span.scope)
    if framework is not None:
        return framework
    # `framework_marking`, its cheap check inline: this runs for most spans, marked by none.
    if span.attributes.keys().isdisjoint(_MARK_KEYS) and not span.name.endswith(_MARK_NAME_SUFFIXES):
        return None
    return _marking(span)


def framework_marking(span: SpanRecord) -> Framework | None:
    """The listed framework whose marks the span carries (`Framework.marks`), whatever its scope."""
    if span.attributes.keys().isdisjoint(_MARK_KEYS) and not span.name.endswith(_MARK_NAME_SUFFIXES):
        return None
    return _marking(span)


def _marking(span: SpanRecord) -> Framework | None:
    for marked in _MARKED:
        if marked.marks(span):
            return marked
    return None


def framework_of_call(span: SpanRecord, call: ToolCall, run: Framework | None = None) -> Framework | None:
    """The framework of a tool call: its span's (`framework_of`), else the one whose added
    argument the call carries (`Framework.added_arguments`: specific enough to name it) or the
    parameter of its tool-calling method (`Framework.call_parameters`), else
    `run`'s, the framework of the run it was made in."""
    framework = framework_of(span)
    if framework is not None or not isinstance(call.arguments, dict):
        return framework or run
    if _ADDED_ARGUMENTS.isdisjoint(call.arguments):  # most calls: one check, not one a framework
        return run
    for adding in _ADDING:
        if adds_to(call.arguments, adding.added_arguments) or calls_with(
            call.arguments, adding.call_parameters
        ):
            return adding
    return run


def request_in_prompt(framework: Framework | None, text: str) -> str:
    """The user's request in `text`, a prompt the run's model was sent: the text itself, unless
    the run's framework (`framework_of` its span) wraps the request in a prompt of its own. When
    the run's scope names no listed framework (an instrumentation not shown, a tracer of any
    code), each listed framework's prompt is looked for: each is specific enough not to be a
    user's own text."""
    if framework is not None:
        found = framework.request_in_prompt(text) if framework.request_in_prompt else None
        return found or text
    for in_prompt in _REQUESTS_IN_PROMPT:
        if (found := in_prompt(text)) is not None:
            return found
    return text


#: The methods whose spans frameworks name `{agent}.{method}` for an agent's run: smolagents'
#: `MultiStepAgent.run` (`weather_agent.run`), CrewAI's `Agent.kickoff` and `Agent._execute_core`
#: (`Weather Reporter.kickoff`), AutoGen AgentChat's `on_messages_stream`.
RUN_METHODS = (".run", ".kickoff", "._execute_core", ".on_messages_stream")


def agent_in_span_name(name: str) -> str:
    """The agent a run span's name `{agent}.{method}` names (`RUN_METHODS`), else the name."""
    for method in RUN_METHODS:
        if name.endswith(method) and len(name) > len(method):
            return name[: -len(method)]
    return name


def loop_tool(framework: Framework | None, span: SpanRecord, name: str, result: Any = None) -> bool:
    """The tool `name`, which the span called and which returned `result`, ends the loop of
    `framework`, the span's (`framework_of`; `Framework.loop_tools`).
    When the span's scope names no listed framework, the tool's description says it, or its
    name with what it returned: a tool of the same name of another framework is the agent's
    own, a description is the framework's (`Framework.loop_tool_descriptions`,
    `Framework.loop_tool_results`)."""
    if framework is not None:
        return name in framework.loop_tools
    if isinstance(result, str) and (name, result) in _LOOP_TOOL_RESULTS:
        return True
    for key in _TOOL_DESCRIPTION_KEYS:
        description = span.attributes.get(key)
        if isinstance(description, str) and description in _LOOP_TOOL_DESCRIPTIONS:
            return True
    return False


def sent_back_error(framework: Framework | None, response: Any) -> str | None:
    """The failure that `response` (what the model was sent back for a call, or what its span
    recorded it returned) says the call had in the run's framework; None for a result. Under a
    scope naming no framework (MLflow's autolog), each listed framework's failure text is looked
    for: each says a failure, not a result."""
    if framework is not None:
        return framework.tool_error(response) if framework.tool_error else None
    for tool_error in _TOOL_ERRORS:
        error = tool_error(response)
        if error is not None:
            return error
    return None


def returned_error(framework: Framework | None, result: Any) -> str | None:
    """The failure that `result`, what a tool span recorded its call returned, says the call had
    (Qwen-Agent returns its failure text from the tool it ran); one check for most results."""
    if type(result) is not str or not result.startswith(_TOOL_ERROR_PREFIXES):
        return None
    return sent_back_error(framework, result)


def step_fields(framework: Framework | None) -> frozenset[str]:
    """The fields of a result the run's framework (`framework_of` its span) holds beside the
    answer (`Framework.step_fields`). When the run's scope names no framework (a tracer of any
    code, such as MLflow's autolog), every listed framework's: beside an answer, each names a
    step, not the answer."""
    return framework.step_fields if framework is not None else _STEP_FIELDS


def results_in_history(
    framework: Framework | None, messages: Sequence[Message]
) -> list[smolagents.HistoryResults]:
    """What the calls before a request returned, as the run's framework (`framework_of` its span)
    writes its steps into the request's text (`Framework.history_results`). When the run's scope
    names no framework, each listed framework's texts are looked for: each is the framework's own."""
    if framework is not None:
        return [framework.history_results(messages)] if framework.history_results is not None else []
    return [read(messages) for read in _HISTORY_READERS]
