"""The GenAI names the package declares (`otel_scorers.gen_ai_names`) are the semantic
conventions' own, wherever the OpenTelemetry semantic-conventions package has them."""

from __future__ import annotations

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes

from otel_scorers import gen_ai_names

OURS = {name: value for name, value in vars(gen_ai_names).items() if name.startswith("GEN_AI_")}


def test_each_name_the_conventions_package_declares_has_its_value() -> None:
    shared = {name: value for name, value in OURS.items() if hasattr(gen_ai_attributes, name)}
    assert len(shared) >= 10  # most of them: the comparison is not empty
    assert shared == {name: getattr(gen_ai_attributes, name) for name in shared}


def test_each_constant_is_named_for_its_value() -> None:
    assert all(name == value.upper().replace(".", "_") for name, value in OURS.items())
