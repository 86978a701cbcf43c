"""Attribute JSON decoded within `MAX_DECODED_DEPTH` levels: deeper stays text, whatever brackets
its strings hold, and every document within the bound decodes as orjson decodes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_scorers.conventions.formats.bounded_json import MAX_DECODED_DEPTH, TooDeep, loads


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(item) for item in value), default=0)
    return 0


def wrapped(value: Any, levels: int, kinds: list[bool]) -> Any:
    for level in range(levels):
        value = {"k": value, "s": "]]}{"} if kinds[level % len(kinds)] else [value, "[{"]
    return value


# orjson decodes integers past 64 bits as floats (docs/limits.md): the bound is the depth, not them.
leaves = st.none() | st.integers(-(2**63), 2**64 - 1) | st.text(alphabet='[]{}"a\\ é', max_size=6)
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    core=documents,
    levels=st.sampled_from((0, 1, 40, 62, 63, 64, 65, 66, 100, 300)),
    kinds=st.lists(st.booleans(), min_size=1, max_size=3),
    as_bytes=st.booleans(),
)
def test_a_document_deeper_than_the_bound_is_refused_and_any_other_decoded(
    core: Any, levels: int, kinds: list[bool], as_bytes: bool
) -> None:
    document = wrapped(core, levels, kinds)
    data = json.dumps(document, ensure_ascii=False).encode()
    text: str | bytes = data if as_bytes else data.decode()
    if depth(document) > MAX_DECODED_DEPTH:
        with pytest.raises(TooDeep):
            loads(text)
    else:
        assert loads(text) == document
