"""Calls that must end by a deadline although what they call may not (an SDK flush that ignores
its timeout, a join on a stuck thread): each runs on a daemon thread that is abandoned, not
waited for, when its time is up. A daemon thread never holds up the process's exit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable

from otel_scorers.bounded_call import call_within

__all__ = ["call_within", "within"]

logger = logging.getLogger("otel_scorers")


async def within(function: Callable[[], object], timeout_s: float, what: str) -> bool:
    """`call_within` without blocking the event loop (and without asyncio's default executor,
    whose threads `asyncio.run` waits for at exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def target() -> None:
        try:
            function()
        except Exception as exc:
            logger.warning("otel_scorers: %s failed: %s: %s", what, type(exc).__name__, exc)
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(_finish, done)

    threading.Thread(target=target, name=f"otel-scorers-{what}", daemon=True).start()
    try:
        await asyncio.wait_for(asyncio.shield(done), max(0.0, timeout_s))
    except asyncio.TimeoutError:
        return False
    return True


def _finish(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)
