"""The framework table (docs/frameworks.md) lists every fixture corpus with the versions its generator wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
TRACES = ROOT / "tests" / "fixtures" / "traces"
CORPORA = sorted(path for path in TRACES.iterdir() if path.is_dir())
#: Packages every corpus has and the table leaves out.
LEFT_OUT = {"opentelemetry-sdk", "opentelemetry-api", "@opentelemetry/sdk-trace-base"}


def table_rows() -> dict[str, list[str]]:
    """The framework table's rows by their fixtures column."""
    text = (ROOT / "docs" / "frameworks.md").read_text()
    section = text.split("## Frameworks read right", 1)[1].split("\n#", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[2].startswith("`"):
            rows[cells[2].strip("`")] = cells
    return rows


@pytest.mark.parametrize("corpus", CORPORA, ids=lambda path: path.name)
def test_the_readme_lists_the_corpus_with_its_versions(corpus: Path) -> None:
    row = table_rows().get(corpus.name)
    assert row is not None, f"the framework table has no row for {corpus.name}"
    truths = sorted(corpus.glob("*.truth.json"))
    assert row[3] == str(len(truths))
    versions = json.loads(truths[0].read_text())["versions"]
    listed = {item.strip() for item in row[4].split(",")}
    assert {f"{name} {version}" for name, version in versions.items() if name not in LEFT_OUT} == listed


def test_the_readme_lists_no_corpus_that_is_not_there() -> None:
    assert set(table_rows()) == {corpus.name for corpus in CORPORA}
