"""The seam between instrumentation conventions and run assembly.

A convention recognises its spans (`detect`), says which role each plays (`role`), and reads
what it knows from one span at a time. Combining spans into an `AgentRun` (nearest run
ancestor, fallbacks to model spans, matching tool spans to tool-call parts) is the same for
every convention and lives in `otel_scorers.runs.run_builder` and its phases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from otel_scorers.conventions.formats.tool_definitions import span_tool_definitions
from otel_scorers.model import ToolCall, ToolDefinition
from otel_scorers.span_record import SpanRecord

#: Attributes that name the agent a span runs, most specific first (GenAI, OpenInference): the
#: name keys every convention shares (`Convention.agent_name_keys`, `runs/agent_names`).
NAME_KEYS = ("gen_ai.agent.name", "agent.name")

SpanRole = Literal["run", "tool", "model", "retriever"]

#: Instrumentation scopes that write no tool spans for the framework they trace, whichever reader
#: claims their spans: the run's tool calls are only in its model calls' messages (OpenLLMetry's
#: and OpenLIT's CrewAI instrumentations, OpenInference's Haystack one, OpenTelemetry's smolagents one).
WITHOUT_TOOL_SPANS = frozenset(
    {
        "opentelemetry.instrumentation.crewai.instrumentation",
        "openlit.instrumentation.crewai",
        "openinference.instrumentation.haystack",
        "opentelemetry.instrumentation.genai.smolagents",
    }
)


#: What `Convention.handoff_target` gives for a handoff whose instrumentation did not record the
#: agent handed to (OpenLLMetry's OpenAI Agents spans): the next agent run beside the handing
#: one, in the same outer run, is the one handed to.
UNNAMED_AGENT = ""


#: A message in the neutral shape of the GenAI conventions: {"role": str, "parts": [part, ...]},
#: each part a dict with a "type" (text, tool_call, tool_call_response, ...).
Message = Mapping[str, Any]


class Messages(NamedTuple):
    """Messages read from a span; `captured` is False when the span carried no content at all.

    A tuple, unlike the records below: `NOT_CAPTURED` is the one default every model call and run
    span shares, so it must not be changeable, and a tuple is the cheapest immutable record."""

    items: tuple[Message, ...] = ()
    captured: bool = False


NOT_CAPTURED = Messages()


@dataclass(slots=True)
class ModelCall:
    """What one model (LLM) span says."""

    span_id: int
    start_ns: int
    input: Messages = NOT_CAPTURED
    output: Messages = NOT_CAPTURED
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(slots=True)
class Document:
    """One document a retriever span returned: its text and, when the span says, its id."""

    text: str
    id: str | None = None


@dataclass(slots=True)
class RunSpanContent:
    """What a run span itself says. Text fields win over messages when a convention has them."""

    agent_name: str | None = None
    input: Messages = NOT_CAPTURED
    output: Messages = NOT_CAPTURED
    input_text: str | None = None
    output_text: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class Markers:
    """What marks a span as a convention's when nothing else does: any of these attribute keys,
    one of these instrumentation scopes, or one of these span names. A convention that declares
    them checks the same in its `detect`, written out there because that is asked for every span
    (tests/conventions/test_detection_per_kind.py holds the two equal)."""

    keys: frozenset[str] = field(default_factory=frozenset)
    scopes: frozenset[str] = field(default_factory=frozenset)
    names: frozenset[str] = field(default_factory=frozenset)

    def carried_by(self, span: SpanRecord) -> bool:
        # A view of the span's keys against a set: the shorter of the two is walked (a span may
        # carry hundreds of keys).
        return (
            span.scope in self.scopes
            or span.name in self.names
            or not span.attributes.keys().isdisjoint(self.keys)
        )

    @staticmethod
    def together(markers: tuple[Markers | None, ...]) -> Markers | None:
        """These readers' markers as one; None when one of them declares none."""
        if None in markers:
            return None
        declared = [found for found in markers if found is not None]
        return Markers(
            frozenset().union(*(found.keys for found in declared)),
            frozenset().union(*(found.scopes for found in declared)),
            frozenset().union(*(found.names for found in declared)),
        )


class Convention(Protocol):
    """One instrumentation convention (OTel GenAI, OpenInference, ...).

    `run_start_names` (span-name prefixes) and `run_start_markers` ((attribute, value) pairs,
    value None for "present") let the in-process processor spot a run span when it *starts*,
    with a couple of lookups, so the trace is buffered from then on (`may_start_run`).

    The members after `model_call` are hooks only some conventions need. A convention class
    subclasses this protocol explicitly to inherit their defaults (no such tool, no such span),
    so run assembly calls them on every convention without looking them up.
    """

    name: str
    run_start_names: tuple[str, ...]
    run_start_markers: tuple[tuple[str, str | None], ...]
    #: Instrumentation scopes that label runs only when they end: the first span of one of these
    #: scopes in a trace opens the trace's buffer, as a run span would.
    run_start_scopes: tuple[str, ...] = ()
    #: Span-name prefixes of the tool spans that hand the conversation on to an agent whose run
    #: span starts only after the handing run's span has ended, with no run span around both
    #: (AutoGen's Swarm): the in-process processor keeps such a trace open for the next run
    #: (`may_hand_off`) instead of handing it to scoring when the first agent's run ends.
    handoff_start_names: tuple[str, ...] = ()
    #: The attribute keys whose values `detect` compares: with the span's scope, name and which
    #: attribute keys it has, they make its kind, whose convention is decided once
    #: (`conventions.detect`).
    detection_values: tuple[str, ...] = ()
    #: The markers `detect` looks for, when they are all it looks at (`Markers.carried_by`):
    #: a span carrying none of the first readers' markers is not asked of them one by one
    #: (`conventions.detect`). None when `detect` reads more than markers.
    markers: Markers | None = None
    #: The name keys every convention shares (`gen_ai.agent.name`, `agent.name`) name the agent
    #: of a run span its reader named after the span (`runs/agent_names`). False for an
    #: instrumentation that writes them meaning something else (the graph node a span ran in).
    agent_name_keys: bool = True

    def detect(self, span: SpanRecord) -> bool:
        """The span carries this convention's markers. Cheap: a few key lookups. Decided by the
        span's scope, its name, which attribute keys it has, and only the values the convention
        declares (`detection_values`): the answer is remembered per kind of span."""
        ...

    def role(self, span: SpanRecord) -> SpanRole | None:
        """run, tool, model or retriever; None for spans this convention does not use."""
        ...

    def run_content(self, span: SpanRecord) -> RunSpanContent: ...

    def tool_call(self, span: SpanRecord) -> ToolCall: ...

    def model_call(self, span: SpanRecord) -> ModelCall: ...

    def internal_tool(self, span: SpanRecord) -> bool:
        """The tool span is framework machinery of this convention's reading (a handoff): it
        answers the model's tool-call part of the same name, but it is not a tool call of the
        run. Loop-ending tools are one rule for every convention (`frameworks`)."""
        return False

    def handoff_target(self, span: SpanRecord) -> str | None:
        """The agent a tool span hands the conversation to (OpenAI Agents' `handoff to X`), whose
        run goes on as the same run (`UNNAMED_AGENT` when the span does not say which); None for
        any other span."""
        return None

    def sub_run_call(self, run_span: SpanRecord, parent: SpanRecord | None) -> ToolCall | None:
        """The tool call an outer run sees for the sub-agent run `run_span`, which sits inside
        the outer run's spans under `parent` (not a tool span; a managed agent); None when the
        framework starts sub-agents only through tool spans."""
        return None

    def run_under_tool(self, span: SpanRecord) -> bool:
        """The span, which plays no role by itself and sits directly under a tool span, is an
        agent run that the tool invoked, recognised by its shape alone (a LangGraph sub-graph
        carries no agent label of its own: its metadata is the calling graph's)."""
        return False

    def run_at_top(self, span: SpanRecord) -> bool:
        """The span, which plays no role by itself and is its trace's root, is an agent run when
        model calls no run holds are under it (`runs/top_runs.py`): its reader's vocabulary marks
        no span as an agent's run (a description without the run's `when`: LangSmith's run types),
        so the application's outermost unit of work around the calls is."""
        return False

    def run_needs_work(self, span: SpanRecord) -> bool:
        """The run span marks a unit of work, whether or not an agent ran in it (OpenLLMetry's
        `workflow`, the outermost span of whatever was traced): it is a run only with spans under
        it. Alone in its trace, it is a step whose instrumentation lost its parent."""
        return False

    def failure_unrecorded(self, span: SpanRecord) -> bool:
        """The tool span says nothing of whether the call failed: its instrumentation records a
        failure only with the content, which was not captured (Agno's under OpenLLMetry). The run
        then lists `tool_errors` as missing instead of counting the call as a success."""
        return False

    def calls_only_in_messages(self, run_span: SpanRecord) -> bool:
        """The run's instrumentation writes no tool spans: its tool calls are only the model's
        tool-call parts and the responses it was sent (`WITHOUT_TOOL_SPANS`), so a trace without
        the models' content does not carry them. The run then lists `tool_calls` (and
        `tool_errors`) as missing instead of having called nothing."""
        return run_span.scope in WITHOUT_TOOL_SPANS

    def absorbs_turns(self, span: SpanRecord) -> bool:
        """The run span is a conversation whose agents' replies are runs of their own kind
        (AG2 0.x's `conversation` over `invoke_agent` turns): the runs nested in it, other than
        through a tool span, are its turns, not runs; it is named after its first turn's agent
        when it names none itself."""
        return False

    def documents(self, span: SpanRecord) -> tuple[Document, ...]:
        """The documents a retriever span (role `retriever`) returned, in its order, which ground
        the answer of the run it belongs to (`AgentRun.context`); empty when not captured."""
        return ()

    def name_within(self, run_span: SpanRecord, parent: SpanRecord) -> str | None:
        """The name the span around a run gives its agent, which wins over the run span's own:
        a Haystack pipeline names each component it runs by what its user added it under, where
        the agent's span knows only its class. None when the parent names nothing."""
        return None

    def written_after_return(self, span: SpanRecord) -> bool:
        """The model span was written after its call returned, by a worker of the
        instrumentation, which may be after the run span ended: a run read as soon as its span
        ends (in-process) may lack its last model call (LiteLLM's callback). When the last model
        call it has asked for tools that then ran, the run went on to a call it does not have:
        its answer is not recorded, rather than empty."""
        return False

    def tool_definitions(self, span: SpanRecord) -> tuple[ToolDefinition, ...]:
        """The tools an agent or model span declares its model was offered, each with its
        parameters' schema when the span gives it; the keys every instrumentation writes are one
        reading (`formats.tool_definitions`), which a convention renames as it names the calls."""
        return span_tool_definitions(span.attributes)

    def step_content(self, span: SpanRecord) -> RunSpanContent | None:
        """What a span inside a run, playing no role of its own, says about the run when its run
        span does not: LlamaIndex's workflow steps name the agent at work and hold its answer.
        The run's agent is the first such step's `agent_name`, its answer the last one's
        `output_text`; None for spans that say nothing of the kind."""
        return None
