"""The docs state today's figures with the command that measures them, not their history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
HISTORY = re.compile(
    r"\bused to\b|\b\d[\d.,]* ?s? now\b|, \d[\d.,]* ?s? before\b|\bnow \(|\bbefore the locks"
)


@pytest.mark.parametrize("page", ["sidecar.md", "in-process.md", "performance.md"])
def test_figures_are_stated_as_todays_facts(page: str) -> None:
    text = " ".join((DOCS / page).read_text().split())
    assert HISTORY.findall(text) == [], f"{page} narrates history"
