"""Card numbers in text, found in linear time: the masker's `card` detector."""

from __future__ import annotations

import re
from collections.abc import Callable

from otel_scorers.scorers.judge.checksums import luhn_valid

# A run of digits, spaces and dashes (a character class the scan jumps along), then the numbers
# within it checked: a card may follow or precede another number in the same run.
_CARD = re.compile(r"(?<![0-9])(?<![0-9][ .\-])[0-9][0-9 .\-]{11,}[0-9]")  # where a run starts only
_DIGITS = re.compile(r"[0-9]+")
#: 19 digits in groups of at least 4.
_MAX_CARD_GROUPS = 4
#: Digit runs between two looks at the clock (`in_time`).
_RUNS_PER_LOOK = 256


def _always_in_time() -> None:
    pass


def cards(
    text: str, replace: Callable[[str, str], str], in_time: Callable[[], None] = _always_in_time
) -> str:
    """In each run of digit groups, the longest runs of consecutive groups (one space or dash
    between them, 4 to 6 digits each, as cards are printed) or single groups, of 13 to 19 digits
    that pass the Luhn check, from the left. `in_time()` is called every few runs and every
    1,024 groups: it raises to give up."""
    parts: list[str] = []
    done = tried = 0
    for number, run in enumerate(_CARD.finditer(text)):
        if number % _RUNS_PER_LOOK == 0:
            in_time()
        groups = [(found.start(), found.end()) for found in _DIGITS.finditer(text, run.start(), run.end())]
        first = 0
        while first < len(groups):
            tried += 1
            if tried % 1024 == 0:
                in_time()
            start = groups[first][0]
            if first == 0 and start and (text[start - 1].isalnum() or text[start - 1] in "-_"):
                first += 1
                continue
            matched = None
            # A card is at most 19 digits: at most `_MAX_CARD_GROUPS` groups of 4 or more, so the
            # numbers tried from one group are few, and a run of groups costs linear time.
            for last in range(min(len(groups) - 1, first + _MAX_CARD_GROUPS - 1), first - 1, -1):
                end = groups[last][1]
                if last > first and groups[last][0] - groups[last - 1][1] != 1:
                    continue  # two separators in a row: not one number
                if any(groups[k + 1][0] - groups[k][1] != 1 for k in range(first, last)):
                    continue
                if last > first and any(not 4 <= b - a <= 6 for a, b in groups[first : last + 1]):
                    continue  # printed cards group their digits by 4 to 6
                if end < len(text) and (text[end].isalnum() or text[end] in "_") and last == len(groups) - 1:
                    continue
                digits = "".join(text[a:b] for a, b in groups[first : last + 1])
                if 13 <= len(digits) <= 19 and luhn_valid(digits):
                    matched = last
                    break
            if matched is None:
                first += 1
                continue
            parts.append(text[done:start])
            parts.append(replace("card", text[start : groups[matched][1]]))
            done = groups[matched][1]
            first = matched + 1
    return "".join(parts) + text[done:] if parts else text
