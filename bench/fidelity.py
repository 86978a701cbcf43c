"""How many runs are rebuilt right from traces of instrumentations the run builder was not shown.

Each corpus directory holds `<scenario>.json` (OTLP/JSON, captured from a real framework and
instrumentation) and `<scenario>.truth.json` (the runs the generator knows happened). Runs are
rebuilt the way `otel-scorers runs` rebuilds them (`runs_from_files`) and compared with the
truth by the fixture tests' own comparison (`assert_run_matches` in
tests/conventions/test_fixture_runs.py), so a run counts as right exactly when it would pass
there: agent name, input, output, tool calls (name, arguments, result, error), handoffs, final
agent and conversation id.

Per corpus it prints the runs in the truth, the runs rebuilt right, the phantom runs (rebuilt
runs beyond the truth's count: runs that do not exist, which would be scored) and the missing
ones (truth runs beyond the rebuilt count), then the totals. Runs are paired in run-start order:
the right ones are the longest in-order pairing of rebuilt and truth runs that match, so one
phantom run in front does not make every later run wrong.

    python bench/fidelity.py [CORPUS_DIR ...] [--verbose] [--rename-scope PREFIX]
                             [--without-descriptions NAME,... | all] [--without-runs NAME,... | all]
                             [--drift NAME,...]

Default corpora: tests/fixtures/held-out/* (traces no rule was written from). With
`--rename-scope mlflow`, every span whose instrumentation scope starts with `mlflow` is read under
a scope no reader knows (`acme.tracer`), other scopes kept: how much of a corpus is read from what
the trace itself holds rather than from the name of the tracer that wrote it. With
`--without-descriptions spring_ai,genkit` (or `all`), those shipped descriptions
(otel_scorers/conventions/descriptions/*.yaml) are withheld: the corpora they read stand for a
framework whose vocabulary the project never saw, read from what the trace itself says. With
`--without-runs laminar,monocle` (or `all`), those shipped descriptions are read without their
run-finding clauses (`run`, its `conversation`, and `handoff`), their vocabulary kept (scope,
markers, `tool` and `model`): the corpora they read stand for a tracer the project knows over a
framework whose run shape its description was not written from (Laminar's over Mastra, Monocle's
over the OpenAI Agents SDK), its runs found and read by the rules every reader shares. With
`--drift kind-version,wrapped-result` (or `all`, each alone), each trace is read after those
version drifts (bench/drifts.py), applied in turn: a fact kept slightly elsewhere than where the
readers look, as the next release of a framework keeps it, the truth unchanged; `moved` counts
the facts each moved. `--drift forked-keys` (or `forked-genai`, alone) reads each trace with its
reader's keys under a namespace no reader knows (`FORKS`): how much of a known instrumentation's
shape is read from the shape alone, as a fork of it is; combine it with `--rename-scope ""` (a
fork has a scope of its own).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.drifts import DRIFTS, FORKS, drifted
from otel_scorers import conventions
from otel_scorers.model import AgentRun
from otel_scorers.runs.otlp_files import InputProblem, runs_from_files
from tests.conventions.test_fixture_runs import assert_run_matches

HELD_OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "held-out"


@dataclass
class Tally:
    """One corpus's (or the total's) counts, and why each wrong or extra run was counted."""

    scenarios: int = 0
    truth: int = 0
    right: int = 0
    rebuilt: int = 0
    phantom: int = 0
    missing: int = 0
    unreadable: int = 0
    moved: int = 0
    findings: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("scenarios", "truth", "right", "rebuilt", "phantom", "missing", "unreadable", "moved"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def mismatch(run: AgentRun, expected: dict[str, Any], framework: str, scenario: str) -> str | None:
    """Why `run` is not `expected` in the fixture tests' terms, or None when it is."""
    try:
        assert_run_matches(run, expected, framework, scenario)
    except AssertionError as error:
        return str(error).splitlines()[0] if str(error) else "differs"
    return None


def sketch(run: AgentRun, expected: dict[str, Any]) -> str:
    """What the rebuilt run holds where its plain fields differ from the truth (a reading aid only:
    the verdict is `mismatch`'s)."""
    seen = {
        "agent_name": run.agent_name,
        "input": run.input,
        "output": run.output.rstrip() if run.output else run.output,
        "tools": [(call.name, call.result) for call in run.tool_calls],
    }
    wanted = {
        "agent_name": expected["agent_name"],
        "input": expected["input"],
        "output": expected["output"].rstrip() if expected["output"] else expected["output"],
        "tools": [(call["name"], call["result"]) for call in expected["tool_calls"]],
    }
    shown = [
        f"{key}={_short(value)} (truth {_short(wanted[key])})"
        for key, value in seen.items()
        if value != wanted[key]
    ]
    return "; ".join(shown) or "differs in handoffs, final agent, arguments, errors or conversation id"


def _short(value: Any, limit: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def right_in_order(runs: list[AgentRun], truth: list[dict[str, Any]], framework: str, scenario: str) -> int:
    """The longest in-order pairing of rebuilt and truth runs in which each pair matches."""
    matches = [[mismatch(run, expected, framework, scenario) is None for expected in truth] for run in runs]
    best = [[0] * (len(truth) + 1) for _ in range(len(runs) + 1)]
    for i in range(len(runs) - 1, -1, -1):
        for j in range(len(truth) - 1, -1, -1):
            paired = best[i + 1][j + 1] + 1 if matches[i][j] else 0
            best[i][j] = max(paired, best[i + 1][j], best[i][j + 1])
    return best[0][0]


#: The scope a renamed scope is read under (`--rename-scope`): one no reader knows.
UNKNOWN_SCOPE = "acme.tracer"


def renamed_scopes(trace_path: Path, prefix: str, directory: Path) -> Path:
    """A copy of the trace in `directory` with each scope starting with `prefix` renamed."""
    trace = json.loads(trace_path.read_text())
    for resource_spans in trace["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            scope = scope_spans.setdefault("scope", {})
            if str(scope.get("name", "")).startswith(prefix):
                scope["name"] = UNKNOWN_SCOPE
    path = directory / trace_path.name
    path.write_text(json.dumps(trace))
    return path


def scenario_tally(
    truth_path: Path, framework: str, rename_scope: str | None = None, drifts: tuple[str, ...] = ()
) -> Tally:
    truth = json.loads(truth_path.read_text())
    scenario = truth["scenario"]
    expected_runs: list[dict[str, Any]] = truth["runs"]
    trace_path = truth_path.with_name(truth_path.name.replace(".truth.json", ".json"))
    problems: list[InputProblem] = []
    moved = 0
    with tempfile.TemporaryDirectory() as directory:
        if rename_scope is not None:
            trace_path = renamed_scopes(trace_path, rename_scope, Path(directory))
        for drift in drifts:
            trace_path, count = drifted(trace_path, drift, Path(directory))
            moved += count
        runs = sorted(runs_from_files([trace_path], problems), key=lambda run: run.start_ns)
    tally = Tally(scenarios=1, truth=len(expected_runs), rebuilt=len(runs), moved=moved)
    tally.right = right_in_order(runs, expected_runs, framework, scenario)
    tally.phantom = max(0, len(runs) - len(expected_runs))
    tally.missing = max(0, len(expected_runs) - len(runs))
    if problems:
        tally.unreadable = 1
        tally.findings.append(f"{scenario}: input problems {[str(problem) for problem in problems]}")
    if tally.right < tally.truth or tally.phantom:
        names = [run.agent_name for run in runs]
        tally.findings.append(
            f"{scenario}: {tally.right}/{tally.truth} right, rebuilt {len(runs)} run(s) named {names}"
        )
        for run, expected in zip(runs, expected_runs, strict=False):
            if mismatch(run, expected, framework, scenario) is not None:
                tally.findings.append(f"    {expected['agent_name']}: {sketch(run, expected)}")
    return tally


def corpus_tally(directory: Path, rename_scope: str | None = None, drifts: tuple[str, ...] = ()) -> Tally:
    tally = Tally()
    for truth_path in sorted(directory.glob("*.truth.json")):
        one = scenario_tally(truth_path, directory.name, rename_scope, drifts)
        tally.add(one)
        tally.findings.extend(one.findings)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", type=Path, help="corpus directories (default: held-out/*)")
    parser.add_argument("--verbose", action="store_true", help="say which runs were wrong and why")
    parser.add_argument(
        "--rename-scope",
        metavar="PREFIX",
        help=f"read spans whose scope starts with PREFIX under the scope {UNKNOWN_SCOPE}",
    )
    parser.add_argument(
        "--without-descriptions",
        metavar="NAMES",
        help="withhold these shipped descriptions (comma-separated names, or all): "
        + ", ".join(conventions.SHIPPED_DESCRIPTION_NAMES),
    )
    parser.add_argument(
        "--without-runs",
        metavar="NAMES",
        help="read these shipped descriptions without their run, conversation and handoff clauses "
        "(comma-separated names, or all)",
    )
    parser.add_argument(
        "--drift",
        metavar="NAMES",
        help="read each trace after these version drifts, in turn (comma-separated, or all: "
        "each alone): " + ", ".join(DRIFTS) + "; or a forked vocabulary: " + ", ".join(FORKS),
    )
    args = parser.parse_args()
    withheld, runs_withheld = named(args.without_descriptions), named(args.without_runs)
    if withheld or runs_withheld:
        try:
            conventions.use_descriptions((), withheld=withheld, runs_withheld=runs_withheld)
        except ValueError as error:
            raise SystemExit(f"--without-descriptions / --without-runs: {error}") from None
    corpora: list[Path] = args.corpora or sorted(path for path in HELD_OUT.iterdir() if path.is_dir())
    if not corpora:
        raise SystemExit(f"no corpus directories given and none under {HELD_OUT}")
    for directory in corpora:
        if not any(directory.glob("*.truth.json")):
            raise SystemExit(f"{directory}: no <scenario>.truth.json in this corpus directory")
    drifts = tuple(args.drift.split(",")) if args.drift else ()
    if drifts == ("all",):
        drift_table(corpora, args.rename_scope)
        return
    unknown = [name for name in drifts if name not in DRIFTS and name not in FORKS]
    if unknown:
        known = ", ".join((*DRIFTS, *FORKS))
        raise SystemExit(f"--drift: no drift named {', '.join(unknown)} (known: {known})")
    corpora_table(corpora, args.rename_scope, drifts, args.verbose)


def named(option: str | None) -> tuple[str, ...]:
    """The shipped descriptions an option names (comma-separated, or `all`)."""
    if not option:
        return ()
    names = tuple(option.split(","))
    return conventions.SHIPPED_DESCRIPTION_NAMES if names == ("all",) else names


def corpora_table(
    corpora: list[Path], rename_scope: str | None, drifts: tuple[str, ...], verbose: bool
) -> None:
    moved = f" {'moved':>6}" if drifts else ""
    print(f"{'corpus':<32} {'scenarios':>9} {'truth':>6} {'right':>6} {'phantom':>8} {'missing':>8}{moved}")
    total = Tally()
    for directory in corpora:
        tally = corpus_tally(directory, rename_scope, drifts)
        total.add(tally)
        print(
            f"{directory.name:<32} {tally.scenarios:>9} {tally.truth:>6} {tally.right:>6} "
            f"{tally.phantom:>8} {tally.missing:>8}"
            + (f" {tally.moved:>6}" if drifts else "")
            + (f"  ({tally.unreadable} unreadable)" if tally.unreadable else "")
        )
        if verbose:
            for finding in tally.findings:
                print(f"    {finding}")
    print(
        f"{'total':<32} {total.scenarios:>9} {total.truth:>6} {total.right:>6} {total.phantom:>8} {total.missing:>8}"
        + (f" {total.moved:>6}" if drifts else "")
    )
    share = total.right / total.truth if total.truth else 0.0
    print(f"right: {total.right}/{total.truth} ({share:.0%}), phantom runs: {total.phantom}")


def drift_table(corpora: list[Path], rename_scope: str | None) -> None:
    """Each drift alone over every corpus, as a Markdown table: the facts it moved, the corpora
    in which it moved some, the runs read right and the phantom runs; the plain reading first."""
    plain = [corpus_tally(directory, rename_scope) for directory in corpora]
    print("| drift | facts moved | corpora drifted | right | phantom | corpora losing a right run |")
    print("|---|---|---|---|---|---|")
    print(f"| none | 0 | 0 | {_total(plain).right}/{_total(plain).truth} | {_total(plain).phantom} | 0 |")
    for drift in DRIFTS:
        tallies = [corpus_tally(directory, rename_scope, (drift,)) for directory in corpora]
        total = _total(tallies)
        touched = sum(1 for tally in tallies if tally.moved)
        losing = sum(1 for before, after in zip(plain, tallies, strict=True) if after.right < before.right)
        print(
            f"| `{drift}` | {total.moved} | {touched}/{len(corpora)} | {total.right}/{total.truth} "
            f"| {total.phantom} | {losing} |"
        )


def _total(tallies: list[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        total.add(tally)
    return total


if __name__ == "__main__":
    main()
