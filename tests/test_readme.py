"""Every Python block in README.md and in the manual (docs/*.md) runs as written, each in a fresh
interpreter.

Blocks are found when the tests are collected, so a block added to a page is a test too.
A block runs in an empty working directory, with no OpenTelemetry exporter settings from this
environment and no network beyond 127.0.0.1 needed: blocks that name a collector or a judge
model only configure them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    code: str
    page: str
    line: int  # where the block starts in its page
    section: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.section})"


def python_blocks(text: str, page: str = "README.md") -> list[Block]:
    blocks = []
    for match in _FENCE.finditer(text):
        headings = _HEADING.findall(text, 0, match.start())
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(match.group(1), page, line, headings[-1] if headings else "top"))
    return blocks


BLOCKS = [
    block
    for page in PAGES
    for block in python_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
]


def test_the_pages_have_python_blocks_and_the_finder_sees_each_one() -> None:
    fences = sum(page.read_text(encoding="utf-8").count("```python") for page in PAGES)
    assert README.read_text(encoding="utf-8").count("```python") >= 2
    assert len(BLOCKS) == fences >= 5, "every ```python fence is closed and found"


def _clean_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env["PYTHONPATH"] = str(README.parent)  # the package under test, whatever the working directory
    return env


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_readme_python_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_clean_environment(),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert result.returncode == 0, f"{block} failed:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, f"{block} printed a traceback:\n{result.stderr[-3000:]}"
