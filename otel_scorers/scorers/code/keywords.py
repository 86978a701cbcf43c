"""`keyword_coverage`: the share of the input's keywords that the output uses.

Keywords are extracted as the `keyword-extractor` package (0.0.28) does for English, the way
Mastra calls it: HTML tags stripped, words split on whitespace, punctuation and surrounding
quotes removed, all-digit words dropped, lower-cased, SMART stop words dropped, duplicates removed.
"""

from __future__ import annotations

import functools
import importlib.resources
import re

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check

_NEEDS_BOTH = frozenset({"input", "output"})
_HTML_TAG = re.compile(r"<[^>]+>")
# JavaScript's \s, which is what the extractor splits on.
_JS_WHITESPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_JS_TRIM = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_PUNCTUATION = re.compile("\\.|,|;|!|\\?|\\(|\\)|:|\"|^'|'\\Z|\u201c|\u201d|\u2018|\u2019")
_URL = re.compile(r"https?://")
_DIGITS = re.compile(r"[0-9]+")


@functools.cache
def stop_words() -> frozenset[str]:
    text = importlib.resources.files(__package__).joinpath("data/smart_stopwords_en.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def _without_tags(text: str) -> str:
    """`text` with `<...>` tags removed. Text after the last `>` holds no tag; cutting it off
    first keeps the search linear (searching a run of `<` without a `>` from each is quadratic:
    seconds on 40,000 characters)."""
    end = text.rfind(">") + 1
    return _HTML_TAG.sub("", text[:end]) + text[end:] if end else text


def keywords(text: str) -> list[str]:
    """The distinct keywords of `text`, in order of first appearance."""
    text = _without_tags(text).strip(_JS_TRIM)
    if not text:
        return []
    stops = stop_words()
    found: dict[str, None] = {}
    for word in _JS_WHITESPACE.split(text):
        if not _URL.search(word):
            word = _PUNCTUATION.sub("", word)
            if len(word) == 1:
                word = word.strip("_@&#")
            if _DIGITS.fullmatch(word):
                word = ""
        lowered = word.lower()
        if word and lowered not in stops:
            found[lowered if not _URL.search(word) else word] = None
    return list(found)


def _listing(words: list[str], limit: int = 8) -> str:
    shown = ", ".join(words[:limit])
    return shown + (f", … ({len(words)} in all)" if len(words) > limit else "")


def keyword_coverage() -> Check:
    """Share of the input's keywords found among the output's; 1 when the input has none."""

    def score(run: AgentRun) -> Score:
        wanted = keywords(run.input or "")
        if not wanted:
            return Score("keyword_coverage", value=1.0, reason="the input has no keywords")
        present = set(keywords(run.output or ""))
        missing = [word for word in wanted if word not in present]
        value = (len(wanted) - len(missing)) / len(wanted)
        if not missing:
            reason = f"output uses all {len(wanted)} keywords of the input"
        else:
            reason = f"{len(wanted) - len(missing)} of {len(wanted)} input keywords in the output; missing: {_listing(missing)}"
        return Score("keyword_coverage", value=value, reason=reason)

    return Check("keyword_coverage", score, _NEEDS_BOTH, binary=False)
