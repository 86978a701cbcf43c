"""Laminar's TypeScript SDK read with the shipped descriptions withheld: a vocabulary whose kind
key (`lmnr.span.type`) names its tool calls alone (`TOOL`), its default kind written as no key at
all, the model calls another instrumentation's. The trace's root span, no kind, recording its
input under the key's prefix (`lmnr.span.input`), is the application's unit of work around the
calls (`conventions/inferred_tops.py`). Read on traces captured from the real package
(tests/fixtures/traces/lmnr-openaijs)."""

from __future__ import annotations

import pytest

from tests.runs.test_inferred_vocabulary_fixtures import (
    assert_read_as_written,
    no_shipped_descriptions,
    rebuilt,
)

__all__ = ["no_shipped_descriptions"]  # the fixture, used by every test here


@pytest.mark.parametrize("scenario", ["tool_then_answer", "two_tools", "two_runs", "nested", "failing_tool"])
def test_unseen_a_kind_key_naming_tools_alone_is_read_with_the_untyped_root_that_records_its_input(
    scenario: str,
) -> None:
    # Laminar's description withheld: `lmnr.span.type` names tools only (`TOOL`), the model calls
    # are OpenLLMetry's; the root span has no kind but records its input under the key's prefix
    # (`lmnr.span.input`): the application's unit of work around the calls, the run.
    runs = rebuilt("lmnr-openaijs", scenario)
    assert runs and {run.convention for run in runs} == {"inferred:lmnr.span.type"}
    assert_read_as_written("lmnr-openaijs", scenario, runs)


def test_unseen_a_trace_without_a_span_of_the_kind_key_infers_nothing() -> None:
    # An answer without a tool: no span carries the kind key, so there is no vocabulary to read.
    assert {run.convention for run in rebuilt("lmnr-openaijs", "no_tool")} != {"inferred:lmnr.span.type"}
