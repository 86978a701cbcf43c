"""The JSON each judged scorer asks its judge for, as the request sends it: docs/judge-replies.md
is this module's output (`python -m otel_scorers.scorers.reply_schemas > docs/judge-replies.md`),
and a test holds the page to it, so the page cannot drift from the code."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.judge.request import shape_schema

if TYPE_CHECKING:
    from otel_scorers.scorers.declarations import Declared


def reply_schemas(declared: Sequence[Declared] | None = None) -> dict[str, Mapping[str, Any]]:
    """Per judged scorer type (run-level, then conversation-level), the JSON schema of the reply
    its one call (`steps: 1`, the default) asks for. A scorer declared judged that cannot be made
    from its declared example arguments, or that asks no schema, is an error naming it: the page
    must list every judged scorer, not the ones that happen to build."""
    from otel_scorers.scorers.declarations import DECLARED

    judge = Judge(JudgeConfig(model="openai/judge", api_base="http://127.0.0.1:9/v1"))
    schemas: dict[str, Mapping[str, Any]] = {}
    for entry in DECLARED if declared is None else declared:
        if entry.judged:
            schemas[entry.kind] = _schema(entry, judge)
    return schemas


def _schema(entry: Declared, judge: Judge) -> Mapping[str, Any]:
    try:
        scorer = entry.factory(**entry.example_args, judge=judge)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"judged scorer {entry.kind!r} cannot be made from its declared example arguments "
            f"{dict(entry.example_args)!r}: {exc}"
        ) from exc
    judged = getattr(scorer, "judged", scorer)  # a conversation scorer holds its JudgedScorer
    rule = getattr(judged, "rule", None)
    schema = shape_schema(rule.shape).schema if rule is not None else None
    if schema is None:
        raise ValueError(f"judged scorer {entry.kind!r} asks its judge for no reply schema")
    return schema


def reply_schemas_markdown() -> str:
    """docs/judge-replies.md."""
    parts = [
        "# What each judged scorer asks the judge for",
        "",
        "Each request to the judge carries the JSON schema of the reply it expects (in the form the",
        "provider takes: `reply_schema` in [LLM judges](llm-judges.md)), and a reply that is not",
        "exactly one object of that schema is an invalid reply, never a score. A judge server of",
        "your own (a proxy, a fine-tuned model, a test double) answers with these. Each is the",
        "reply of the scorer's one call (`steps: 1`, the default); with `judge: {batch: true}`, the",
        "scorers bound to one run share one call whose reply holds each one's object under its",
        "scorer's name. `otel-scorers fake-judge` is such a server: it answers each request with a",
        "made-up object of the schema the request carries ([LLM judges](llm-judges.md#try-it)).",
        "",
        "This page is generated from the schemas the code sends",
        "(`python -m otel_scorers.scorers.reply_schemas > docs/judge-replies.md`); a test holds it",
        "to them.",
    ]
    for kind, schema in reply_schemas().items():
        parts += ["", f"## `{kind}`", "", "```json", json.dumps(schema, indent=2, ensure_ascii=False), "```"]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    print(reply_schemas_markdown(), end="")
