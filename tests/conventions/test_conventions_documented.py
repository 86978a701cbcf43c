"""Every shipped reader is documented: docs/instrumentations.md's tables name each by its
convention name, as a user writes it and `runs --explain` prints it."""

from __future__ import annotations

import re
from pathlib import Path

from otel_scorers.conventions import SHIPPED

PAGE = Path(__file__).resolve().parent.parent.parent / "docs" / "instrumentations.md"


def test_each_shipped_convention_has_a_row_in_the_instrumentations_tables() -> None:
    named = set(re.findall(r"\| `([\w-]+)` \|$", PAGE.read_text(), flags=re.M))
    missing = [convention.name for convention in SHIPPED if convention.name not in named]
    assert missing == [], f"docs/instrumentations.md has no row naming {missing}"
