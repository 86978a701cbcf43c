"""The JSON each judged scorer asks its judge for, as the request sends it: docs/judge-replies.md
is this module's output (`python -m otel_scorers.scorers.reply_schemas > docs/judge-replies.md`),
and a test holds the page to it, so the page cannot drift from the code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from otel_scorers.scorers.judge import Judge, JudgeConfig
from otel_scorers.scorers.judge.request import shape_schema

#: What a scorer cannot be made without (the schema does not depend on it).
_ARGS: Mapping[str, Mapping[str, Any]] = {
    "rubric": {"criteria": ["The answer is polite."]},
    "multi_turn": {"criterion": "The agent resolved what the user came for."},
    "role_adherence": {"role": "A travel agent."},
}


def reply_schemas() -> dict[str, Mapping[str, Any]]:
    """Per judged scorer type (run-level, then conversation-level), the JSON schema of the reply
    its one call (`steps: 1`, the default) asks for."""
    from otel_scorers.scorers import SCORER_FACTORIES
    from otel_scorers.scorers.conversation import CONVERSATION_FACTORIES

    judge = Judge(JudgeConfig(model="openai/judge", api_base="http://127.0.0.1:9/v1"))
    schemas: dict[str, Mapping[str, Any]] = {}
    for kind, factory in [*SCORER_FACTORIES.items(), *CONVERSATION_FACTORIES.items()]:
        try:
            scorer = factory(**_ARGS.get(kind, {}), judge=judge)
        except TypeError:  # takes no judge: a code scorer
            continue
        judged = getattr(scorer, "judged", scorer)  # a conversation scorer holds its JudgedScorer
        rule = getattr(judged, "rule", None)
        schema = shape_schema(rule.shape).schema if rule is not None else None
        if schema is not None:
            schemas[kind] = schema
    return schemas


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
