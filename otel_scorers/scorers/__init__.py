"""Scorers beyond the quick checks (LLM judges), by config `type`.

Factories here must not import heavy dependencies (litellm) at module import: only when a
scorer is actually built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SCORER_FACTORIES: dict[str, Callable[..., Any]] = {}
