"""Every built-in scorer, declared once: its config `type`, its factory, the arguments it cannot be
made without (an example of each), which way its value goes, whether its result is pass/fail, and
the page that documents it. The registries config builds scorers from (`RUN_FACTORIES`,
`CONVERSATION_FACTORIES`) are derived from this table, docs/judge-replies.md is generated from
its judged rows, and tests hold the README's scorer lists, the docs pages and each built scorer's
own direction and kind to it, as the Collector's `metadata.yaml` does for a component.

Adding a built-in scorer is its module and one row here, plus its docs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from otel_scorers.scorers import checks, code, conversation
from otel_scorers.scorers.answer_relevancy import answer_relevancy
from otel_scorers.scorers.rules import catalogue

#: The README's row of the scorers table a scorer is listed in.
Family = Literal["quick checks", "checks of structure", "code scorers", "LLM judges", "conversations"]


@dataclass(frozen=True, slots=True)
class Declared:
    """One built-in scorer. `example_args`: a value for each argument the factory requires (a
    judged factory also takes `judge`). `binary`: its result, made from `example_args`, is
    pass/fail (counted, not measured). `judged`: it asks a judge, so it has a reply schema."""

    kind: str
    factory: Callable[..., Any]
    family: Family
    docs: str
    example_args: Mapping[str, Any] = field(default_factory=dict)
    higher_is_worse: bool = False
    binary: bool = False
    judged: bool = False

    @property
    def conversation(self) -> bool:
        """Scored once per conversation (`conversations.scorers`), not per run."""
        return self.family == "conversations"


def _quick(kind: str, factory: Callable[..., Any], binary: bool = True, **example: Any) -> Declared:
    return Declared(kind, factory, "quick checks", "checks.md", example, binary=binary)


def _structure(kind: str, factory: Callable[..., Any], **example: Any) -> Declared:
    return Declared(kind, factory, "checks of structure", "checks.md", example, binary=True)


def _code(kind: str, factory: Callable[..., Any], binary: bool = False, **example: Any) -> Declared:
    return Declared(kind, factory, "code scorers", "code-scorers.md", example, binary=binary)


def _judged(
    kind: str, factory: Callable[..., Any], higher_is_worse: bool = False, **example: Any
) -> Declared:
    return Declared(kind, factory, "LLM judges", "llm-scorers.md", example, higher_is_worse, judged=True)


def _conversation(
    kind: str, factory: Callable[..., Any], judged: bool, higher_is_worse: bool = False, **example: Any
) -> Declared:
    return Declared(
        kind, factory, "conversations", "conversations.md", example, higher_is_worse, judged=judged
    )


DECLARED: tuple[Declared, ...] = (
    _quick("includes", checks.includes, expected="°C"),
    _quick("excludes", checks.excludes, unwanted="sorry"),
    _quick("equals", checks.equals, expected="Sunny."),
    _quick("matches", checks.matches, pattern=r"\d+°C"),
    # continuous (the raw coefficient) unless given a threshold
    _quick("similarity", checks.similarity, binary=False, expected="Sunny in Paris."),
    _quick("called_tool", checks.called_tool, tool="get_weather"),
    _quick("did_not_call", checks.did_not_call, tool="delete_account"),
    _quick("tool_order", checks.tool_order, order=["search", "book"]),
    _quick("max_tool_calls", checks.max_tool_calls, max=5),
    _quick("used_no_tools", checks.used_no_tools),
    _quick("no_tool_errors", checks.no_tool_errors),
    _structure("tool_args_valid", checks.tool_args_valid),
    _structure("json_valid", checks.json_valid),
    _structure("json_schema", checks.json_schema, schema={"type": "object"}),
    _structure("trajectory", checks.trajectory, expected=["search", "book"]),
    _code("textual_difference", code.textual_difference),
    _code("content_similarity", code.content_similarity),
    _code("keyword_coverage", code.keyword_coverage),
    _code("completeness", code.completeness),
    _code("tone", code.tone),
    # pass/fail with one expected tool, a share of the run's calls with none
    _code("tool_call_accuracy", code.tool_call_accuracy, binary=True, expected_tool="get_weather"),
    _code("trajectory_accuracy", code.trajectory_accuracy, expected=["search", "book"]),
    Declared("answer_relevancy", answer_relevancy, "LLM judges", "answer-relevancy.md", judged=True),
    _judged("faithfulness", catalogue.faithfulness),
    _judged("hallucination", catalogue.hallucination, higher_is_worse=True),
    _judged("answer_similarity", catalogue.answer_similarity),
    _judged("bias", catalogue.bias, higher_is_worse=True),
    _judged("toxicity", catalogue.toxicity, higher_is_worse=True),
    _judged("prompt_alignment", catalogue.prompt_alignment),
    _judged("context_precision", catalogue.context_precision),
    _judged("context_recall", catalogue.context_recall),
    _judged("context_relevance", catalogue.context_relevance),
    _judged("noise_sensitivity", catalogue.noise_sensitivity),
    _judged("summarization", catalogue.summarization),
    _judged("tool_call_accuracy_llm", catalogue.tool_call_accuracy_llm),
    _judged("trajectory_accuracy_llm", catalogue.trajectory_accuracy_llm),
    _judged("rubric", catalogue.rubric, criteria=["The answer is polite."]),
    _conversation(
        "multi_turn", conversation.multi_turn, True, criterion="The agent resolved what the user came for."
    ),
    _conversation("knowledge_retention", conversation.knowledge_retention, True),
    _conversation("conversation_completeness", conversation.conversation_completeness, True),
    _conversation("role_adherence", conversation.role_adherence, True, role="A travel agent."),
    _conversation("conversation_relevancy", conversation.conversation_relevancy, True),
    _conversation("turns", conversation.turns, False),
    _conversation("tool_error_rate", conversation.tool_error_rate, False, higher_is_worse=True),
    _conversation("user_frustration", conversation.user_frustration, False, higher_is_worse=True),
)

#: The built-in run scorers by config `type` (`scorers:`).
RUN_FACTORIES: dict[str, Callable[..., Any]] = {d.kind: d.factory for d in DECLARED if not d.conversation}
#: The built-in conversation scorers by config `type` (`conversations.scorers:`).
CONVERSATION_FACTORIES: dict[str, Callable[..., Any]] = {
    d.kind: d.factory for d in DECLARED if d.conversation
}
