"""The values a judge's reply may hold, as annotated types for the rules' reply models.

A reply is read exactly: a verdict outside its set (a model that copied the prompt's
`"yes|unsure|no"`, or wrote `"maybe"`) or a sub-score that is not a finite number in [0, 1]
makes the reply invalid (`judge_invalid_response`, after one repair round), never a score.
Verdicts are read with case and surrounding spaces ignored (`" Yes "` is `"yes"`); nothing else
is forgiven. Each type carries its constraint into the model's JSON schema (an `enum`,
`minimum`/`maximum`), so the schema a judge is given says what will be accepted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BeforeValidator, Field


def _spoken(value: Any) -> Any:
    """A verdict as written, case and surrounding spaces aside; anything not text is left for
    the enumeration to refuse."""
    return value.strip().lower() if isinstance(value, str) else value


_SPOKEN = BeforeValidator(_spoken)

# Enumerations list the verdict a rule counts first.
YesNo = Annotated[Literal["yes", "no"], _SPOKEN]
YesUnsureNo = Annotated[Literal["yes", "unsure", "no"], _SPOKEN]
#: How relevant a context item is to the question (context_relevance).
Relevance = Annotated[Literal["high", "medium", "low", "none"], _SPOKEN]
#: How much noise in the question changed the answer, per dimension (noise_sensitivity).
Impact = Annotated[Literal["none", "minimal", "moderate", "significant", "severe"], _SPOKEN]
#: How the answer carries a unit of the reference answer (answer_similarity).
MatchKind = Annotated[Literal["exact", "semantic", "partial", "missing"], _SPOKEN]

#: A sub-score: a finite number from 0 to 1 (an integer is one; `true` and `"0.5"` are not).
UnitInterval = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
#: The number of a numbered item in the prompt (context_1, criterion_2...): an integer from 1.
Ordinal = Annotated[int, Field(strict=True, ge=1)]


def allowed(kind: Any) -> tuple[str, ...]:
    """The values an enumeration above accepts, in order: `allowed(YesNo) == ("yes", "no")`."""
    literal = get_args(kind)[0]
    return tuple(str(value) for value in get_args(literal))


def choices(kind: Any) -> str:
    """The values as a prompt's reply format writes them: `"yes|unsure|no"`."""
    return "|".join(allowed(kind))
