"""Each built-in scorer's one declaration (`scorers/declarations.py`) is what the scorer is, what
config knows, what its page and the README's list say, and what docs/judge-replies.md covers."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from otel_scorers.model import higher_is_worse
from otel_scorers.scorers.declarations import CONVERSATION_FACTORIES, DECLARED, RUN_FACTORIES, Declared
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.reply_schemas import reply_schemas
from otel_scorers.scorers.rules import catalogue

ROOT = Path(__file__).resolve().parent.parent.parent
ALL = [pytest.param(d, id=d.kind) for d in DECLARED]
JUDGE = Judge(JudgeConfig(model="openai/judge", api_base="http://127.0.0.1:9/v1"))


def _made(declared: Declared) -> object:
    if declared.judged:
        return declared.factory(**declared.example_args, judge=JUDGE)
    return declared.factory(**declared.example_args)


def test_each_scorer_is_declared_once_and_config_knows_each_by_its_type() -> None:
    kinds = [d.kind for d in DECLARED]
    assert len(kinds) == len(set(kinds))
    assert set(RUN_FACTORIES) | set(CONVERSATION_FACTORIES) == set(kinds)
    assert not set(RUN_FACTORIES) & set(CONVERSATION_FACTORIES)


@pytest.mark.parametrize("declared", ALL)
def test_each_declared_example_gives_every_argument_the_factory_requires(declared: Declared) -> None:
    required = {
        name
        for name, param in inspect.signature(declared.factory).parameters.items()
        if param.default is inspect.Parameter.empty
        and param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }
    assert required <= set(declared.example_args), declared.kind


@pytest.mark.parametrize("declared", ALL)
def test_a_scorer_made_from_its_example_is_what_its_declaration_says(declared: Declared) -> None:
    scorer = _made(declared)
    assert getattr(scorer, "name", declared.kind) == declared.kind
    assert higher_is_worse(scorer) == declared.higher_is_worse
    assert bool(getattr(scorer, "binary", False)) == declared.binary
    judged = getattr(scorer, "judged", scorer)  # a conversation scorer holds its judged one
    assert (getattr(judged, "rule", None) is not None) == declared.judged


@pytest.mark.parametrize("declared", ALL)
def test_each_scorer_is_on_the_page_its_declaration_names(declared: Declared) -> None:
    page = (ROOT / "docs" / declared.docs).read_text()
    named = rf"`{declared.kind}`|type: {declared.kind}\b|^# {declared.kind}:"  # in text, config, title
    assert re.search(named, page, flags=re.M), declared.docs


def _readme_row(family: str) -> set[str]:
    """The scorer names in the README's scorers-table row for `family`, asides in brackets left out."""
    for line in (ROOT / "README.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) > 2 and cells[1] == family:
            return set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cells[2])))
    raise AssertionError(f"README.md's scorers table has no row {family!r}")


@pytest.mark.parametrize(
    "family", ["quick checks", "checks of structure", "code scorers", "LLM judges", "conversations"]
)
def test_the_readme_lists_each_family_as_declared(family: str) -> None:
    assert _readme_row(family) == {d.kind for d in DECLARED if d.family == family}


_NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def _count_said(path: str, pattern: str) -> int:
    """The number a sentence of `path` spells out where `pattern`'s group is."""
    found = re.search(pattern, (ROOT / path).read_text(), flags=re.I | re.M)
    assert found, f"{path}: nothing matches {pattern!r}"
    return _NUMBERS.index(found.group(1).lower())


def test_the_counts_the_docs_spell_out_are_the_declared_ones() -> None:
    # Mastra's judged run scorers (the catalogue page) and, with them, its one judged conversation scorer.
    catalogue_page = [d.kind for d in DECLARED if d.judged and d.docs == "llm-scorers.md"]
    with_multi_turn = len(catalogue_page) + 1
    assert _count_said("README.md", r"`answer_relevancy` and (\w+) of Mastra's") == len(catalogue_page)
    assert _count_said("README.md", r"its (\w+)th, `multi_turn`") == with_multi_turn
    assert _count_said("docs/llm-scorers.md", r"^(\w+) judged scorers") == with_multi_turn
    what_they_read = (
        (ROOT / "docs" / "llm-scorers.md").read_text().split("## What they read")[1].split("\n## ")[0]
    )
    table = re.findall(r"^\| `(\w+)` \|", what_they_read, flags=re.M)
    assert table == [*table[:-1], "multi_turn"] and set(table[:-1]) == set(catalogue_page)
    assert _count_said("docs/llm-judges.md", r"Mastra's other (\w+) LLM scorers") == with_multi_turn
    assert _count_said("docs/performance.md", r"(\w+) of them bound to one run") == len(catalogue_page)


def test_the_reply_schemas_cover_every_judged_scorer() -> None:
    judged = {d.kind for d in DECLARED if d.judged}
    assert {"answer_relevancy", "rubric", "multi_turn", "role_adherence"} <= judged
    assert set(reply_schemas()) == judged


def test_a_judged_scorer_that_cannot_be_made_from_its_example_fails_the_reply_schemas() -> None:
    # rubric requires its criteria: declared without them, the page must not silently leave it out
    without_criteria = Declared("rubric", catalogue.rubric, "LLM judges", "llm-scorers.md", judged=True)
    with pytest.raises(ValueError, match=r"'rubric'.*criteria"):
        reply_schemas([without_criteria])


def test_a_scorer_declared_judged_that_asks_no_schema_fails_the_reply_schemas() -> None:
    not_judged = Declared(
        "turns", CONVERSATION_FACTORIES["turns"], "conversations", "conversations.md", judged=True
    )
    with pytest.raises(ValueError, match=r"'turns'"):
        reply_schemas([not_judged])
