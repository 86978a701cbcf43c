"""The README and the docs state today's figures with the command that measures them, not their
history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
ROOT = DOCS.parent
HISTORY = re.compile(
    r"\bused to\b|\b\d[\d.,]* ?s? now\b|, \d[\d.,]* ?s? before\b|\bnow \(|\bbefore the locks"
    r"|\bno longer\b|\bpreviously\b|\bbefore and after\b|\| before \||\bearlier versions still\b"
    r"|\bthe tree before\b|\bbefore \w+ (results )?were\b"
)
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_figures_are_stated_as_todays_facts(page: Path) -> None:
    text = " ".join(page.read_text().split())
    assert HISTORY.findall(text) == [], f"{page.name} narrates history"


def test_a_history_line_is_found() -> None:
    assert HISTORY.search("before binary results were counted, the work was 1,443,000 instructions")
    assert HISTORY.search("the `llm` extra of earlier versions still installs")
    assert not HISTORY.search("a trace whose spans arrive before its root is buffered")
