"""Every shipped reader is documented: docs/instrumentations.md's tables name each by its
convention name, as a user writes it and `runs --explain` prints it."""

from __future__ import annotations

import re
from pathlib import Path

from otel_scorers.conventions import SHIPPED
from otel_scorers.conventions.described import DescribedConvention

PAGE = Path(__file__).resolve().parent.parent.parent / "docs" / "instrumentations.md"


def test_each_shipped_convention_has_a_row_in_the_instrumentations_tables() -> None:
    named = set(re.findall(r"\| `([\w-]+)` \|$", PAGE.read_text(), flags=re.M))
    missing = [convention.name for convention in SHIPPED if convention.name not in named]
    assert missing == [], f"docs/instrumentations.md has no row naming {missing}"


def test_docs_detection_order_is_the_order_readers_are_asked_in() -> None:
    section = (PAGE.parent / "conventions.md").read_text().split("## Detection order")[1].split("\n## ")[0]
    items = section.split("\n0. ")[1].splitlines()
    # Step 0: descriptions naming their scopes, found by the span's scope before any code reader.
    by_scope = [c.name for c in SHIPPED if isinstance(c, DescribedConvention) and c.scopes]
    step_zero = " ".join(line for line in items if not re.match(r"\s*(\d+\.|-) .*→", line))
    assert re.findall(r"`([\w-]+)`: scope", step_zero) == by_scope
    asked_in_order = [c.name for c in SHIPPED if not (isinstance(c, DescribedConvention) and c.scopes)]
    documented = [re.findall(r"→ [^`]*`([\w-]+)`", line)[0] for line in items if "→" in line]
    assert documented == asked_in_order
