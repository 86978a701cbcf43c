"""Modules a configuration names by `package.module:attribute` (a custom scorer, an output):
imported, which runs them. Whatever goes wrong is a `ValueError` that says so in one line, never
a traceback: a relative name, a module that cannot be found, or one whose own code raised as it
was imported."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_user_module(name: str) -> ModuleType:
    """The module `name`, imported (its code runs); `ValueError` saying why not."""
    if not name or name.startswith("."):
        raise ValueError(
            f"cannot import module {name!r}: give its whole name (package.module), not a relative one"
        )
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {name!r}: {exc}") from None
    except (Exception, SystemExit) as exc:  # the module's own code failed as it ran
        raise ValueError(
            f"cannot import module {name!r}: it raised {type(exc).__name__} as it was imported: {exc}"[:500]
        ) from None
