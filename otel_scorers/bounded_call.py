"""A call that must end by a deadline although what it calls may not (an SDK flush that ignores
its timeout, an exporter's retries against an endpoint that never answers): it runs on a daemon
thread that is abandoned, not waited for, when its time is up. A daemon thread never holds up the
process's exit. The sidecar's `deadline` module adds the same for its event loop."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger("otel_scorers")


def call_within(function: Callable[[], object], timeout_s: float, what: str) -> bool:
    """Run `function` for at most `timeout_s`; whether it finished (a failure is logged, and
    counts as finished)."""
    finished = threading.Event()

    def target() -> None:
        try:
            function()
        except Exception as exc:
            logger.warning("otel_scorers: %s failed: %s: %s", what, type(exc).__name__, exc)
        finally:
            finished.set()

    threading.Thread(target=target, name=f"otel-scorers-{what}", daemon=True).start()
    return finished.wait(max(0.0, timeout_s))
