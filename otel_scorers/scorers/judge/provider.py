"""litellm, imported lazily: on first use, on a worker thread (its import takes seconds), with
`LITELLM_LOCAL_MODEL_COST_MAP=True` unless set otherwise, so the import never reaches the network."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from typing import Any

from otel_scorers.fork_safety import renew_module_state_in_child
from otel_scorers.install import install_hint
from otel_scorers.scorers.judge.errors import JudgeError

_litellm: Any = None
_import_lock = threading.Lock()


def _renew_import_lock() -> None:
    global _import_lock
    _import_lock = threading.Lock()  # a fork during the import must not leave it held


renew_module_state_in_child(_renew_import_lock)


def litellm_installed() -> bool:
    return importlib.util.find_spec("litellm") is not None


def litellm_loaded() -> bool:
    return _litellm is not None


def import_litellm() -> Any:
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            _litellm = litellm
    return _litellm


async def load_litellm() -> Any:
    """The litellm module, imported on a worker thread the first time (it takes seconds)."""
    if _litellm is not None:
        return _litellm
    try:
        return await asyncio.to_thread(import_litellm)
    except ImportError as exc:
        raise JudgeError(
            "judge_unavailable",
            f"litellm is not installed ({exc}); {install_hint('llm')}",
            cause=f"{type(exc).__name__}: {exc}",
        ) from None


def require_litellm(scorer: str) -> None:
    if not litellm_installed():
        raise ValueError(f"{scorer} needs litellm: {install_hint('llm')}")
