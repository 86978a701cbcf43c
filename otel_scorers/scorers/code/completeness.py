"""`completeness`: the share of the input's elements that the output covers.

Mastra takes the elements from the `compromise` NLP library (14.x): nouns, verbs turned into
their infinitive (which rewrites the verbs in the text itself), topics and all terms, each
accent-folded, lower-cased and split on non-alphanumerics. Every term is in, so the elements
are the text's words with its verb phrases in the infinitive; this approximates compromise's
verb handling by its most frequent effects on short words, where coverage needs equality:
forms of be, do and have become `be`, `do` and `have`, contractions split (`don't` → do, not),
and modals before a verb drop out (not before their subject, as in a question). Longer words need no lemma: an inflected form contains its
stem, and coverage accepts containment. `docs/code-scorers.md` lists where this differs.
"""

from __future__ import annotations

import re
import unicodedata

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check

_NEEDS_BOTH = frozenset({"input", "output"})
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_COMBINING = re.compile("[\u0300-\u036f]")
_LEMMAS = {
    **dict.fromkeys(("is", "are", "was", "were", "am", "m", "been", "being", "re"), "be"),
    **dict.fromkeys(("does", "did", "doing", "done", "don"), "do"),
    **dict.fromkeys(("has", "had", "having", "ve"), "have"),
}
_MODALS = frozenset({"can", "could", "will", "would", "may", "might", "shall", "should", "must", "ll"})
_CONTRACTION_NOT = frozenset({"t"})
# A modal before its subject asks a question ("can you ..."); compromise keeps it there.
_SUBJECTS = frozenset({"i", "you", "we", "they", "he", "she", "it", "there", "this", "that"})


def _fold(text: str) -> str:
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower()


def elements(text: str) -> list[str]:
    """The distinct elements of `text`, in order of first appearance."""
    words = _NON_ALNUM.sub(" ", _fold(text)).split()
    found: dict[str, None] = {}
    for index, word in enumerate(words):
        if word in _CONTRACTION_NOT and index > 0:
            word = "not"
        elif word in _MODALS and index + 1 < len(words) and words[index + 1] not in _SUBJECTS:
            continue
        found[_LEMMAS.get(word, word)] = None
    return list(found)


def _covered(element: str, others: list[str]) -> bool:
    for other in others:
        if len(element) <= 3:
            if element == other:
                return True
            continue
        longer, shorter = (element, other) if len(element) > len(other) else (other, element)
        if shorter in longer and len(shorter) / len(longer) > 0.6:
            return True
    return False


def completeness() -> Check:
    """Share of the input's elements covered by the output's (see the module docstring)."""

    def score(run: AgentRun) -> Score:
        wanted = elements((run.input or "").strip())
        given = elements((run.output or "").strip())
        if not wanted:
            value = 1.0 if not given else 0.0
            return Score("completeness", value=value, reason="the input has no words to cover")
        missing = [element for element in wanted if not _covered(element, given)]
        value = (len(wanted) - len(missing)) / len(wanted)
        if missing:
            shown = ", ".join(missing[:8]) + (f", … ({len(missing)} in all)" if len(missing) > 8 else "")
            reason = f"output covers {len(wanted) - len(missing)} of {len(wanted)} input elements; missing: {shown}"
        else:
            reason = f"output covers all {len(wanted)} input elements"
        return Score("completeness", value=value, reason=reason)

    return Check("completeness", score, _NEEDS_BOTH, binary=False)
