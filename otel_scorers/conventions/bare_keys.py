"""The bare keys `input` / `output`: where a framework's next release, or another runtime of it,
may keep what a call was given and what it gave instead of the key of its own its reader knows.

`runs/generic_io` reads them for any reader that found nothing. A described reader also reads
inside them what it reads inside its run's own input and output attributes: each of its run's
sources in one of those attributes is followed by the same source in the bare key of the same
direction, read only when that attribute is absent (a path inside a moved key: the agent an
output names).
"""

from __future__ import annotations

from collections.abc import Mapping

from otel_scorers.conventions.description import RunReading

BARE_INPUT = "input"
BARE_OUTPUT = "output"


def bare_keys_of(run: RunReading) -> Mapping[str, str]:
    """The bare key each of a described run's input and output attributes may have moved to (none
    for an attribute that is a bare key itself, nor for one read in both directions)."""
    found: dict[str, str] = {}
    for sources, bare in ((run.input, BARE_INPUT), (run.output, BARE_OUTPUT)):
        for attribute in (source.attribute for source in sources or ()):
            if attribute is None or attribute in (BARE_INPUT, BARE_OUTPUT):
                continue
            found[attribute] = "" if found.get(attribute, bare) != bare else bare
    return {attribute: bare for attribute, bare in found.items() if bare}
