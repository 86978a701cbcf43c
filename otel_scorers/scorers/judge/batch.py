"""Several questions about one run in one judge call (`judge: {batch: true}`).

The first question of a run to arrive opens a batch and waits a moment (`WINDOW_S`) for the
others, which the engine starts together; then one call carries every question, each under its
own key, with the data blocks they share sent once. Each question reads its own part. A part
that is missing or of the wrong shape, or every part when the call fails, is asked alone — once,
without a repair round, within the batch's deadline: N questions cost at most N + 1 calls and one
deadline. Only the batch's tokens and cost are shared out among the questions it answered.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import weakref
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from typing_extensions import TypedDict

from otel_scorers.model import JudgeUsage
from otel_scorers.scorers.judge.cache import BoundedCache
from otel_scorers.scorers.judge.config import JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError
from otel_scorers.scorers.judge.prompt import Question, render_batch
from otel_scorers.scorers.judge.repair import conforms
from otel_scorers.scorers.judge.usage import Consultation, JudgeReply, Message

T = TypeVar("T")


class Asking(Protocol):
    """What a batch needs of the judge that owns it (`Judge`)."""

    config: JudgeConfig

    @property
    def cache(self) -> BoundedCache: ...

    def consultation(self, model: str, deadline: float | None = None) -> Consultation: ...

    def check_budget(self, model: str | None = None) -> None: ...

    async def consult(
        self,
        key: Hashable,
        work: Callable[[Consultation], Awaitable[T]],
        *,
        model: str,
        deadline: float | None = None,
    ) -> JudgeReply[T]: ...

    async def ask(self, question: Question, consultation: Consultation, *, repair: bool = True) -> Any: ...

    async def ask_messages(
        self,
        messages: Sequence[Message],
        shape: Any,
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
        repair: bool = True,
    ) -> Any: ...


#: How long the first question of a run waits for the others before the call goes out.
WINDOW_S = 0.005


@dataclass
class _Member:
    key: Hashable
    question: Question
    done: asyncio.Future[JudgeReply[Any] | None]


@dataclass
class _Batch:
    members: list[_Member] = field(default_factory=list)
    closed: bool = False
    deadline: float | None = None  # the batch call's: its fallbacks keep it


class Batches:
    """The open batches of one judge, by event loop and run."""

    def __init__(self, judge: Asking) -> None:
        self._judge = judge
        self._open: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Batch]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def renew_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._open = weakref.WeakKeyDictionary()

    async def ask(self, key: Hashable, question: Question, *, model: str, group: Hashable) -> JudgeReply[Any]:
        judge = self._judge
        cached = judge.cache.get(key)
        if cached is not None:
            return JudgeReply(cached, JudgeUsage(model, 0, 0, 0, 0.0), cached=True)
        loop = asyncio.get_running_loop()
        with self._lock:
            open_batches = self._open.setdefault(loop, {})
        member = _Member(key, question, loop.create_future())
        batch = open_batches.get(group)
        if batch is None or batch.closed or not _fits(batch, member):
            batch = _Batch([member])
            if group not in open_batches or open_batches[group].closed:
                open_batches[group] = batch
            try:
                await asyncio.sleep(WINDOW_S)
                batch.closed = True
                if open_batches.get(group) is batch:
                    del open_batches[group]
                await self._send(batch, model)
            finally:
                batch.closed = True
                for waiting in batch.members:
                    if not waiting.done.done():
                        waiting.done.set_result(None)
        else:
            batch.members.append(member)
        outcome = await member.done
        if outcome is not None:
            return outcome
        if len(batch.members) == 1:  # alone in its batch: an ordinary question
            return await judge.consult(key, lambda c: judge.ask(question, c), model=model)
        reply = await judge.consult(
            key, lambda c: judge.ask(question, c, repair=False), model=model, deadline=batch.deadline
        )
        return dataclasses.replace(reply, fallback=True)

    async def _send(self, batch: _Batch, model: str) -> None:
        members = batch.members
        if len(members) == 1:
            return
        judge = self._judge
        consultation = judge.consultation(model)
        batch.deadline = consultation.deadline
        questions = [member.question for member in members]
        try:
            judge.check_budget(model)
            reply = await judge.ask_messages(
                render_batch(questions, judge.config.max_prompt_tokens),
                dict[str, Any],
                consultation,
                name="batch",
                schema=_schema(questions),
                repair=False,
            )
        except JudgeError:
            return  # every member asks alone, within what is left of the deadline
        served = [
            (member, conforms(reply.get(member.question.name), member.question.shape)) for member in members
        ]
        shares = sum(1 for _, value in served if value is not None)
        if not shares:
            return
        usage = consultation.usage()
        names = [member.question.name for member in members]
        first = True
        for member, value in served:
            if value is None:
                continue
            member_usage = JudgeUsage(
                model,
                1 if first else 0,
                usage.input_tokens // shares + (usage.input_tokens % shares if first else 0),
                usage.output_tokens // shares + (usage.output_tokens % shares if first else 0),
                usage.cost_usd / shares if usage.cost_usd is not None else None,
            )
            first = False
            judge.cache.put(member.key, value)
            others = tuple(name for name in names if name != member.question.name)
            member.done.set_result(JudgeReply(value, member_usage, batched_with=others))


def _fits(batch: _Batch, member: _Member) -> bool:
    """Tags shared by the batch must hold the same text; names must be unique."""
    tags = {tag: text for m in batch.members for tag, text in m.question.data}
    names = {m.question.name for m in batch.members}
    return member.question.name not in names and all(
        tags.get(tag, text) == text for tag, text in member.question.data
    )


def _schema(questions: list[Question]) -> Any:
    """The batch reply's type, for its JSON schema: each question's shape under its name."""
    return TypedDict("BatchReply", {q.name: q.shape for q in questions})  # type: ignore[operator]
