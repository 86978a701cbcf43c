"""Text written for a person to read: counts with their nouns, long text cut to a size that says
what was cut, and untrusted text made safe to show on a terminal.

Trace content, file contents and configuration keys reach the command line's output, console
score lines and logs. A terminal acts on some characters instead of showing them: C0 controls
(ESC starts sequences that retitle, clear or rewrite the screen), DEL, C1 controls (U+009B is a
one-character CSI, U+0085 a line break), the line and paragraph separators U+2028 and U+2029, and
the bidirectional controls (U+202E turns the rest of the line around, so it reads as something
else). `printable` writes each of them as its `\\uXXXX` escape, the form JSON reads too.
"""

from __future__ import annotations

import re

#: Other than C0 and C1 (and DEL between them): Arabic letter mark, left-to-right and right-to-left
#: marks, line and paragraph separators, embeddings and overrides, isolates.
_BIDI_AND_SEPARATORS = "\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_SEPARATORS}]")
_CONTROL_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI_AND_SEPARATORS}]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control and bidirectional formatting character escaped (`\\u001b`);
    with `newlines`, a line feed is kept, for a message of several lines."""
    pattern = _CONTROL_BUT_NEWLINE if newlines else _CONTROL
    return pattern.sub(_escaped, text)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 run`, `2 runs`: the count and its noun, plural unless the count is one."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def cut(text: str, limit: int) -> str:
    """`text` when it is at most `limit` characters, else its first ones and how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"
