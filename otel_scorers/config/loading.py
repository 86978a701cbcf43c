"""Reading a configuration: YAML text or a parsed document validated whole, every mistake found
reported at once, each with its key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from otel_scorers.config.bindings import binding_errors
from otel_scorers.config.bounded_yaml import TooManyValues, safe_load
from otel_scorers.config.schema import Config
from otel_scorers.config.scorer_entry import ScorerConfig
from otel_scorers.config.validation_errors import validation_errors
from otel_scorers.emission.standard import output_factory
from otel_scorers.errors import ConfigError
from otel_scorers.scorers.judge import JudgeConfig

#: Stands for a judge model that is itself reported as an error, while the scorers using it are checked.
_UNCHECKED_MODEL = "openai/unchecked"


class _RunScorers(BaseModel):
    """Without a `conversations` section, a config needs at least one run-level scorer."""

    model_config = ConfigDict(extra="ignore")
    scorers: list[Any] = Field(min_length=1)


def parse_config(document: Any, source: str = "config", scoring: bool = True) -> Config:
    """Validate a whole configuration; a `ConfigError` holds every mistake found, each with its key.
    Without `scoring` (`runs -c`, which only reads), a config needs no scorer."""
    if document is None:
        raise ConfigError("", f"{source} is empty; it needs at least a 'scorers' list")
    if not isinstance(document, Mapping):
        raise ConfigError(
            "", f"{source} must be a mapping with a 'scorers' list, got {type(document).__name__}"
        )
    try:
        if scoring and document.get("conversations") is None:  # then run-level scorers are what it scores
            _RunScorers.model_validate({"scorers": document["scorers"]} if "scorers" in document else {})
        config = Config.model_validate(document)
    except ValidationError as exc:
        errors = validation_errors(exc, Config)
        # Whatever did validate is checked further, so that one bad key does not hide the rest.
        entries, judge = _valid_parts(document, {error.path for error in errors})
        raise ConfigError.combine([*errors, *binding_errors(entries, judge)]) from None
    config.scoring()  # every scorer, argument and filter is checked before anything starts
    for index, name in enumerate(config.outputs or ()):
        try:
            output_factory(name)
        except ValueError as exc:
            raise ConfigError(f"outputs[{index}]", str(exc)) from None
    return config


def _valid_parts(
    document: Mapping[str, Any], bad: set[str]
) -> tuple[list[tuple[int, ScorerConfig]], JudgeConfig | None]:
    """The scorer entries and judge section without their invalid keys, to be checked further."""

    def clean(prefix: str) -> bool:
        return not any(path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")) for path in bad)

    raw = document.get("scorers")
    entries: list[tuple[int, ScorerConfig]] = []
    for index, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, Mapping) or not clean(f"scorers[{index}].type"):
            continue
        kept = {key: value for key, value in entry.items() if clean(f"scorers[{index}].{key}")}
        try:
            entries.append((index, ScorerConfig.model_validate(kept)))
        except ValidationError:
            continue
    return entries, _checkable_judge(document.get("judge"), clean)


def _checkable_judge(judge: Any, clean: Callable[[str], bool]) -> JudgeConfig | None:
    """The judge section's valid keys, to check the scorers that use it. A bad key is reported
    where it is written; when that is the model (or the whole section), the scorers are checked
    as if it named one, so that a bad judge model is one error, not also a "no judge model" for
    each judge scorer."""
    if judge is None:
        return None
    if not isinstance(judge, Mapping):
        return JudgeConfig(model=_UNCHECKED_MODEL)
    kept = {key: value for key, value in judge.items() if clean(f"judge.{key}")}
    try:
        config = JudgeConfig.model_validate(kept)
    except ValidationError:
        return JudgeConfig(model=_UNCHECKED_MODEL)
    if "model" in judge and "model" not in kept:
        config = config.model_copy(update={"model": _UNCHECKED_MODEL})
    return config


def load_config(path: str | Path, scoring: bool = True) -> Config:
    """Read and validate a YAML file; every error names the file and the bad key. `scoring=False`:
    for reading traces only, a file of `conventions:` alone is whole."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("", f"cannot read config file {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            "",
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line} cannot be decoded",
            source=str(path),
        ) from None
    try:
        document = safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError("", f"not valid YAML: {exc.problem}{where}", source=str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"not valid YAML: {exc}", source=str(path)) from None
    except RecursionError:
        raise ConfigError("", "not readable: nested too deeply", source=str(path)) from None
    except TooManyValues as exc:
        raise ConfigError("", f"not readable: {exc}", source=str(path)) from None
    try:
        return parse_config(document, str(path), scoring)
    except ConfigError as exc:
        raise exc.in_file(str(path)) from None
