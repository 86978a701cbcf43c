"""`json_valid` and `json_schema`: the answer (or a place in it, or a tool's results) is JSON, and
matches a JSON Schema. Semantics: docs/checks.md, "Structured answers"; the bounds on hostile
documents and schemas: `bounded_schema`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import regex

from otel_scorers.conventions.description import path_index
from otel_scorers.model import AgentRun, Score, ScoreError
from otel_scorers.scorers.bounded_schema import (
    SchemaCheck,
    TooLarge,
    Unresolvable,
    check_size,
    parse_document,
    schema_check,
)
from otel_scorers.scorers.offloaded_check import OffloadedCheck, text_size
from otel_scorers.scorers.quick_check import DEFAULT_REGEX_TIMEOUT_S, Check

_NEEDS_OUTPUT = frozenset({"output"})
_NEEDS_TOOL_RESULTS = frozenset({"tool_calls", "tool_results"})
_STEP = regex.compile(r"""\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[(['"])(.*?)\3\]""")
_FENCE = regex.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```\s*\Z", regex.DOTALL)
#: A document whose location cannot be read (beyond the bounds) is not scored: an error result.
_TOO_LARGE = "too_large"
#: Nor is one whose schema refers outside itself (never fetched).
_UNRESOLVABLE = "unresolvable"


def parse_path(path: str) -> tuple[str | int, ...]:
    """A JSONPath of names and indices (`$.order.items[0]`, `$['a key']`) as its steps."""
    if not path.startswith("$"):
        raise ValueError(f"path {path!r} must start with $ (e.g. $.order.items[0])")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        found = _STEP.match(path, position)
        if found is None:
            raise ValueError(
                f"path {path!r}: cannot read {path[position:]!r} (use .name, [index] or ['name'])"
            )
        name, index, _, quoted = found.groups()
        steps.append(name if name is not None else path_index(index, path) if index is not None else quoted)
        position = found.end()
    return tuple(steps)


def _at(document: Any, steps: Sequence[str | int], path: str) -> Any:
    current = document
    for step in steps:
        found = (isinstance(step, int) and isinstance(current, list) and step < len(current)) or (
            isinstance(step, str) and isinstance(current, Mapping) and step in current
        )
        if not found:
            raise LookupError(f"nothing at {path}")
        current = current[step]
    return current


class _Documents:
    """Where a check's documents come from: the answer, or each result of one tool; and the
    place in each document that it checks."""

    def __init__(self, path: str | None, tool: str | None, fences: bool) -> None:
        self.path = path
        self.steps = parse_path(path) if path is not None else ()
        self.tool = tool
        self.fences = fences
        self.needs = _NEEDS_TOOL_RESULTS if tool is not None else _NEEDS_OUTPUT

    def read(self, run: AgentRun) -> list[tuple[str, Any]] | str:
        """(where, the raw document: text or already decoded) for each document, or why none."""
        if self.tool is None:
            return [("the answer", run.output or "")]
        found = []
        calls = [call for call in run.tool_calls if call.name == self.tool]
        for number, call in enumerate(calls, 1):
            if call.state in ("ok", "result_error") and call.result is not None:
                where = (
                    f"{self.tool}'s result" if len(calls) == 1 else f"{self.tool}'s result (call {number})"
                )
                found.append((where, call.result))
        if not found:
            return f"no result of {self.tool} in the run"
        return found

    def value(self, raw: Any) -> Any:
        """The checked value of one document: `ValueError` when it is not JSON, `LookupError` when
        the path leads nowhere, `TooLarge` beyond the bounds."""
        if isinstance(raw, str):
            text = raw
            if self.fences:
                fenced = _FENCE.match(text)
                if fenced is not None:
                    text = fenced.group(1)
            document = parse_document(text.strip())
        else:  # a tool result the trace already carried as JSON
            check_size(raw)
            document = raw
        return _at(document, self.steps, self.path) if self.path is not None else document

    def size(self, run: AgentRun) -> int:
        """Characters there are to check in the run (`offloaded_check`)."""
        if self.tool is None:
            return text_size(run.output)
        return sum(text_size(call.result) for call in run.tool_calls if call.name == self.tool)

    def where(self, place: str) -> str:
        return f"{place} at {self.path}" if self.path is not None else place

    def args(self) -> dict[str, Any]:
        return {"path": self.path, "tool": self.tool, "fences": self.fences}


def _first_problem(
    name: str,
    documents: _Documents,
    run: AgentRun,
    judge: Callable[[str, Any], str | None],
    passed: str,
) -> Score:
    """Read each document; the first that is not JSON, lacks the path or breaks `judge` fails."""
    read = documents.read(run)
    if isinstance(read, str):
        return Score(name, skipped=read)
    for place, raw in read:
        where = documents.where(place)
        try:
            value = documents.value(raw)
        except TooLarge as exc:
            return Score(name, error=ScoreError(_TOO_LARGE, f"{place} is not checked: {exc}"))
        except LookupError as exc:
            return Score(name, value=0.0, reason=f"{place}: {exc}")
        except ValueError as exc:
            return Score(name, value=0.0, reason=f"{place} is not JSON: {exc}")
        try:
            problem = judge(where, value)
        except TooLarge as exc:
            return Score(name, error=ScoreError(_TOO_LARGE, f"{place} is not checked: {exc}"))
        except Unresolvable as exc:
            return Score(name, error=ScoreError(_UNRESOLVABLE, f"{place} is not checked: {exc}"))
        if problem is not None:
            return Score(name, value=0.0, reason=problem)
    count = len(read)
    what = documents.where(read[0][0]) if count == 1 else f"{count} results of {documents.tool}"
    return Score(name, value=1.0, reason=f"{what} {'is' if count == 1 else 'are'} {passed}")


def json_valid(*, path: str | None = None, tool: str | None = None, fences: bool = False) -> Check:
    """1 if the answer (or each result of `tool`) parses as JSON and, with `path`, has a value
    there. `fences`: a Markdown code fence around the document is read through."""
    documents = _Documents(path, tool, fences)

    def is_json(where: str, value: Any) -> str | None:
        return None

    def score(run: AgentRun) -> Score:
        return _first_problem("json_valid", documents, run, is_json, "valid JSON")

    return Check("json_valid", score, documents.needs, args=documents.args())


def json_schema(
    schema: Mapping[str, Any] | bool,
    *,
    path: str | None = None,
    tool: str | None = None,
    fences: bool = False,
    timeout_s: float = DEFAULT_REGEX_TIMEOUT_S,
) -> OffloadedCheck:
    """1 if the answer (or each result of `tool`, or the value at `path`) is JSON that matches
    `schema` (JSON Schema, draft 2020-12 unless its `$schema` names another); the reason names
    the first violations. Validation gives up after `timeout_s` (the binding's timeout when lower)."""
    checker: SchemaCheck = schema_check(schema, "schema")
    documents = _Documents(path, tool, fences)

    def matches(where: str, value: Any) -> str | None:
        violations = checker.violations(value, timeout_s, path or "$")
        if not violations:
            return None
        return f"{where} breaks the schema: " + "; ".join(violations)

    def score(run: AgentRun) -> Score:
        return _first_problem("json_schema", documents, run, matches, "valid against the schema")

    check = Check(
        "json_schema",
        score,
        documents.needs,
        args={"schema": schema, **documents.args()},
        retime=lambda limit: (
            json_schema(schema, path=path, tool=tool, fences=fences, timeout_s=min(limit, timeout_s)).check
        ),
    )
    return OffloadedCheck(check, documents.size)
