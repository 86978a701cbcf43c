"""Fork safety: what a forked child (a gunicorn or uvicorn worker) must renew before it runs.

A child inherits every lock in the state it had at the fork, and none of the threads: a lock that
an agent thread or the engine's thread happened to hold stays held forever in the child, and its
first span deadlocks. Each object that owns a lock registers itself with `renew_in_child`; one
hook, run in the child before `fork()` returns, renews them all, and only then restarts threads
(`restart_in_child`), so that no new thread can meet a lock that is not renewed yet.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger("otel_scorers")


class Renewable(Protocol):
    def renew_after_fork(self) -> None:
        """Replace the locks (and drop the state that belonged to the parent's threads)."""
        ...


class Restartable(Protocol):
    def restart_after_fork(self) -> None:
        """Start again the threads that ran in the parent (every lock is renewed by now)."""
        ...


_renewable: weakref.WeakSet[Renewable] = weakref.WeakSet()
_restartable: weakref.WeakSet[Restartable] = weakref.WeakSet()
_module_renewals: list[Callable[[], None]] = []


def renew_in_child(owner: Renewable) -> None:
    """Have `owner.renew_after_fork()` called in every forked child (held weakly)."""
    _renewable.add(owner)


def renew_module_state_in_child(renew: Callable[[], None]) -> None:
    """Have `renew()` called in every forked child: for a module's own locks (held strongly)."""
    _module_renewals.append(renew)


def restart_in_child(owner: Restartable) -> None:
    """Have `owner.restart_after_fork()` called in every forked child, after every renewal."""
    _restartable.add(owner)


def _after_fork_in_child() -> None:
    for renew in _module_renewals:
        try:
            renew()
        except Exception:
            logger.exception("otel_scorers: renewing %r after a fork failed", renew)
    for owner in list(_renewable):
        try:
            owner.renew_after_fork()
        except Exception:  # the child must start whatever one object does
            logger.exception("otel_scorers: renewing %r after a fork failed", owner)
    for restartable in list(_restartable):
        try:
            restartable.restart_after_fork()
        except Exception:
            logger.exception("otel_scorers: restarting %r after a fork failed", restartable)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
