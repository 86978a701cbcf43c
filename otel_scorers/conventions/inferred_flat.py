"""Records flattened into keys, for an inferred vocabulary (`inferred.py`).

Some frameworks write a span's input or output not as one value but as one key per field, under
a key of its own beside the kind key: `acme_inputs.city`, `acme_inputs.date`, `acme_outputs.result`.
Where no single key under the kind key's prefix holds a part, the keys that start with
`<prefix><part's word>.` (`inputs`, `outputs`...) hold it as one record, read as an object keyed by
the rest of each key (the description's `attributes_under` source).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: The words naming each part when it is flattened into keys under `<prefix><word>.`.
_WORDS: dict[str, tuple[str, ...]] = {
    "input": ("inputs", "input"),
    "output": ("outputs", "output"),
    "arguments": ("inputs", "input", "arguments", "args"),
    "result": ("outputs", "output", "result"),
}


def preferred_source(
    found: str | None, whole_tail: bool, under: Iterable[str], keys: Iterable[str], part: str
) -> dict[str, Any] | None:
    """The source of `part`: the key `found` under the prefix (`whole_tail`: its whole tail names the
    part, `acme.input.value`), else the record flattened into keys, when one holds it; a key found
    only by its last part inside that record (`acme_inputs.request`, one argument named `request`)
    is one field of the record, not the part."""
    flat = flattened_source(under, keys, part)
    if flat is not None and (
        found is None or (not whole_tail and found.startswith(flat["attributes_under"]))
    ):
        return flat
    return {"attribute": found, "json_value": True} if found is not None else None


def flattened_source(under: Iterable[str], keys: Iterable[str], part: str) -> dict[str, Any] | None:
    """The source of `part` as a record flattened into the keys under the longest prefix in `under`
    that holds one (`{"attributes_under": "acme_inputs."}`), or None."""
    present = sorted(keys)
    for prefix in under:
        if not prefix:
            continue
        for word in _WORDS[part]:
            start = f"{prefix}{word}."
            if any(key.startswith(start) and len(key) > len(start) for key in present):
                return {"attributes_under": start, "json_value": True}
    return None
