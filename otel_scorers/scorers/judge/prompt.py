"""What a judge call sends: a `Question` (instructions, the reply's JSON, the judged texts as data
blocks) rendered as chat messages, within the prompt bound.

The bound covers the whole request, a repair round included: the judged texts are cut to fit
what is left after the instructions and `REPAIR_ALLOWANCE`. They are shared fairly: each group of
blocks (the question, the answer, the context items, the turns...: a tag without its `_<n>`)
gets an equal share, a group needing less gives the rest to the others, and within a group each
block gets an equal share the same way. A group with more blocks than its share can hold at
`MIN_BLOCK_CHARS` each keeps its first and last blocks and leaves the middle out. Every cut says
so in the text the judge reads.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from otel_scorers.scorers.judge.data import DATA_NOTICE, delimit

#: The judged texts, as (tag, text) blocks: each goes to the judge delimited and escaped.
Data = tuple[tuple[str, str], ...]
Message = Mapping[str, str]

#: Characters counted for one token when the bound is applied: low, so that a bound in tokens
#: holds for most text (English runs about 4 characters a token).
CHARS_PER_TOKEN = 3
#: Room kept in the bound for a repair round: the unusable reply's excerpt and the request to mend it.
REPAIR_ALLOWANCE = 1_500
#: The reply excerpt a repair round sends back to the judge.
REPAIR_EXCERPT = 1_000
#: A block is not cut shorter than this: below it, blocks are left out instead.
MIN_BLOCK_CHARS = 200
_INDEX = re.compile(r"_\d+$")

_BATCH_SYSTEM = (
    "You carry out several evaluation tasks on the same data, each as if it were the only one. "
    "Reply with only one JSON object with one key per task name, each holding that task's JSON "
    "object exactly as the task describes it."
)


@dataclass(frozen=True, slots=True)
class Question:
    """One thing to ask the judge. `name` says what asks (a scorer's name; a task's key in a
    batch); `instructions` is the task, `reply_format` the JSON the reply must have in words
    ("" when the instructions say it), `request` any text before the data in the user message,
    `shape` the reply's type (a pydantic model, TypedDict, dataclass or `dict[str, Any]`)."""

    name: str
    instructions: str
    data: Data
    shape: Any
    reply_format: str = ""
    request: str = ""


def system_text(question: Question) -> str:
    parts = [question.instructions, DATA_NOTICE]
    if question.reply_format:
        parts.append(f"Reply with only this JSON object: {question.reply_format}")
    return "\n".join(part for part in parts if part)


def render(question: Question, max_prompt_tokens: int) -> list[dict[str, str]]:
    """The question as a system and a user message, its data cut to fit the bound."""
    system = system_text(question)
    fixed = len(system) + len(question.request) + 1
    blocks = _delimited(question.data, max_prompt_tokens, fixed)
    user = "\n".join(part for part in (question.request, blocks) if part) or "(no data)"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def render_batch(questions: Sequence[Question], max_prompt_tokens: int) -> list[dict[str, str]]:
    """Several questions on the same data in one request: each task under its name, the data
    blocks they share sent once, one JSON object back with a key per task."""
    tasks = [
        f'Task "{q.name}": {q.instructions}\nIts JSON object: {q.reply_format or "as the task says"}'
        for q in questions
    ]
    shared: dict[str, str] = {}
    for question in questions:
        for tag, text in question.data:
            shared.setdefault(tag, text)
    keys = ", ".join(f'"{q.name}": {{...}}' for q in questions)
    system = f"{_BATCH_SYSTEM}\n{DATA_NOTICE}\nReply with only this JSON object: {{{keys}}}"
    data = _delimited(
        tuple(shared.items()), max_prompt_tokens, len(system) + sum(len(task) + 2 for task in tasks)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join([*tasks, data])}]


def repair(messages: Sequence[Message], reply: str, problem: str) -> list[dict[str, str]]:
    """The request again, with the unusable reply (an excerpt) and what was wrong with it."""
    excerpt = reply[:REPAIR_EXCERPT] + ("…" if len(reply) > REPAIR_EXCERPT else "")
    return [
        *(dict(message) for message in messages),
        {"role": "assistant", "content": excerpt},
        {
            "role": "user",
            "content": f"That reply could not be used: {problem[:300]}. "
            "Reply again with only the JSON object, in the shape asked for.",
        },
    ]


def prompt_chars(messages: Sequence[Message]) -> int:
    return sum(len(str(message.get("content", ""))) for message in messages)


def _delimited(data: Data, max_prompt_tokens: int, fixed_chars: int) -> str:
    """The blocks, delimited, in what the bound leaves after the fixed text and a repair round.
    Tags and escaping add to the texts: when they push the blocks over, fit again in less."""
    room = max(MIN_BLOCK_CHARS, max_prompt_tokens * CHARS_PER_TOKEN - fixed_chars - REPAIR_ALLOWANCE)
    target = room
    for _ in range(4):
        blocks = "\n".join(delimit(tag, text) for tag, text in fit(data, target))
        if len(blocks) <= room or target <= MIN_BLOCK_CHARS:
            return blocks
        target = max(MIN_BLOCK_CHARS, int(target * room / len(blocks) * 0.95))
    return blocks


def fit(data: Data, room: int) -> Data:
    """The blocks, cut to `room` characters in all, fairly (see the module's docstring)."""
    sizes = [len(text) for _, text in data]
    if sum(sizes) <= room:
        return data
    groups: dict[str, list[int]] = {}
    for index, (tag, _) in enumerate(data):
        groups.setdefault(_INDEX.sub("", tag), []).append(index)
    group_room = share_fairly(
        {group: sum(sizes[i] for i in members) for group, members in groups.items()}, room
    )
    fitted: list[tuple[str, str] | None] = list(data)
    for group, members in groups.items():
        allowed = group_room[group]
        if sum(sizes[i] for i in members) <= allowed:
            continue
        kept = members
        most = max(1, allowed // MIN_BLOCK_CHARS)
        if len(members) > most:
            head, tail = (most + 1) // 2, most // 2
            kept = members[:head] + (members[-tail:] if tail else [])
            for index in members[head : len(members) - tail]:
                fitted[index] = None
            left_out = len(members) - len(kept)
            marker = (
                f"{group}_left_out",
                f"[{left_out} of {len(members)} {group} blocks left out to fit the prompt bound]",
            )
            fitted[members[head]] = marker
            allowed = max(0, allowed - len(marker[1]))
        block_room = share_fairly({i: sizes[i] for i in kept}, allowed)
        for index in kept:
            tag, text = data[index]
            fitted[index] = (tag, cut(text, block_room[index]))
    return tuple(block for block in fitted if block is not None)


def cut(text: str, chars: int) -> str:
    """`text`, or its first `chars` characters and a note of how much was cut."""
    if len(text) <= chars:
        return text
    return f"{text[:chars]}…[cut: {len(text) - chars} more characters]"


def share_fairly(needs: Mapping[Hashable, int], room: int) -> dict[Hashable, int]:
    """Max-min fair shares of `room`: each gets what it needs up to an equal share, and what a
    smaller one leaves goes to the others in turn."""
    shares: dict[Hashable, int] = {}
    pending = sorted(needs.items(), key=lambda item: item[1])
    left = room
    for position, (key, need) in enumerate(pending):
        equal = left // (len(pending) - position)
        shares[key] = min(need, equal)
        left -= shares[key]
    return shares
