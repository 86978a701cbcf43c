"""`completeness`: the share of the input's elements that the output covers.

Mastra takes the elements from the `compromise` NLP library (14.x): nouns, verbs turned into
their infinitive (which rewrites the verbs in the text itself), topics and all terms, each
accent-folded, lower-cased and split on non-alphanumerics. Every term is in, so the elements
are the text's words with its verb phrases as `toInfinitive()` leaves them. This reads each
sentence's verb phrases the same way without compromise's tagger: auxiliaries before a
participle or gerund drop out (`has sold` → sell, `was planning` → plan, `is going to lead` →
lead), other forms of be, do and have become `be`, `do`, `have`; a negation becomes `do`/`does`
`not` and the verb (`didn't carry` → does not carry, after a singular subject); a modal drops
out before its verb and stays before its subject (`Can you …`); a contraction's text after a
pronoun stays (`I'm` → i, m); verbs go to their infinitive (irregular ones by the table in
`verb_forms`, regular ones by rule) where a verb stands, never after a determiner (`the
meeting`). `docs/code-scorers.md` gives the agreement with Mastra and where it differs.
"""

from __future__ import annotations

import re
import unicodedata

from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check
from otel_scorers.scorers.code import verb_forms

_NEEDS_BOTH = frozenset({"input", "output"})
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_COMBINING = re.compile("[\u0300-\u036f]")
_SENTENCE_END = re.compile(r"[.?!]+(?=\s|$)")
_MODALS = frozenset({"can", "could", "will", "would", "may", "might", "shall", "should", "must"})
# An auxiliary or modal with n't: compromise reads the phrase as do/does + not + the verb.
_NEGATABLE = frozenset(
    {"don", "doesn", "didn", "isn", "aren", "wasn", "weren", "haven", "hasn", "hadn", "can", "couldn"}
    | {"won", "wouldn", "shouldn", "mustn", "needn", "mightn", "ain"}
)
_BE = frozenset({"is", "are", "was", "were", "am", "be", "been", "being"})
#: A negated auxiliary before its subject ("Why didn't the UN ...", "..., hasn't she?"), which
#: compromise keeps beside the does not it reads.
_NEGATED = {
    **dict.fromkeys(("don", "doesn", "didn"), "do"),
    **dict.fromkeys(("isn", "aren", "wasn", "weren", "ain"), "be"),
    **dict.fromkeys(("hasn", "haven", "hadn"), "have"),
    **{"can": "can", "couldn": "could", "won": "will", "wouldn": "would", "shouldn": "should"},
    **{"mustn": "must", "needn": "need", "mightn": "might"},
}
_HAVE = frozenset({"has", "have", "had"})
_DO = frozenset({"do", "does", "did", "done", "doing"})
_PRONOUNS = frozenset({"i", "you", "we", "they", "he", "she", "it"})
# A modal before its subject asks a question ("can you ..."); compromise keeps it there.
_SUBJECTS = _PRONOUNS | {"there", "this", "that"}
_PLURAL = frozenset({"i", "you", "we", "they", "children", "people", "men", "women"})
_QUESTION_WORDS = frozenset(
    {"what", "why", "how", "when", "where", "who", "whom", "whose", "which", "many", "much"}
)
# What precedes a noun, not a verb ("the meeting", "my books", "London's museums").
_DETERMINERS = frozenset(
    {"the", "a", "an", "my", "your", "his", "her", "its", "our", "their", "this", "that", "these", "those"}
    | {"some", "any", "no", "every", "each", "s"}
)
_SUBJECT_STARTS = _PRONOUNS | _DETERMINERS
# Before a participle, make it an adjective ("well-known", "self-made").
_ADJECTIVE_MAKERS = frozenset({"well", "self", "best", "ill", "home", "hand", "man"})
#: A pronoun's contractions (I'm, you're, she's, we've, I'd, they'll), split off by the tokenizer.
_CONTRACTIONS = frozenset({"m", "re", "s", "ve", "d", "ll"})
#: The words `_function_word` may read otherwise than as any word; the rest skip it.
_FUNCTION_WORDS = _NEGATABLE | _BE | _HAVE | _DO | _MODALS | _CONTRACTIONS | {"going"}
#: How a function word reads: its elements, whether the verb comes next, whether a question now
#: awaits its verb, and whether it takes the next word too.
_Reading = tuple[tuple[str, ...], bool, bool, bool]
#: An auxiliary or modal before its verb: no element of its own, the verb after it stands for it.
_AUXILIARY: _Reading = ((), True, False, False)


def _fold(text: str) -> str:
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower()


def _verb_form(word: str) -> bool:
    """A participle or gerund, which makes the be or have before it an auxiliary."""
    return word.endswith(("ing", "ed", "en")) or (word in verb_forms.FORMS and word not in _BE | _HAVE)


def _plural_subject(words: list[str], index: int) -> bool:
    """Whether the words before `index` end in a plural subject (`do not`, not `does not`)."""
    if index == 0:
        return True  # no subject: an imperative
    before = words[index - 1]
    if before in _PLURAL or "and" in words[max(0, index - 3) : index]:
        return True
    return len(before) > 3 and before.endswith("s") and not before.endswith(("ss", "us", "is"))


def _sentence_elements(words: list[str]) -> list[str]:
    """A sentence's words with its verb phrases as compromise's `toInfinitive()` leaves them:
    auxiliaries dropped, negations as do/does not, verbs in their infinitive, and a modal kept
    only before its subject."""
    found: list[str] = []
    verb_next = False  # after an auxiliary, a modal or a negation: the verb itself
    awaiting_verb = False  # in a question whose auxiliary comes before the subject
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        before = words[index - 1] if index else None
        after = words[index + 1] if index + 1 < len(words) else None
        was_verb_next, verb_next = verb_next, False
        if word in _FUNCTION_WORDS:
            reading = _function_word(words, index, before, after, was_verb_next)
            if reading is not None:
                elements, verb_next, asks, skip = reading
                found += elements
                awaiting_verb = awaiting_verb or asks
                continue
        if before not in _DETERMINERS and before not in _ADJECTIVE_MAKERS:
            word = _infinitive(word, before, was_verb_next, awaiting_verb) or word
        found.append(word)
        if awaiting_verb and found[-1] != words[index]:
            awaiting_verb = False  # the question's verb was found
    return found


def _function_word(
    words: list[str], index: int, before: str | None, after: str | None, verb_stands_here: bool
) -> _Reading | None:
    """How the auxiliary, modal, negation or contraction at `index` reads, or None when it reads
    as any other word here. `verb_stands_here`: right after an auxiliary, a modal or a negation."""
    word = words[index]
    if after == "t" and word in _NEGATABLE:
        return _negation(words, index, before)
    if before in _QUESTION_WORDS and word == "s":  # what's, where's: is
        return _AUXILIARY if after is not None and _verb_form(after) else (("be",), False, False, False)
    if (
        verb_stands_here
        and word == "going"
        and after == "to"
        and index + 2 < len(words)
        and words[index + 2] in verb_forms.KNOWN_BASES
    ):
        return (), True, False, True  # "is going to lead": lead (but "going to Paris" goes)
    if before in _SUBJECTS and word in _CONTRACTIONS:
        # The contraction's text stays, in the pronoun's noun phrase.
        if (after is not None and _verb_form(after)) or word in ("d", "ll"):
            return (word,), True, False, False
        return (word, "be" if word in ("m", "re", "s") else "have"), False, False, False
    if word in _BE or word in _HAVE:
        if after is not None and _verb_form(after):
            return _AUXILIARY  # the verb after it stands for the phrase
        asks = index == 0 or before in _QUESTION_WORDS  # "Is the author coming?"
        return ("be" if word in _BE else "have",), False, asks, False
    if word in _DO:
        return ("do",), False, False, False
    if word in _MODALS:
        if index == 0 or before in _QUESTION_WORDS or after in _SUBJECTS or after is None:
            return (word,), False, False, False
        return _AUXILIARY
    return None


def _negation(words: list[str], index: int, before: str | None) -> _Reading:
    """An auxiliary or modal whose n't (`t`) follows: do/does not before its verb, or, before its
    subject, the auxiliary kept beside does not and the question's verb awaited."""
    subject_next = index + 2 < len(words) and words[index + 2] in _SUBJECT_STARTS
    if subject_next and (index == 0 or before in _QUESTION_WORDS or index + 3 == len(words)):
        # "Why didn't the UN ...", "Can't you ...", "..., hasn't she?": the auxiliary stays
        return (_NEGATED.get(words[index], "do"), "does", "not"), False, True, True
    return ("do" if _plural_subject(words, index) else "does", "not"), True, False, True


def _infinitive(word: str, before: str | None, verb_stands_here: bool, awaiting_verb: bool) -> str | None:
    """`word` in the infinitive where it reads as a verb form, else None. `verb_stands_here`:
    right after an auxiliary, a modal or a negation; `awaiting_verb`: in a question whose
    auxiliary came before the subject."""
    base = verb_forms.FORMS.get(word)
    if base is not None or word[-1] not in "sdgn":
        return base  # only -s, -ed, -ing and -en forms change by rule
    if verb_stands_here or before in _PRONOUNS:
        return verb_forms.infinitive(word) or verb_forms.third_person(word)
    if word.endswith("ed") or (awaiting_verb and word.endswith(("ing", "en"))):
        found = verb_forms.infinitive(word)  # a regular past: compromise reads a verb
        if found is not None:
            return found
    third = verb_forms.third_person(word)
    if third is not None and (third in verb_forms.KNOWN_BASES or before in ("he", "she", "it")):
        return third
    return None


def elements(text: str) -> list[str]:
    """The distinct elements of `text`, in order of first appearance."""
    found: dict[str, None] = {}
    for sentence in _SENTENCE_END.split(_fold(text)):
        for element in _sentence_elements(_NON_ALNUM.sub(" ", sentence).split()):
            found[element] = None
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
