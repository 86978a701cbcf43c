"""How to install otel-scorers and its extras, in one wording that every hint and the README use.

The project is installed from a checkout of its repository; it is not on a package index yet.
The day it is published, `install_command` changes here, and the README's install section with it.
"""

from __future__ import annotations

#: What a user runs the install command in.
WHERE = "in a checkout of the otel-scorers repository"


def install_command(extra: str | None = None) -> str:
    """`pip install -e '.[extra]'`, the install of the checkout with `extra`."""
    return f"pip install -e '.[{extra}]'" if extra else "pip install -e ."


def install_hint(extra: str) -> str:
    """The sentence a message gives when `extra` is missing."""
    return f"{install_command(extra)} {WHERE}"
