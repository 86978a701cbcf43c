"""Hostile configuration files through the real loader: anchors and aliases that stand for
billions of values, or for a value containing itself, are one error naming the file, read
without walking what they stand for; anchors used as people use them still load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_scorers.config import load_config
from otel_scorers.errors import ConfigError

CLI = "from otel_scorers.cli.main import main; raise SystemExit(main())"


def alias_bomb(fan_out: int, levels: int, where: str) -> str:
    """`levels` anchors, each a list of `fan_out` aliases of the one before: fan_out**levels values."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * fan_out) + "]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * fan_out) + "]" for n in range(1, levels)]
    scorers = "[{type: no_tool_errors}]"
    place = {
        "scorers": f"scorers: *a{levels - 1}",
        "args": f"scorers:\n  - {{type: includes, name: x, args: {{expected: *a{levels - 1}}}}}",
        "unused": f"scorers: {scorers}",
        "conventions": f"scorers: {scorers}\nconventions: *a{levels - 1}",
    }[where]
    return "\n".join(lines) + "\n" + place + "\n"


@settings(max_examples=15, deadline=None)
@given(
    fan_out=st.integers(2, 40),
    levels=st.integers(3, 30),
    where=st.sampled_from(("scorers", "args", "unused", "conventions")),
)
def test_aliases_that_expand_past_the_bound_are_one_error_naming_the_file(
    tmp_path_factory: pytest.TempPathFactory, fan_out: int, levels: int, where: str
) -> None:
    if fan_out**levels <= 200_000:  # what is meant: a file standing for more than the bound
        levels = next(n for n in range(levels, 64) if fan_out**n > 200_000)
    path = tmp_path_factory.mktemp("bomb") / "bomb.yaml"
    path.write_text(alias_bomb(fan_out, levels, where))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(path) in str(raised.value)
    assert "aliases expand to more than 100,000 values" in str(raised.value)


def test_an_alias_inside_the_value_it_names_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("loop: &loop [1, *loop]\nscorers: [{type: no_tool_errors}]\n")
    with pytest.raises(ConfigError, match="an alias refers to a value that contains it") as raised:
        load_config(path)
    assert str(path) in str(raised.value)


def test_anchors_shared_by_scorers_still_load(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(
        "scorers:\n"
        "  - {type: includes, name: says-sunny, args: &sunny {expected: sunny}}\n"
        "  - {type: includes, name: still-sunny, args: *sunny}\n"
    )
    config = load_config(path)
    assert [(entry.name, entry.args) for entry in config.scorers] == [
        ("says-sunny", {"expected": "sunny"}),
        ("still-sunny", {"expected": "sunny"}),
    ]


def test_validate_refuses_a_one_kilobyte_alias_bomb_with_exit_code_2(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(10, 9, "scorers"))  # 1 kB standing for 10⁹ values
    done = subprocess.run(
        [sys.executable, "-c", CLI, "validate", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"{path}: not readable: its aliases expand to more than 100,000 values" in done.stderr


@pytest.mark.parametrize("digits", [10, 4_301, 50_000])
@pytest.mark.parametrize("where", ["conventions", "json_schema"])
def test_a_path_index_of_thousands_of_digits_is_an_error_naming_its_key(
    tmp_path: Path, digits: int, where: str
) -> None:
    index = "9" * digits  # past 4,300 digits Python's own error said nothing of the path
    text = {
        "conventions": (
            "scorers: [{type: no_tool_errors}]\nconventions:\n  - name: acme\n    scope: acme\n"
            f'    run: {{when: {{attributes: {{k: agent}}}}, input: {{attribute: k, path: "a[{index}]"}}}}\n'
        ),
        "json_schema": f'scorers:\n  - {{type: json_schema, args: {{schema: {{}}, path: "$.a[{index}]"}}}}\n',
    }[where]
    path = tmp_path / "paths.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    key = {"conventions": "conventions[0].run.input[0].path", "json_schema": "scorers[0].args"}[where]
    assert f"{key}: a list index of {digits:,} digits in " in str(raised.value)
    assert "at most 9" in str(raised.value) and "sys.set_int_max_str_digits" not in str(raised.value)
