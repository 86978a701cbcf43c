"""Several judged scorers bound to one run in one judge call (`judge: {batch: true}`).

The first scorer of a run to ask opens a batch and waits a moment (`WINDOW_S`) for the others,
which the engine starts together; then one call carries every task, each under its own key,
with the data blocks they share sent once. Each member reads its own part; a member whose part
is missing or of the wrong shape, or every member when the call fails, falls back to a call of
its own. Only the batch's tokens and cost are shared out among the members it served.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from otel_scorers.model import AgentRun, JudgeUsage, Score
from otel_scorers.scorers.judge import DATA_NOTICE, Judge, JudgeError, delimit
from otel_scorers.scorers.judged.base import Analysis, JudgedScorer, Task

#: How long the first scorer of a run waits for the others before the call goes out.
WINDOW_S = 0.005

_SYSTEM = (
    "You carry out several evaluation tasks on the same data, each as if it were the only one. "
    "Reply with only one JSON object with one key per task name, each holding that task's JSON "
    "object exactly as the task describes it."
)


@dataclass
class _Member:
    scorer: JudgedScorer[Any]
    task: Task
    done: asyncio.Future[tuple[Any, JudgeUsage, bool] | None]


@dataclass
class _Batch:
    members: list[_Member] = field(default_factory=list)
    closed: bool = False


_batches: weakref.WeakKeyDictionary[Judge, dict[tuple[int, int], _Batch]] = weakref.WeakKeyDictionary()


async def batched_analysis(scorer: JudgedScorer[Any], run: AgentRun, task: Task) -> Score:
    judge = scorer.judge
    key = scorer.cache_key(task)
    cached = judge.cache.get(key)
    if cached is not None:
        return scorer.result(cached, task, JudgeUsage(scorer.model, 0, 0, 0, 0.0), True, None)
    open_batches = _batches.setdefault(judge, {})
    run_key = (run.trace_id, run.span_id)
    loop = asyncio.get_running_loop()
    member = _Member(scorer, task, loop.create_future())
    batch = open_batches.get(run_key)
    if batch is None or batch.closed or not _fits(batch, member):
        batch = _Batch([member])
        if run_key not in open_batches or open_batches[run_key].closed:
            open_batches[run_key] = batch
        await asyncio.sleep(WINDOW_S)
        batch.closed = True
        if open_batches.get(run_key) is batch:
            del open_batches[run_key]
        await _send(judge, batch)
    else:
        batch.members.append(member)
    outcome = await member.done
    if outcome is None:  # the batch could not serve it: a call of its own
        return await _alone(scorer, task)
    reply, usage, alone = outcome
    analysis = Analysis(reply, usage.calls, scorer.rule.reason(reply))
    judge.cache.put(key, analysis)
    names = [m.scorer.name for m in batch.members]
    extra = {} if alone else {"batched_with": [n for n in names if n != scorer.name]}
    return scorer.result(analysis, task, usage, False, None, extra)


def _fits(batch: _Batch, member: _Member) -> bool:
    """Tags shared by the batch must hold the same text; names must be unique."""
    tags = {tag: text for m in batch.members for tag, text in m.task.data}
    names = {m.scorer.name for m in batch.members}
    return member.scorer.name not in names and all(
        tags.get(tag, text) == text for tag, text in member.task.data
    )


async def _alone(scorer: JudgedScorer[Any], task: Task) -> Score:
    tally = scorer.judge.tally(scorer.model)
    try:
        scorer.judge.check_budget()
        analysis = await scorer.analyze(task, tally)
    except JudgeError as exc:
        return exc.to_score(scorer.name, {"judge_calls": tally.calls, "steps": scorer.steps})
    scorer.judge.cache.put(scorer.cache_key(task), analysis)
    return scorer.result(analysis, task, tally.usage(), False, tally.transcript, {"batch_fallback": True})


async def _send(judge: Judge, batch: _Batch) -> None:
    members = batch.members
    if len(members) == 1:
        for member in members:
            member.done.set_result(None)
        return
    model = members[0].scorer.model
    tally = judge.tally(model)
    try:
        judge.check_budget()
        reply = await judge.ask(_messages(members), dict[str, Any], tally)
    except JudgeError:
        reply = None
    except BaseException:
        for member in members:
            if not member.done.done():
                member.done.set_result(None)
        raise
    served = []
    for member in members:
        part = reply.get(member.scorer.name) if reply is not None else None
        try:
            value = member.scorer.rule.shape.model_validate(part) if part is not None else None
        except ValidationError:
            value = None
        served.append((member, value))
    shares = sum(1 for _, value in served if value is not None)
    usage = tally.usage()
    first = True
    for member, value in served:
        if value is None:
            member.done.set_result(None)
            continue
        member_usage = JudgeUsage(
            model,
            1 if first else 0,
            usage.input_tokens // shares + (usage.input_tokens % shares if first else 0),
            usage.output_tokens // shares + (usage.output_tokens % shares if first else 0),
            usage.cost_usd / shares if usage.cost_usd is not None else None,
        )
        first = False
        member.done.set_result((value, member_usage, False))


def _messages(members: list[_Member]) -> list[dict[str, str]]:
    tasks = []
    for member in members:
        rule = member.scorer.rule
        tasks.append(
            f'Task "{member.scorer.name}": {rule.instructions}\nIts JSON object: {rule.reply_format}'
        )
    blocks: dict[str, str] = {}
    for member in members:
        for tag, text in member.task.data:
            blocks.setdefault(tag, text)
    data = "\n".join(delimit(tag, text) for tag, text in blocks.items())
    keys = ", ".join(f'"{member.scorer.name}": {{...}}' for member in members)
    system = f"{_SYSTEM}\n{DATA_NOTICE}\nReply with only this JSON object: {{{keys}}}"
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join([*tasks, data])}]
