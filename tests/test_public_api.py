"""The package's public face: what imports from `otel_scorers`, its types, and its settings."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import otel_scorers
from otel_scorers import ScoringSpanProcessor, checks
from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.errors import ConfigError

from .conftest import Telemetry

ROOT = Path(__file__).resolve().parent.parent


def test_the_judge_api_imports_from_the_package() -> None:
    from otel_scorers import Judge, JudgeConfig, JudgeError, ask_judge
    from otel_scorers.scorers import judge, llm

    assert (Judge, JudgeConfig, JudgeError) == (judge.Judge, judge.JudgeConfig, judge.JudgeError)
    assert ask_judge is llm.ask_judge
    assert {"Judge", "JudgeConfig", "JudgeError", "ask_judge"} <= set(otel_scorers.__all__)


def test_every_name_in_all_exists() -> None:
    missing = [name for name in otel_scorers.__all__ if not hasattr(otel_scorers, name)]
    assert missing == []


def test_the_wheel_ships_py_typed(tmp_path: Path) -> None:
    """Type checkers read the package's hints only when the installed package carries py.typed."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("otel_scorers-*.whl")
    assert "otel_scorers/py.typed" in zipfile.ZipFile(wheel).namelist()
    # The shipped readers written as descriptions are data files of the package.
    shipped = {
        "otel_scorers/conventions/descriptions/langfuse.yaml",
        "otel_scorers/conventions/descriptions/mlflow.yaml",
    }
    assert shipped <= set(zipfile.ZipFile(wheel).namelist())


def test_the_example_traffic_runs_from_its_module() -> None:
    """`python -m otel_scorers.demos.example_traffic`, what the compose stack runs."""
    result = subprocess.run(
        [sys.executable, "-m", "otel_scorers.demos.example_traffic", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--rounds" in result.stdout


def _public_callables() -> Iterator[tuple[str, Any]]:
    for name in otel_scorers.__all__:
        value = getattr(otel_scorers, name)
        if inspect.isclass(value):
            yield name, value.__init__
            for attribute, member in vars(value).items():
                if not attribute.startswith("_") and callable(member):
                    yield f"{name}.{attribute}", member
                if isinstance(member, (classmethod, staticmethod)) and not attribute.startswith("_"):
                    yield f"{name}.{attribute}", member.__func__
        elif inspect.isfunction(value):
            yield name, value


_UNION_WITH_ANY = re.compile(r"\|\s*Any\b|\bAny\s*\||Optional\[Any\]")


def test_no_public_signature_takes_or_returns_a_union_with_any() -> None:
    offenders = []
    for where, function in _public_callables():
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue
        annotations = {name: parameter.annotation for name, parameter in signature.parameters.items()}
        annotations["return"] = signature.return_annotation
        offenders += [
            f"{where}({name}: {annotation})"
            for name, annotation in annotations.items()
            if _UNION_WITH_ANY.search(annotation if isinstance(annotation, str) else repr(annotation))
        ]
    assert offenders == [], "`X | Any` is just Any: name the accepted types"


# ---- OTEL_SCORERS_* as the SDK's processors read OTEL_BSP_*: argument, else environment, else default


def spans_dropped(telemetry: Telemetry, **options: Any) -> float:
    processor = ScoringSpanProcessor([checks.no_tool_errors()], **telemetry.providers(), **options)
    telemetry.tracer_provider.add_span_processor(processor)
    ExampleAgent(tracer=telemetry.tracer_provider.get_tracer("agent")).run(DEMO_RUNS[3])  # 9 spans
    assert processor.force_flush(10_000)
    processor.shutdown()
    return telemetry.counter("otel_scorers.spans.dropped")


def test_the_default_applies_when_neither_argument_nor_environment_is_set(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_SCORERS_MAX_SPANS_PER_TRACE", raising=False)
    assert spans_dropped(telemetry) == 0


def test_the_environment_applies_when_the_argument_is_not_given(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_SCORERS_MAX_SPANS_PER_TRACE", "3")
    assert spans_dropped(telemetry) > 0


def test_an_argument_wins_over_the_environment(telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SCORERS_MAX_SPANS_PER_TRACE", "3")
    assert spans_dropped(telemetry, max_spans_per_trace=100) == 0


def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SCORERS_HOLD_TIMEOUT_S", "soon")
    with pytest.raises(ConfigError) as caught:
        ScoringSpanProcessor([checks.no_tool_errors()])
    assert caught.value.path == "OTEL_SCORERS_HOLD_TIMEOUT_S" and "'soon'" in caught.value.message
