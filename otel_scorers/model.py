"""The domain model: what a scorer sees (`AgentRun`, `ToolCall`) and what it produces (`Score`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

ToolState = Literal["ok", "error", "incomplete", "result_error"]
ContextKind = Literal["tool_result", "document", "system_instructions", "given"]
RunStatus = Literal["ok", "error", "unset"]

#: Fields a trace may fail to carry; a scorer that needs one of them is skipped, not scored 0.
#: `tool_errors`: whether tool calls failed, for instrumentations that record a failure only
#: with the content; `tool_calls`: the calls themselves, for instrumentations that record them
#: only in the model's messages.
MISSABLE_FIELDS = frozenset(
    {"input", "output", "tool_arguments", "tool_results", "tool_errors", "tool_calls", "agent_name"}
)

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of a run, in start order."""

    name: str
    call_id: str | None = None
    arguments: Any = None
    result: Any = None
    state: ToolState = "ok"
    error: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None

    @property
    def failed(self) -> bool:
        return self.state != "ok"


# Each field's slot setter: a frozen dataclass's constructor sets every field through
# `object.__setattr__`, twice the cost of the slot's own setter (`made_tool_call`).
_SET_NAME, _SET_CALL_ID, _SET_ARGUMENTS, _SET_RESULT, _SET_STATE, _SET_ERROR, _SET_START, _SET_END = (
    ToolCall.__dict__[name].__set__
    for name in ("name", "call_id", "arguments", "result", "state", "error", "start_ns", "end_ns")
)


def made_tool_call(
    name: str,
    call_id: str | None,
    arguments: Any,
    result: Any,
    state: ToolState,
    error: str | None,
    start_ns: int | None,
    end_ns: int | None,
) -> ToolCall:
    """`ToolCall(name, call_id, ...)`, every field given, at about half the constructor's cost:
    the same frozen `ToolCall`, its fields set through their slots' own setters. Run building
    makes one for every tool span and every completion of a call."""
    call: ToolCall = object.__new__(ToolCall)
    _SET_NAME(call, name)
    _SET_CALL_ID(call, call_id)
    _SET_ARGUMENTS(call, arguments)
    _SET_RESULT(call, result)
    _SET_STATE(call, state)
    _SET_ERROR(call, error)
    _SET_START(call, start_ns)
    _SET_END(call, end_ns)
    return call


#: `changed_tool_call`'s mark of a field left as it is.
_KEEP: Any = object()


def changed_tool_call(
    call: ToolCall,
    *,
    call_id: str | None = _KEEP,
    arguments: Any = _KEEP,
    result: Any = _KEEP,
    state: ToolState = _KEEP,
    error: str | None = _KEEP,
) -> ToolCall:
    """`dataclasses.replace` for a tool call, at a quarter of its cost (which looks the class's
    fields up on every call): run assembly completes tool calls one field at a time."""
    return made_tool_call(
        call.name,
        call.call_id if call_id is _KEEP else call_id,
        call.arguments if arguments is _KEEP else arguments,
        call.result if result is _KEEP else result,
        call.state if state is _KEEP else state,
        call.error if error is _KEEP else error,
        call.start_ns,
        call.end_ns,
    )


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool the run's model was offered, as the trace declares it: its name and its parameters'
    JSON Schema (None when the trace names the tool only). `source` is the attribute it was read
    from. The schema is shared by every run that declared the same tools: never change it."""

    name: str
    parameters: Mapping[str, Any] | bool | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One piece of what grounded a run's answer, and where it came from.

    `kind`: `tool_result` (`source` is the tool's name), `document` (a retriever span's
    document: `source` is its id, else the retriever span's name and position),
    `system_instructions` (`source` says which attribute or message), `given` (set by the
    binding: `source` is `config` or the run path it was read from).
    """

    text: str
    kind: ContextKind
    source: str
    span_id: int | None = None


@dataclass(frozen=True, slots=True)
class TokenUsage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Handoff:
    """One agent passing the conversation to another inside a run (OpenAI Agents' handoffs): an
    agent transition, not a tool call."""

    from_agent: str | None
    to_agent: str
    start_ns: int = 0


@dataclass(frozen=True, slots=True)
class AgentRun:
    """One agent run rebuilt from its spans.

    `missing` names what the trace did not carry (content capture off, unparsable JSON): text
    scorers are skipped for those runs instead of scoring an absent answer as a wrong one.
    `unrecorded` names those of them that the run's instrumentation never writes, whatever its
    settings (OpenLLMetry's OpenAI Agents spans keep no answer of a chat-completions model): the
    skip says so, since turning content capture on would not help.
    `context` is what grounded the answer: the system instructions, the documents retriever
    spans returned and the tools' results, in that order, each with its source.
    A run whose agent handed the conversation on is one run with every agent's tool calls:
    `agent_name` is the agent it started with, `final_agent` the one that answered, `handoffs`
    the transitions in order. `tool_definitions` are the tools its model was offered, one per name,
    as its agent and model spans declare them (`gen_ai.tool.definitions`, OpenInference's
    `llm.tools`): empty when the trace declares none.
    `text_sources` says, for `input` and `output`, where the text was derived from when the run
    span did not hold it as text (its structure reduced, the span around it, its model calls),
    or why it could not be found (a structure without text): text scorers skip such a run; for
    `tool_calls`, that they were read from the conversation the span around the run keeps.
    """

    trace_id: int
    span_id: int
    agent_name: str | None
    input: str | None
    output: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    input_messages: tuple[Mapping[str, Any], ...] = ()
    output_messages: tuple[Mapping[str, Any], ...] = ()
    models: tuple[str, ...] = ()
    usage: TokenUsage = TokenUsage()
    start_ns: int = 0
    end_ns: int = 0
    status: RunStatus = "unset"
    conversation_id: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=_empty)
    resource: Mapping[str, Any] = field(default_factory=_empty)
    convention: str = "unknown"
    missing: frozenset[str] = frozenset()
    unrecorded: frozenset[str] = frozenset()
    parent_span_id: int | None = None
    context: tuple[ContextItem, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    final_agent: str | None = None
    tool_definitions: tuple[ToolDefinition, ...] = ()
    text_sources: Mapping[str, str] = field(default_factory=_empty)

    @property
    def trace_id_hex(self) -> str:
        return f"{self.trace_id:032x}"

    @property
    def span_id_hex(self) -> str:
        return f"{self.span_id:016x}"

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def tool_names(self) -> list[str]:
        return [call.name for call in self.tool_calls]


@dataclass(frozen=True, slots=True)
class ScoreError:
    """Why a scorer failed: `type` is short and stable (it becomes `error.type`)."""

    type: str
    message: str


@dataclass(frozen=True, slots=True)
class JudgeUsage:
    """What the LLM judge calls behind one score cost."""

    model: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@runtime_checkable
class DeclaresDirection(Protocol):
    """A scorer that says which way its value goes: `higher_is_worse` (hallucination, bias,
    toxicity, `tool_error_rate`, `user_frustration`). One that does not declare it is higher-is-
    better, as the checks and most scorers are."""

    @property
    def higher_is_worse(self) -> bool: ...


def higher_is_worse(scorer: object) -> bool:
    """Whether `scorer` declares that a higher value is worse."""
    return isinstance(scorer, DeclaresDirection) and bool(scorer.higher_is_worse)


def passes(value: float, threshold: float, worse_when_higher: bool) -> bool:
    """A value against a threshold: at most it where higher is worse, at least it otherwise."""
    return value <= threshold if worse_when_higher else value >= threshold


#: A scorer skipped for cost reasons (a judge's budget) says so with this prefix: the metrics count
#: those skips apart (`otel_scorers.judge.budget_skips`).
BUDGET_SKIP_PREFIX = "budget:"


@dataclass(slots=True)
class Score:
    """One scorer's verdict on one run.

    Exactly one of these holds: `value` is set (scored), `skipped` says why the run lacked what
    the scorer needs, or `error` says why the scorer failed. `binary`: the result of a scorer that
    declares itself binary (a pass/fail check: value 0 or 1, its label saying which), counted in
    the result counts and not measured into the score histogram. `sampling_probability` is the run's
    probability of having been scored by this binding, when below 1 or paced (`paced_sampling`):
    estimates weight the score by its inverse. `evaluator_version` says what made it: the digest
    of its scorer's type, arguments, prompt version and judge model (`evaluator_version`).

    Not frozen, unlike the run it judges: a run is handed to every scorer, a score only goes on to
    be written; a scorer's own is made its binding's with label and timing (in place for a quick
    check's, `Check.fresh_scores`, else as a copy), where a frozen dataclass would cost 1.6 times
    as much to make. Nothing hashes a score (its `details` is a dict): what writes scores caches
    by its fields, and of those the error and the judge usage are records of their own, frozen so
    that they hash.
    """

    scorer: str
    value: float | None = None
    label: str | None = None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    error: ScoreError | None = None
    skipped: str | None = None
    duration_s: float = 0.0
    usage: JudgeUsage | None = None
    start_ns: int = 0
    sampling_probability: float | None = None
    evaluator_version: str | None = None
    binary: bool = False

    @property
    def ok(self) -> bool:
        return self.value is not None and self.error is None and self.skipped is None


def score_fields(score: Score) -> dict[str, Any]:
    """What a line of `score`'s output says of the score itself, for runs and conversations."""
    return {
        "scorer": score.scorer,
        "value": score.value,
        "label": score.label,
        "reason": score.reason,
        "skipped": score.skipped,
        "error": {"type": score.error.type, "message": score.error.message} if score.error else None,
        "evaluator_version": score.evaluator_version,
    }
