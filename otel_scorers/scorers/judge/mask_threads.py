"""A score's judged texts masked off the event loop.

Masking is linear in a text's length, but a text of megabytes (an answer of digit groups above
all) costs seconds: on the loop, no binding's timeout could fire meanwhile and every other score
would wait. Texts beyond a few thousand characters are masked on threads of their own, where the
binding's timeout applies to the wait (the score is a `timeout` error, nothing sent), and the
masking itself gives up after `MASK_TIMEOUT_S` (a `redaction` error), so a thread is never held
for long past the score it served. Short texts, nearly all of them, are masked in place: a
thread's round trip would cost more than masking them.
"""

from __future__ import annotations

from collections.abc import Iterable

from otel_scorers.scorers.judge.masking import Masker
from otel_scorers.scorers.sync_workers import SyncWorkers

#: Characters masked on the loop: a few milliseconds at worst (digit groups), microseconds as text
#: usually runs.
INLINE_CHARS = 4_000
#: Longest a score's texts are masked before it fails with a `redaction` error (nothing sent).
MASK_TIMEOUT_S = 10.0
#: Threads masking at once, shared by every judge scorer; more texts wait their turn within their
#: bindings' timeouts.
MASKING_THREADS = 2

_threads = SyncWorkers("redaction", MASKING_THREADS)

Blocks = tuple[tuple[str, str], ...]


async def masked_blocks(masking: Masker, data: Iterable[tuple[str, str]]) -> Blocks:
    """`masking.mask_blocks(data)`, off the loop unless the texts are short."""
    blocks = tuple(data)
    if sum(len(text) for _, text in blocks) <= INLINE_CHARS:
        return masking.mask_blocks(blocks)
    masked: Blocks = await _threads.run(lambda given: masking.mask_blocks(given, MASK_TIMEOUT_S), blocks)
    return masked
