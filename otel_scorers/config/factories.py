"""Scorers from their `type` and `args`: a check, an LLM scorer, a conversation scorer or
`pkg.module:function`, the factory called with its arguments checked."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ConfigDict, ValidationError, validate_call

from otel_scorers.config.validation_errors import dotted_path, validation_errors
from otel_scorers.errors import ConfigError
from otel_scorers.scorers.conversation import ConversationScorer
from otel_scorers.scorers.declarations import CONVERSATION_FACTORIES, RUN_FACTORIES
from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.protocol import Scorer, import_scorer


def make_scorer(kind: str, args: Mapping[str, Any], path: str, judge: Judge | None = None) -> Scorer:
    """A run scorer from its `type` and `args`: a check, an LLM scorer (given `judge` unless its
    args name one) or `pkg.module:function`; a `ConfigError` naming the bad key."""
    factory: Callable[..., Any] | None = RUN_FACTORIES.get(kind)
    if factory is None:
        if ":" in kind:
            try:
                return import_scorer(kind, dict(args))
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"{path}.type", str(exc)) from None
        if kind in CONVERSATION_FACTORIES:
            raise ConfigError(
                f"{path}.type", f"{kind} scores whole conversations: list it under conversations.scorers"
            )
        raise _unknown(kind, list(RUN_FACTORIES), path, "scorer type", ", or 'pkg.module:function'")
    scorer: Scorer = _made(kind, factory, args, path, judge)
    return scorer


def make_conversation_scorer(
    kind: str, args: Mapping[str, Any], path: str, judge: Judge | None = None
) -> ConversationScorer:
    """A conversation scorer, by the same factory call as a run scorer (`make_scorer`)."""
    factory = CONVERSATION_FACTORIES.get(kind)
    if factory is None:
        if kind in RUN_FACTORIES:
            raise ConfigError(f"{path}.type", f"{kind} scores single runs: list it under scorers")
        raise _unknown(kind, list(CONVERSATION_FACTORIES), path, "conversation scorer", "")
    scorer: ConversationScorer = _made(kind, factory, args, path, judge)
    return scorer


def _unknown(kind: str, known: list[str], path: str, what: str, more: str) -> ConfigError:
    close = difflib.get_close_matches(kind, known, n=1)
    hint = f"did you mean {close[0]!r}? Known: " if close else "use one of "
    return ConfigError(f"{path}.type", f"unknown {what} {kind!r}; {hint}{', '.join(known)}{more}")


def _made(
    kind: str, factory: Callable[..., Any], args: Mapping[str, Any], path: str, judge: Judge | None
) -> Any:
    """The factory called with `args`: a judge of its own checked as `judge:` is, else `judge`."""
    takes_judge = "judge" in inspect.signature(factory).parameters
    if takes_judge and isinstance(args.get("judge"), Mapping):  # a judge of its own, checked as `judge:` is
        try:
            args = {**args, "judge": JudgeConfig.model_validate(args["judge"])}
        except ValidationError as exc:
            raise ConfigError.combine(validation_errors(exc, JudgeConfig, (path, "args", "judge"))) from None
    if judge is not None and "judge" not in args and takes_judge:
        args = {**args, "judge": judge}
    return _call_factory(kind, factory, args, f"{path}.args")


def _call_factory(kind: str, factory: Callable[..., Any], args: Mapping[str, Any], path: str) -> Any:
    parameters = inspect.signature(factory).parameters
    expected = ", ".join(parameters) or "no arguments"
    errors = [
        ConfigError(f"{path}.{key}", f"unknown argument for {kind}; expected: {expected}")
        for key in args
        if key not in parameters
    ]
    missing = [
        name
        for name, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty and name not in args
    ]
    if missing:
        errors.append(ConfigError(path, f"{kind} needs argument(s): {', '.join(missing)}"))
    if errors:
        raise ConfigError.combine(errors)
    try:
        return validate_call(config=ConfigDict(arbitrary_types_allowed=True, strict=False))(factory)(**args)
    except ValidationError as exc:
        raise ConfigError.combine(
            [
                ConfigError(f"{path}.{dotted_path(tuple(error['loc']))}", str(error["msg"]))
                for error in exc.errors(include_url=False)
            ]
        ) from None
    except (ValueError, TypeError) as exc:
        raise ConfigError(path, str(exc)) from None
