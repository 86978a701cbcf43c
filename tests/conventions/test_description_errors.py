"""A description that says something wrong is an error naming its key: in the configuration
read, and by `validate`; the configuration reference's example is a valid one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_scorers.cli.main import main
from otel_scorers.config import parse_config
from otel_scorers.errors import ConfigError

from .acme_instrumentation import CONFIG, docs_example


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        (
            {"run": {"when": {"atributes": {"k": "v"}}}},
            "conventions[0].run.when.atributes",
            "did you mean 'attributes'",
        ),
        ({"run": {"when": {}, "input": 5}}, "conventions[0].run.input", "an attribute name, a source"),
        (
            {"run": {"when": {}, "input": {"attribute": "a", "path": "a..b"}}},
            "conventions[0].run.input[0].path",
            "not a JSON path",
        ),
        (
            {"run": {"when": {}, "agent_name": {"span": "name", "attribute": "x"}}},
            "conventions[0].run.agent_name[0]",
            "not both",
        ),
        (
            {"run": {"when": {}}, "tool": {"when": {}, "name": {"attr": "x"}}},
            "conventions[0].tool.name[0].attr",
            "did you mean 'attribute'",
        ),
        ({"run": {"when": {}}, "scope": None}, "conventions[0]", "say which spans"),
    ],
)
def test_a_bad_description_is_an_error_naming_its_key(entry: dict[str, Any], path: str, message: str) -> None:
    description = {"name": "x", "scope": "s", **entry}
    if description.get("scope") is None:
        del description["scope"]
    with pytest.raises(ConfigError) as raised:
        parse_config({"scorers": [{"type": "no_tool_errors"}], "conventions": [description]})
    (error,) = raised.value.errors
    assert error.path == path
    assert message in error.message


def test_validate_names_the_bad_key_of_a_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        CONFIG.replace("when: {attributes: {acme.is: tool}}", "wen: {attributes: {acme.is: tool}}")
    )
    assert main(["validate", "-c", str(config_file)]) == 2
    error = capsys.readouterr().err
    assert "conventions[0].tool.wen: unknown key; did you mean 'when'?" in error
    assert "conventions[0].tool.when: Field required" in error


def test_the_configuration_reference_example_validates() -> None:
    example = docs_example("configuration.md", "## The configuration file")
    assert parse_config(example).conventions[0].name == "acme"
