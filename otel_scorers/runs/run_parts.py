"""A run as run building assembles it: its span and the spans that belong to it (`RunParts`).

`content_of` is what the run span says of the run, with what the spans around and inside it add:
the name a parent gives it, the name any convention's keys give it, the name the agent span
wrapping it gives when the run span names it only by its own name, its steps' request and answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from otel_scorers.conventions import Convention
from otel_scorers.conventions.base import RunSpanContent
from otel_scorers.conventions.frameworks import Framework, framework_of
from otel_scorers.model import Handoff, ToolCall
from otel_scorers.runs.agent_names import agent_name, named_by_keys
from otel_scorers.runs.generic_io import run_io
from otel_scorers.runs.recorded_units import names_its_unit
from otel_scorers.span_record import SpanRecord


@dataclass(slots=True, init=False)
class RunParts:
    """A run's span and the spans given to it. Made for every run span of every trace built, by
    its own `__init__`: the one a dataclass writes calls a factory for each list and dict and
    compares each argument with its default marker, about three times the instructions."""

    span: SpanRecord
    convention: Convention
    tools: list[tuple[Convention, SpanRecord]]
    models: list[tuple[Convention, SpanRecord]]
    retrievers: list[tuple[Convention, SpanRecord]]
    #: Sub-agent runs started without a tool span, as the tool calls this run sees.
    sub_runs: list[ToolCall]
    #: Agents this run's conversation was handed to, in order, and the run that answered last.
    handoffs: list[Handoff]
    final: RunParts | None
    #: When each agent handed the run inside one of its model calls started (Google ADK 1.x):
    #: the calls after it are that agent's, not the enclosing call seen again.
    handed_within: list[int]
    #: The agent of the first turn a conversation absorbed (`Convention.absorbs_turns`).
    first_turn_agent: str | None
    #: What the run's own spans without a role said of it, in start order (`step_content`).
    steps: list[tuple[int, RunSpanContent]]
    #: The agent that answered last, when handoffs happened inside the run span itself.
    final_name: str | None
    #: Tool spans inside a tool span of the run, by the outer one's span id: that call's
    #: execution seen by a lower layer, which may know that it failed.
    executions: dict[int, list[tuple[Convention, SpanRecord]]]
    #: Model spans inside a model span of the run, by the outer one's span id: the same call seen
    #: by a lower layer, which may name the model or count the tokens the outer one does not.
    model_layers: dict[int, list[tuple[Convention, SpanRecord]]]
    #: The agent's name as the span around the run gives it (`Convention.name_within`).
    given_name: str | None
    #: The agent span that wraps this run and does nothing else (`invocations`): what it holds
    #: (request, answer, conversation id) stands for what the run span lacks.
    wrapper: RunParts | None
    #: The span directly around the run, when the run has no model, tool or retriever span of
    #: its own and is all that span holds: the conversation it may keep is the run's
    #: (`run_reading`), read by the convention that claimed it.
    around: tuple[Convention, SpanRecord] | None
    #: Tool spans that handed the conversation on by naming the next agent (`agent_name`), read
    #: by the rule every convention shares rather than by their reader: machinery, not calls.
    handoff_tools: set[int]
    #: The framework a span between the run span and its own calls marks (Semantic Kernel's
    #: function loop), whatever its scope, when the run span names none: the run's framework.
    inner_framework: Framework | None
    #: `content_of` as last read, with the name and the number of steps it was read with: the
    #: rules ask it often, and it changes only when a name is given or steps are added.
    read: tuple[str | None, int, RunSpanContent] | None
    #: The framework of the run span (`framework_of`), which reading the run asks for each of
    #: its tool calls, prompts and answers: decided once, when the run is found.
    framework: Framework | None

    def __init__(self, span: SpanRecord, convention: Convention, given_name: str | None = None) -> None:
        self.span = span
        self.convention = convention
        self.tools = []
        self.models = []
        self.retrievers = []
        self.sub_runs = []
        self.handoffs = []
        self.final = None
        self.handed_within = []
        self.first_turn_agent = None
        self.steps = []
        self.final_name = None
        self.executions = {}
        self.model_layers = {}
        self.given_name = given_name
        self.wrapper = None
        self.around = None
        self.handoff_tools = set()
        self.inner_framework = None
        self.read = None
        self.framework = framework_of(span)

    def take_work(self, other: RunParts) -> None:
        """Take `other`'s calls as this run's: its tool, model and retriever spans, with the lower
        layers' view of each (`executions`, `model_layers`)."""
        self.tools.extend(other.tools)
        self.models.extend(other.models)
        self.retrievers.extend(other.retrievers)
        self.executions.update(other.executions)
        self.model_layers.update(other.model_layers)


def framework_of_run(parts: RunParts) -> Framework | None:
    """The framework of the run: its span's (`framework_of`), else the one a span between the run
    span and its calls marks (`RunParts.inner_framework`)."""
    return parts.framework or parts.inner_framework


#: What a run whose tool calls are not in its trace lists as missing (`AgentRun.missing`).
_TOOL_CALL_FIELDS = frozenset({"tool_calls", "tool_errors"})


def untraced_calls(parts: RunParts, has_model_calls: bool) -> frozenset[str]:
    """`tool_calls` and `tool_errors` when the run's framework calls its tools past the tool
    spans instrumentations write (`Framework.untraced_tools`) and the run has neither a tool span
    nor a model call: its trace holds nothing of its calls, whatever the capture settings."""
    if parts.tools or has_model_calls:
        return frozenset()
    framework = framework_of_run(parts)
    return _TOOL_CALL_FIELDS if framework is not None and framework.untraced_tools else frozenset()


def agent_name_of(parts: RunParts) -> str | None:
    return content_of(parts).agent_name


def content_of(parts: RunParts) -> RunSpanContent:
    """The run span's content, with what its steps say where the run span says nothing."""
    read = parts.read
    if read is not None and read[0] == parts.given_name and read[1] == len(parts.steps):
        content = read[2]
    else:
        content = _content_of(parts)
        parts.read = (parts.given_name, len(parts.steps), content)
    if (
        parts.wrapper is not None
        and parts.given_name is None
        and content.agent_name == parts.span.name
        and parts.convention.agent_name_keys
    ):
        # Given a wrapper once the run was read: its name, if it has one, is kept with the rest.
        name = named_by_keys(parts.wrapper.span)
        if name is not None:
            content = replace(content, agent_name=name)
            parts.read = (parts.given_name, len(parts.steps), content)
    return content


def _content_of(parts: RunParts) -> RunSpanContent:
    content = run_io(parts.convention.run_content(parts.span), parts.span)
    if parts.given_name is not None:
        content = replace(content, agent_name=parts.given_name)
    elif content.agent_name is None or parts.convention.agent_name_keys:
        name = agent_name(parts.span, content.agent_name)
        if name is None and not parts.convention.absorbs_turns(parts.span):
            # A reader that names no agent (not a conversation's): the shared keys and span-name
            # forms, else the span's name when it recorded the request (`agent_names`).
            span = parts.span
            name = named_by_keys(span)
            if name is None and content.input_text and names_its_unit(span, content.input_text):
                name = span.name
        if name != content.agent_name:
            content = replace(content, agent_name=name)
    if not parts.steps or (
        content.agent_name is not None and content.output_text is not None and content.input_text is not None
    ):
        return content
    steps = [step for _, step in sorted(parts.steps, key=lambda pair: pair[0])]
    agent = next((step.agent_name for step in steps if step.agent_name is not None), None)
    request = next((step.input_text for step in steps if step.input_text is not None), None)
    answer = next((step.output_text for step in reversed(steps) if step.output_text is not None), None)
    return replace(
        content,
        agent_name=content.agent_name if content.agent_name is not None else agent,
        input_text=content.input_text if content.input_text is not None else request,
        output_text=content.output_text if content.output_text is not None else answer,
    )
