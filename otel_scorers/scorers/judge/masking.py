"""What the judge never sees: private text masked in the judged texts before any prompt is built.

A `redact:` setting (on the judge, or on one binding) names the kinds to mask and any patterns
of the user's own. Each finding is replaced by a typed, numbered mask, stable within one score's
prompts: the same address is `[EMAIL_1]` wherever it appears, another one `[EMAIL_2]`, so the
judge can still tell "the same" from "different". What each kind finds:

- `email`: `local@domain.tld`.
- `phone`: an international number (`+` and 8 to 15 digits, spaces, dots, dashes or brackets
  between them) or a North American one (`(555) 123-4567`, `555-123-4567`, `555.123.4567`).
- `card`: 13 to 19 digits that pass the Luhn check, together or in groups of 4 to 6 split by
  single spaces, dashes or dots.
- `iban`: two letters, two check digits and 11 to 30 letters or digits (spaces allowed every
  four) whose ISO 13616 checksum (mod 97) holds; in lower or mixed case, from a country of the
  IBAN registry.
- `ip`: an IPv4 or IPv6 address that `ipaddress` accepts; an IPv4-looking number right after
  "v", "version", "release" or "build", or inside a longer dotted number, is a version, not an
  address.
- `credential`: PEM blocks, JSON Web Tokens, the token after "Bearer", and provider keys by
  their prefix (OpenAI and Anthropic `sk-`, AWS `AKIA`/`ASIA`, GitHub `ghp_` and its kin, GitLab
  `glpat-`, Slack `xox?-`, Google `AIza`, Stripe `sk_live_`/`rk_live_`).
- `patterns`: the user's own, by name (`{employee_id: 'EMP-\\d{6}'}` masks as `[EMPLOYEE_ID_1]`),
  run by the `regex` module with a time limit: a pattern that cannot finish in time fails the
  score (nothing is sent), it never sends the text unmasked.

Before any of them, the text is undisguised (`disguise.undisguised`: compatibility forms,
invisible characters, look-alike letters, percent-encoding), and sent so. These are patterns,
not understanding: a name, a street address, or a number written in words
passes through. docs/redaction.md says what is and is not caught.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import regex
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from otel_scorers.scorers.judge.card_numbers import cards
from otel_scorers.scorers.judge.checksums import iban, iban_valid, luhn_valid
from otel_scorers.scorers.judge.disguise import undisguised

Kind = Literal["email", "phone", "card", "iban", "ip", "credential"]
__all__ = [
    "KINDS",
    "Masker",
    "MaskingError",
    "RedactConfig",
    "Redacting",
    "iban_valid",
    "luhn_valid",
    "masker",
]
KINDS: tuple[Kind, ...] = ("credential", "email", "iban", "card", "ip", "phone")
#: Longest one user pattern may search one text before the score fails instead.
PATTERN_TIMEOUT_S = 0.5
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")


class RedactConfig(BaseModel):
    """The `redact:` setting: `kinds` to mask (all six by default), and `patterns` of the user's
    own, name to regular expression. `redact: true` masks every kind; `redact: false` (on a
    binding) sends its text as it is, whatever the judge's setting says."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kinds: tuple[Kind, ...] = KINDS
    patterns: dict[str, str] = Field(default_factory=dict)
    _compiled: dict[str, regex.Pattern[str]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        self._compiled = {name: regex.compile(p, regex.VERSION0) for name, p in self.patterns.items()}

    @model_validator(mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        if value is True:
            return {}
        if value is False:
            return {"kinds": ()}
        return value

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for name, pattern in patterns.items():
            if not _NAME.match(name):
                raise ValueError(
                    f"pattern name {name!r} should be a letter then letters, digits or _ (at most 40)"
                )
            if name.upper() in {kind.upper() for kind in KINDS}:
                raise ValueError(f"pattern name {name!r} is a built-in kind; list it in kinds instead")
            try:
                regex.compile(pattern, regex.VERSION0)
            except regex.error as exc:
                raise ValueError(f"pattern {name!r}: invalid regular expression {pattern!r}: {exc}") from None
        return patterns

    @property
    def active(self) -> bool:
        return bool(self.kinds or self.patterns)


@runtime_checkable
class Redacting(Protocol):
    """A scorer that sends run text to a judge, and so takes a binding's own `redact:`."""

    def with_redaction(self, redaction: RedactConfig) -> Any: ...


class MaskingError(Exception):
    """Masking that could not finish in time (a user pattern's, or a score's texts'): the text
    is not sent."""


Replace = Callable[[str, str], str]  # (kind, found text) -> its mask
Detector = Callable[[str, Replace], str]


@dataclass
class Masker:
    """One score's masking: the masks handed out so far (stable: the same text, the same mask)
    and how many findings of each kind were masked."""

    config: RedactConfig
    counts: dict[str, int] = field(default_factory=dict)
    _masks: dict[tuple[str, str], str] = field(default_factory=dict)
    _numbers: dict[str, int] = field(default_factory=dict)

    _detectors: tuple[Detector, ...] = ()
    _patterns: tuple[tuple[str, regex.Pattern[str]], ...] = ()
    #: When `mask_blocks` gives up (`time.monotonic()`), and how long it had; None: never.
    _deadline: float | None = None
    _timeout_s: float = 0.0

    def __post_init__(self) -> None:
        # The card detector is the one whose work grows with the digit groups: it looks at the clock.
        card = functools.partial(cards, in_time=self._in_time)
        self._detectors = tuple(
            card if kind == "card" else _DETECTORS[kind] for kind in KINDS if kind in self.config.kinds
        )
        self._patterns = tuple(self.config._compiled.items())

    def mask(self, text: str) -> str:
        if not text:
            return text
        text = undisguised(text)  # full-width, invisible, look-alike and percent-encoded forms
        replace = self._replace
        for detect in self._detectors:
            self._in_time()
            text = detect(text, replace)
        for name, pattern in self._patterns:
            text = _user_pattern(name, pattern, text, replace)
        return text

    def mask_blocks(
        self, data: Iterable[tuple[str, str]], timeout_s: float | None = None
    ) -> tuple[tuple[str, str], ...]:
        """Each block's text masked; with `timeout_s`, a `MaskingError` once that is spent."""
        if timeout_s is None:
            return tuple((tag, self.mask(text)) for tag, text in data)
        self._deadline, self._timeout_s = time.monotonic() + timeout_s, timeout_s
        try:
            return tuple((tag, self.mask(text)) for tag, text in data)
        finally:
            self._deadline = None

    def _in_time(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise MaskingError(
                f"masking the judged texts did not finish within {self._timeout_s:g}s; "
                "nothing was sent to the judge"
            )

    def _replace(self, kind: str, found: str) -> str:
        label = kind.upper()
        self.counts[kind] = self.counts.get(kind, 0) + 1
        key = (label, found)
        mask = self._masks.get(key)
        if mask is None:
            number = self._numbers[label] = self._numbers.get(label, 0) + 1
            mask = self._masks[key] = f"[{label}_{number}]"
        return mask


def masker(config: RedactConfig | None) -> Masker | None:
    """A fresh `Masker` for one score, or None when nothing is to be masked."""
    return Masker(config) if config is not None and config.active else None


# ---- the detectors --------------------------------------------------------------------------


def _simple(kind: str, pattern: regex.Pattern[str], group: int = 0) -> Detector:
    def detect(text: str, replace: Replace) -> str:
        def one(match: regex.Match[str]) -> str:
            whole = match.group(0)
            if not group:
                return replace(kind, whole)
            start, end = match.span(group)
            offset = match.start()
            return whole[: start - offset] + replace(kind, match.group(group)) + whole[end - offset :]

        return pattern.sub(one, text)

    return detect


def _checked(
    kind: str, pattern: re.Pattern[str] | regex.Pattern[str], valid: Callable[[Any, str], bool]
) -> Detector:
    def detect(text: str, replace: Replace) -> str:
        found: str = pattern.sub(
            lambda match: replace(kind, match.group(0)) if valid(match, text) else match.group(0), text
        )
        return found

    return detect


# An address is found from its `@` (a literal the scan jumps to), the local part read backwards.
_DOMAIN = regex.compile(r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
# Candidates by a character class the scan jumps along, the numbers then found within each.
_PHONE_CANDIDATE = re.compile(r"[+(0-9][0-9 .\-()]{8,}[0-9]")
_PHONE = regex.compile(
    r"\+\d(?:[ .\-()]{0,2}\d){7,14}"  # international
    r"|\(\d{3}\)[ .\-]?\d{3}[ .\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4}"  # North American
)
_PHONE_WITHIN = regex.compile(rf"(?<![\w+])(?:{_PHONE.pattern})(?![\w])")
_IBAN = regex.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b")
_IPV4 = regex.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = regex.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])"
)
_VERSION_BEFORE = regex.compile(r"(?:\bv|\bversion|\brelease|\bbuild|\brev)[ :=]?$", regex.IGNORECASE)
_PEM = regex.compile(r"-----BEGIN [A-Z0-9 ]{1,40}-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)", regex.DOTALL)
_JWT = regex.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}")
_BEARER = regex.compile(r"\b[Bb]earer\s+([A-Za-z0-9._~+/\-]{12,}=*)")
#: What every provider key below starts with: a text without any of them is not searched.
_KEY_PREFIXES = (
    "sk-",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "AIza",
    "k_live_",
)
_KEYS = regex.compile(
    r"(?<![\w-])(?:sk-(?:proj-|ant-(?:api\d\d-)?|svcacct-)?[A-Za-z0-9_\-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|[sr]k_live_[0-9A-Za-z]{20,})"
)


def _ibans(text: str, replace: Replace) -> str:
    """Each IBAN-shaped run, or the longest of its prefixes ending before a space, whose checksum
    holds (a run in lower case may go on into the next words)."""

    def one(match: regex.Match[str]) -> str:
        found = match.group(0)
        ends = [len(found)] + [at for at in range(len(found) - 1, 14, -1) if found[at] == " "]
        for end in ends:
            if iban(found[:end]):
                return replace("iban", found[:end]) + found[end:]
        return found

    return _IBAN.sub(one, text)


def _phones(text: str, replace: Replace) -> str:
    """The numbers within each run of digits, spaces and separators: searched in the whole text
    (`pos`, `endpos`), so that what comes before and after a number still decides."""
    parts: list[str] = []
    done = 0
    for candidate in _PHONE_CANDIDATE.finditer(text):
        for found in _PHONE_WITHIN.finditer(text, candidate.start(), candidate.end()):
            end = found.end()
            if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                continue
            parts.append(text[done : found.start()])
            parts.append(replace("phone", found.group(0)))
            done = end
    return "".join(parts) + text[done:] if parts else text


def _ipv4(match: regex.Match[str], text: str) -> bool:
    if _VERSION_BEFORE.search(text[max(0, match.start() - 10) : match.start()]):
        return False
    try:
        ipaddress.IPv4Address(match.group(0))
    except ValueError:
        return False
    return True


def _ipv6(match: regex.Match[str], _text: str) -> bool:
    found = match.group(0)
    if found.count(":") < 2 or not any(char.isalnum() for char in found):
        return False
    try:
        ipaddress.IPv6Address(found)
    except ValueError:
        return False
    return True


def _credentials(text: str, replace: Replace) -> str:
    if "-----BEGIN " in text:
        text = _pem(text, replace)
    if "eyJ" in text:
        text = _jwt(text, replace)
    if "earer" in text or "EARER" in text:
        text = _bearer(text, replace)
    if any(prefix in text for prefix in _KEY_PREFIXES):
        text = _keys(text, replace)
    return text


def _emails(text: str, replace: Replace) -> str:
    if "@" not in text:
        return text
    parts: list[str] = []
    done = 0
    for domain in _DOMAIN.finditer(text):
        at = domain.start()
        if at < done:
            continue
        start = at
        while start > max(done, at - 64) and text[start - 1] in _LOCAL_CHARS:
            start -= 1
        if start == at or (start > done and text[start - 1] in _LOCAL_CHARS):
            continue  # no local part, or one longer than an address allows
        parts.append(text[done:start])
        parts.append(replace("email", text[start : domain.end()]))
        done = domain.end()
    return "".join(parts) + text[done:] if parts else text


def _ip(text: str, replace: Replace) -> str:
    return _ipv6_detect(_ipv4_detect(text, replace), replace)


_pem = _simple("credential", _PEM)
_jwt = _simple("credential", _JWT)
_bearer = _simple("credential", _BEARER, group=1)
_keys = _simple("credential", _KEYS)
_ipv4_detect = _checked("ip", _IPV4, _ipv4)
_ipv6_detect = _checked("ip", _IPV6, _ipv6)

_DETECTORS: Mapping[str, Detector] = {
    "credential": _credentials,
    "email": _emails,
    "iban": _ibans,
    "card": cards,
    "ip": _ip,
    "phone": _phones,
}


def _user_pattern(name: str, pattern: regex.Pattern[str], text: str, replace: Replace) -> str:
    try:
        return pattern.sub(lambda match: replace(name, match.group(0)), text, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        raise MaskingError(
            f"redact pattern {name!r} did not finish within {PATTERN_TIMEOUT_S:g}s on a "
            f"{len(text)}-character text; nothing was sent to the judge"
        ) from None
