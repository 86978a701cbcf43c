"""Every `tests/...` path that the docs (README.md, docs/*.md), the package's and benchmarks'
docstrings and comments, or the build files (pyproject.toml, Makefile, the fixture scripts) name
exists: a reader sent to a test finds it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMED = re.compile(r"(?<![\w./-])tests/[\w./<>*-]+")
#: Paths that name a user's project, not this one: docs/ci.md's workflow runs the agent's own tests.
USERS = {"tests/agent"}


def _texts() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "otel_scorers").rglob("*.py")),
        *sorted((ROOT / "bench").rglob("*.py")),
        ROOT / "pyproject.toml",
        ROOT / "Makefile",
        *sorted((ROOT / "tests" / "fixtures" / "generate").glob("*.sh")),
    ]


def _missing(path: str) -> bool:
    if "<" in path:  # a placeholder, `tests/<room>/`
        return False
    if "*" in path:
        return not any(ROOT.glob(path))
    return not (ROOT / path).exists()


def test_every_test_path_the_docs_and_code_name_exists() -> None:
    stale = []
    for text in _texts():
        for number, line in enumerate(text.read_text(encoding="utf-8").splitlines(), 1):
            for named in NAMED.findall(line):
                path = named.rstrip(".,:;")
                if path not in USERS and _missing(path):
                    stale.append(f"{text.relative_to(ROOT)}:{number}: {path}")
    assert stale == []


def test_a_stale_path_is_found() -> None:
    # the rule above would pass vacuously if the pattern found nothing
    assert NAMED.findall("see `tests/test_gone.py` and tests/scorers/, not mytests/x") == [
        "tests/test_gone.py",
        "tests/scorers/",
    ]
    assert _missing("tests/test_gone.py") and not _missing("tests/scorers/")
