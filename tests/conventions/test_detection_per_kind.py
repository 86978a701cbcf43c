"""A span's convention is decided once per kind of span (its scope, name and attribute keys, and
the values conventions declare they compare): a kind remembered must answer what detecting the
span anew answers, for every span of every framework's traces and for spans that differ only in
their name or a declared value."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from otel_scorers import conventions
from otel_scorers.conventions.kind_versions import kind_keys, versionless
from otel_scorers.conventions.relabelled import relabelled
from otel_scorers.gen_ai_names import GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME, GEN_AI_SYSTEM
from otel_scorers.runs.otlp_files import InputProblem, read_spans
from otel_scorers.span_record import SpanRecord

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def convention_name(span: SpanRecord) -> str | None:
    found = conventions.detect(span)
    return found.name if found is not None else None


def test_every_fixture_span_is_detected_as_a_fresh_detection_would() -> None:
    problems: list[InputProblem] = []
    spans = [
        span
        for path in sorted(TRACES.glob("*/*.json"))
        if not path.name.endswith(".truth.json")
        for span in read_spans(path, problems)
    ]
    assert not problems and len(spans) > 1000
    for _ in range(2):  # the second pass answers from the kinds remembered by the first
        for span in spans:
            fresh = conventions._detect(span)
            assert conventions.detect(span) is fresh, (span.scope, span.name, dict(span.attributes))


def test_a_remembered_kind_gives_the_kind_keys_and_reading_a_lookup_of_the_span_would() -> None:
    problems: list[InputProblem] = []
    spans = [
        span
        for path in sorted(TRACES.glob("*/*.json"))
        if not path.name.endswith(".truth.json")
        for span in read_spans(path, problems)
    ]
    # The same keys in another order: another kind, whose keys are in its own order.
    spans += [replace(span, attributes=dict(reversed(span.attributes.items()))) for span in spans]
    assert not problems
    given = 0
    for _ in range(2):  # the second pass answers from the kinds remembered by the first
        for span in spans:
            found, keys = conventions.detect_with_kind_keys(span)
            assert found is conventions.detect(span)
            if keys is not None:
                given += 1
                looked_up = kind_keys(span.attributes)
                assert keys.named == looked_up.named, (span.scope, span.name, list(span.attributes))
                # Its own kind keys may leave out a compared value, read once for the kind.
                assert versionless(span, keys) == versionless(span, looked_up), (span.scope, span.name)
                assert keys.relabelled == relabelled(found, span)
    assert given > 1000


def test_each_readers_detect_finds_the_markers_it_declares_on_every_fixture_span() -> None:
    problems: list[InputProblem] = []
    read = [
        span
        for path in sorted(TRACES.glob("*/*.json"))
        if not path.name.endswith(".truth.json")
        for span in read_spans(path, problems)
    ]
    # Each span also under a scope no reader knows: what a reader finds by the framework's own
    # keys and names, whatever instrumentation wrote them, must be among its markers as well.
    spans = [*read, *(replace(span, scope="acme.tracer") for span in read)]
    declaring = [convention for convention in conventions.SHIPPED if convention.markers is not None]
    assert len(declaring) >= 6
    for convention in declaring:
        markers = convention.markers
        assert markers is not None
        # Each marker alone, on a span carrying nothing else, is found by `detect` too.
        alone = [SpanRecord(1, 2, None, "x", attributes={key: "v"}, scope="s") for key in markers.keys]
        alone += [SpanRecord(1, 2, None, "x", scope=scope) for scope in markers.scopes]
        alone += [SpanRecord(1, 2, None, name, scope="s") for name in markers.names]
        for span in [*spans, *alone]:
            assert convention.detect(span) == markers.carried_by(span), (
                convention.name,
                span.scope,
                span.name,
            )


def test_spans_that_differ_only_in_a_declared_value_are_kinds_of_their_own() -> None:
    def chat(system: str) -> SpanRecord:
        return SpanRecord(
            1,
            2,
            None,
            "chat",
            attributes={GEN_AI_OPERATION_NAME: "chat", GEN_AI_SYSTEM: system},
            scope="same-scope",
        )

    assert [convention_name(chat(system)) for system in ("autogen", "openai", "autogen")] == [
        "autogen",
        "genai",
        "autogen",
    ]
    provider = SpanRecord(
        1,
        3,
        None,
        "chat",
        attributes={GEN_AI_OPERATION_NAME: "chat", GEN_AI_PROVIDER_NAME: "strands-agents"},
        scope="same-scope",
    )
    assert convention_name(provider) == "strands"


def test_spans_that_differ_only_in_their_name_are_kinds_of_their_own() -> None:
    names = ["agent run", "some step", "running tool", "some step"]
    found = [convention_name(SpanRecord(1, 2, None, name, scope="another-scope")) for name in names]
    assert found == ["pydantic_ai", None, "pydantic_ai", None]


def test_a_value_that_cannot_be_a_key_is_detected_without_being_remembered() -> None:
    span = SpanRecord(
        1,
        2,
        None,
        "chat",
        attributes={GEN_AI_OPERATION_NAME: "chat", GEN_AI_SYSTEM: ["autogen"]},
        scope="list-scope",
    )
    assert convention_name(span) == "genai"


def test_a_first_readers_scope_key_or_name_alone_claims_a_span_that_plain_genai_keys_also_mark() -> None:
    # Plain GenAI's key on every span: without the first readers' markers it would claim them.
    def span(name: str, scope: str, **attributes: str) -> SpanRecord:
        return SpanRecord(
            1, 2, None, name, attributes={GEN_AI_OPERATION_NAME: "chat", **attributes}, scope=scope
        )

    spans = [
        span("chat", "logfire.openai_agents"),
        span("chat", "some-scope", **{"openinference.span.kind": "LLM"}),
        span("chat", "some-scope", **{"traceloop.entity.path": "workflow"}),
        span("running tool", "some-scope"),
        span("chat", "some-scope"),
    ]
    for _ in range(2):  # the second time from the kinds remembered
        assert [convention_name(item) for item in spans] == [
            "logfire_openai_agents",
            "openinference",
            "openllmetry",
            "pydantic_ai",
            "genai",
        ]


def test_a_users_description_read_first_claims_the_spans_its_marker_attributes_mark() -> None:
    def span(**attributes: str) -> SpanRecord:
        return SpanRecord(
            1, 2, None, "chat", attributes={GEN_AI_OPERATION_NAME: "chat", **attributes}, scope="s"
        )

    try:
        conventions.use_descriptions(
            [
                {
                    "name": "acme",
                    "marker_attributes": ["acme.kind"],
                    "run": {"when": {"attributes": {"acme.kind": "agent"}}},
                }
            ]
        )
        for _ in range(2):
            assert [convention_name(span(**{"acme.kind": "llm"})), convention_name(span())] == [
                "acme",
                "genai",
            ]
    finally:
        conventions.use_descriptions(())
