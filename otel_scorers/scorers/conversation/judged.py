"""Judged conversation scorers: a rule asks the judge once about a whole conversation.

A `ConversationRule` is a judged `Rule` (`otel_scorers.scorers.rules.base`) whose data is the
conversation's transcript; `ConversationJudged` runs it through the judge's one call path
(`Judge.ask_one`, batched with the conversation's other judged scorers under one group) and
turns the reply into a `Score` with `JudgedScorer.result`, as run-level judged scorers do. One
judge call per conversation per scorer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from otel_scorers.conversation_turns import Conversation
from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.evaluator_version import Evaluator
from otel_scorers.scorers.judge import JudgeError
from otel_scorers.scorers.judge.prompt import Data
from otel_scorers.scorers.rules.base import Ask, JudgedScorer, Task, ask_once, skipped
from otel_scorers.scorers.rules.replies import Ordinal

R = TypeVar("R", bound=BaseModel)
#: Longest text of one side of one turn the judge sees.
_MAX_TURN_TEXT = 2000


def transcript(conversation: Conversation) -> tuple[Data, dict[str, Any]]:
    """The conversation as numbered `turn_{n}` blocks (user and agent), oldest first, with a note
    when turns in the middle were not kept."""
    blocks: list[tuple[str, str]] = []
    for n, turn in enumerate(conversation.turns, 1):
        user = (turn.input or "(not recorded)")[:_MAX_TURN_TEXT]
        agent = (turn.output or "(not recorded)")[:_MAX_TURN_TEXT]
        tools = (
            f"\ntools: {', '.join(f'{tool.name} ({tool.state})' for tool in turn.tools)}"
            if turn.tools
            else ""
        )
        blocks.append((f"turn_{n}", f"user: {user}\nagent: {agent}{tools}"))
    if conversation.trimmed:
        blocks.insert(1, ("note", f"{conversation.trimmed} turns after turn_1 are not shown"))
    return tuple(blocks), {"turns": len(conversation.turns)}


class ConversationRule(ABC, Generic[R]):
    """What a judged conversation scorer adds to a `Rule`: `prepare_conversation`. Its `prepare`
    of a single run says that it scores conversations. A rule says `prepare_conversation` and
    `value`; one that does not cannot be made."""

    kind: ClassVar[str]
    shape: ClassVar[type[BaseModel]]
    instructions: ClassVar[str]
    reply_format: ClassVar[str]
    mastra_steps: ClassVar[int] = 1
    needs: ClassVar[frozenset[str]] = frozenset()
    higher_is_worse: ClassVar[bool] = False

    @property
    def version(self) -> str:
        return f"{self.kind}/1"

    @abstractmethod
    def prepare_conversation(self, conversation: Conversation) -> Task | Score:
        """The data the judge sees of `conversation`, or the score when no judge is needed."""

    def prepare(self, run: AgentRun) -> Task | Score:
        return skipped(self.kind, "a conversation scorer: bind it under conversations.scorers")

    @abstractmethod
    def value(self, reply: R, task: Task) -> tuple[float, dict[str, Any]]:
        """The score from the judge's reply, and its details."""

    def reason(self, reply: R) -> str:
        return str(getattr(reply, "reason", "")).strip()

    async def steps(self, ask: Ask[Any], task: Task) -> R:
        return await ask_once(self, ask, task)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ConversationJudged:
    """A conversation rule bound to a judge (a `JudgedScorer` holding the rule)."""

    judged: JudgedScorer[Any]
    uses_judge: bool = True

    @property
    def name(self) -> str:
        return self.judged.name

    @property
    def higher_is_worse(self) -> bool:
        return self.judged.higher_is_worse

    @property
    def value_range(self) -> tuple[float, float]:
        return self.judged.value_range

    @property
    def rule(self) -> ConversationRule[Any]:
        rule = self.judged.rule
        assert isinstance(rule, ConversationRule)
        return rule

    def evaluator(self) -> Evaluator:
        return self.judged.evaluator()

    async def score(self, conversation: Conversation) -> Score:
        judged = self.judged
        prepared = self.rule.prepare_conversation(conversation)
        if isinstance(prepared, Score):
            return Score(
                judged.name,
                prepared.value,
                None,
                prepared.reason,
                prepared.details,
                prepared.error,
                prepared.skipped,
            )
        masked = await judged.masked(prepared)
        if isinstance(masked, Score):
            return masked
        task, masking = masked
        last = conversation.last
        try:
            one = await judged.judge.ask_one(
                judged.cache_key(task),
                judged.question(task),
                model=judged.model,
                group=("conversation", conversation.id, last.span_id),
            )
        except JudgeError as exc:
            return exc.to_score(judged.name, {"turns": len(conversation.turns)})
        return judged.result(one, one.value, self.rule.reason(one.value), task, masking)


# ---- the rules ------------------------------------------------------------------------------


class FailedTurns(BaseModel):
    """The numbers of the turns where the agent failed the rule's test."""

    turns: list[Ordinal]
    reason: str = ""


class _PerTurn(ConversationRule[FailedTurns]):
    """A rule that names the agent's turns that failed a test: the score is the share that did
    not. `first` is the first turn the test applies to."""

    shape = FailedTurns
    reply_format = '{"turns":[2],"reason":"..."}'
    first: ClassVar[int] = 1

    def extra(self) -> Data:
        return ()

    def prepare_conversation(self, conversation: Conversation) -> Task | Score:
        judged = len(conversation.turns) - self.first + 1
        if judged < 1:
            return Score(
                self.kind, value=1.0, reason="nothing to judge in a single turn", details={"judge_calls": 0}
            )
        blocks, facts = transcript(conversation)
        return Task((*self.extra(), *blocks), {**facts, "judged_turns": judged})

    def value(self, reply: FailedTurns, task: Task) -> tuple[float, dict[str, Any]]:
        count = task.facts["turns"]
        outside = [n for n in reply.turns if not self.first <= n <= count]
        if outside:
            raise JudgeError(
                "judge_invalid_response",
                f"the judge named turns {outside}, outside turn_{self.first}..turn_{count}",
            )
        failed = sorted(set(reply.turns))
        return 1.0 - len(failed) / task.facts["judged_turns"], {"failed_turns": failed, "turns": count}


class KnowledgeRetention(_PerTurn):
    kind = "knowledge_retention"
    first = 2
    instructions = (
        "The user may tell the agent facts, preferences or constraints during the conversation. "
        "List the numbers of the turns (from turn_2 on) in which the agent's reply forgets or "
        "contradicts something the user said in an earlier turn, or asks again for it. "
        "An empty list when the agent kept everything."
    )


@dataclass(frozen=True, slots=True)
class RoleAdherence(_PerTurn):
    role: str = ""

    kind = "role_adherence"
    instructions = (
        "The agent was given the role below. List the numbers of the turns in which the agent's "
        "reply steps out of that role: says or does what the role excludes, or speaks as someone "
        "else. An empty list when every reply keeps to the role."
    )

    def extra(self) -> Data:
        return (("role", self.role),)


class ConversationRelevancy(_PerTurn):
    kind = "conversation_relevancy"
    instructions = (
        "List the numbers of the turns in which the agent's reply does not address what the user "
        "said in that turn, read with the turns before it (off topic, answering something else, "
        "or ignoring the request). An empty list when every reply is relevant."
    )


class Request(BaseModel):
    request: str
    fulfilled: bool


class RequestsReply(BaseModel):
    requests: list[Request]
    reason: str = ""


class ConversationCompleteness(ConversationRule[RequestsReply]):
    kind = "conversation_completeness"
    shape = RequestsReply
    instructions = (
        "List each distinct thing the user asked the agent for over the whole conversation, and "
        "say whether the agent's turns, by the end, fulfilled it."
    )
    reply_format = '{"requests":[{"request":"...","fulfilled":true}],"reason":"..."}'

    def prepare_conversation(self, conversation: Conversation) -> Task | Score:
        blocks, facts = transcript(conversation)
        return Task(blocks, facts)

    def value(self, reply: RequestsReply, task: Task) -> tuple[float, dict[str, Any]]:
        if not reply.requests:
            raise JudgeError(
                "judge_invalid_response", "the judge listed no requests for a non-empty conversation"
            )
        done = sum(1 for request in reply.requests if request.fulfilled)
        return done / len(reply.requests), {
            "requests": len(reply.requests),
            "fulfilled": done,
            "unfulfilled": [request.request[:200] for request in reply.requests if not request.fulfilled],
        }
