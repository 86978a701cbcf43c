"""Text undisguised before the masker matches it: what makes private data look unlike itself to a
pattern while a person (or a model) still reads it as it is.

- Compatibility forms become their plain ones (Unicode NFKC): full-width digits and letters
  (U+FF14 for `4`, U+FF20 for `@`), the odd spaces (no-break, thin, ideographic) become a space, ligatures and
  superscripts their letters and digits.
- Invisible characters are taken out: zero-width space, non-joiner and joiner, word joiner,
  byte-order mark, soft hyphen, Mongolian vowel separator.
- Letters that look like Latin ones (Cyrillic a, e, o, p, c, Greek o, v...) become those
  letters in a word that mixes them with Latin letters (`example.com` with a Cyrillic a, U+0430);
  a word wholly in another script is left alone.
- Percent-encoded letters, digits and the characters of addresses (`%40` for `@`, `%2E` for `.`)
  are decoded.

The text the judge receives is the undisguised one, masked: it reads the same to a model. What
this still misses is in docs/redaction.md.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters a person does not see.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"))
#: Look-alikes of Latin letters in other scripts (Cyrillic, Greek, and a few others), as the
#: Latin letter each is taken for.
_CONFUSABLE = str.maketrans(
    "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХІЈЅԜοαρτνικχυΑΒΕΖΗΙΚΜΝΟΡΤΥΧɑɡ",
    "aeopcyxijsdqwhlABEKMHOPCTXIJSWoaptvikxuABEZHIKMNOPTYXag",
)
_CONFUSABLE_CHARS = frozenset(chr(code) for code in _CONFUSABLE)
_WORD = re.compile(r"\S+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
#: What a percent escape is decoded to when it stands for one of these.
_DECODED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@._+-")


def undisguised(text: str) -> str:
    """`text` with compatibility forms, invisible characters, mixed-script look-alikes and
    percent-encoded address characters made plain; linear in its length."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
        if not text.isascii():
            text = _WORD.sub(_latin_word, text)
    if "%" in text:
        text = _PERCENT.sub(_percent, text)
    return text


def _latin_word(match: re.Match[str]) -> str:
    word = match.group(0)
    if word.isascii() or _ASCII_LETTER.search(word) is None or _CONFUSABLE_CHARS.isdisjoint(word):
        return word
    return word.translate(_CONFUSABLE)


def _percent(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _DECODED else match.group(0)
