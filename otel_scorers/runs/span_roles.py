"""Run building, phase 1: the role each span of a trace plays (run, tool, model, retriever).

Each span is read by the first convention whose markers it carries (`conventions.detect`); that
convention says its role. The project's own spans play none. A span that LangChain's metadata
marks as an agent graph is a run whichever reader claimed it, a span a processor relabelled is
read as written (`relabelled_spans`), and a span naming an agent by an operation no convention
lists, around spans of its own, outside a run of that agent is a run (`unlisted_agents`).
An agent graph invoked from a tool may carry nothing that marks it a run: its place under the
tool span does (`Convention.run_under_tool`). A span whose parent was never exported is first put
back under the invocation of the agent it names (`unended_parents`). In a trace in which no
reader found a run, spans whose keys are a known reader's under a namespace of their own are read
as that reader's (`forked_spans`), else the spans none gives a role are read by the vocabulary they
share (`conventions.inferred_reader`). Last, a root span a reader claimed without a role is the
run of the model calls it holds that no run holds (`top_runs`); in a trace still without a run,
the described readers' spans are read by the vocabulary they show (`unrun_descriptions`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from otel_scorers.conventions import Convention, SpanRole, detect, detect_with_kind_keys, inferred_reader
from otel_scorers.conventions.formats import langchain
from otel_scorers.conventions.genai import AGENT_RUN_PREFIXES, OPERATION, WORKFLOW
from otel_scorers.conventions.kind_versions import KindKeys, kind_keys, versionless
from otel_scorers.conventions.openinference_scopes import OPENINFERENCE
from otel_scorers.conventions.openllmetry_bridged import KIND_NAME_ENDS
from otel_scorers.conventions.tool_listings import lists_tools
from otel_scorers.runs.ancestry import MAX_DEPTH
from otel_scorers.runs.forked_spans import read_as_fork
from otel_scorers.runs.marked_calls import marked_model_calls
from otel_scorers.runs.relabelled_spans import reader_as_written, role_as_named
from otel_scorers.runs.tool_invoked_agents import runs_under_tools, unroled_under_tools
from otel_scorers.runs.top_runs import top_level_runs
from otel_scorers.runs.turn_runs import join_turns
from otel_scorers.runs.unended_parents import reattach_unended_parents
from otel_scorers.runs.unlisted_agents import unlisted_agent_operation, unlisted_agent_operations
from otel_scorers.runs.unrun_descriptions import all_working, runs_of_described_spans
from otel_scorers.span_record import OWN_SCOPE, SpanRecord


@dataclass(slots=True)
class SpanRoles:
    """A trace's spans by id (but the project's own), the role each plays as its convention
    detects it, and the convention of each span that plays none."""

    by_id: dict[int, SpanRecord]
    roles: dict[int, tuple[Convention, SpanRole]]
    unroled: dict[int, Convention]


def span_roles(spans: Iterable[SpanRecord], forks: bool = True) -> SpanRoles:
    """The role of each span of one trace (`SpanRoles`); `forks`: a trace in which no reader found
    a run is read again as a fork of a reader's vocabulary (`forked_spans`) before any other."""
    by_id: dict[int, SpanRecord] = {}
    roles: dict[int, tuple[Convention, SpanRole]] = {}
    unroled: dict[int, Convention] = {}
    workflows: list[int] = []
    unlisted: list[int] = []
    flattened: list[int] = []
    idle: list[int] = []  # runs only with spans under them (`Convention.run_needs_work`)
    roots: list[int] = []  # the trace's root spans: a part of a split trace has none
    roleless: list[SpanRecord] = []  # no reader gives them a role: a vocabulary of their own?
    keyed: list[SpanRecord] = []  # those of them that may carry a kind key (`KindKeys.named`)
    read_runs = tool_roots = False  # a reader found runs (none inferred); a root read as a tool call
    for span in spans:
        if span.scope == OWN_SCOPE:
            continue
        span, found, role, kind = _detected(span)
        by_id[span.span_id] = span
        if span.parent_span_id is None:
            roots.append(span.span_id)
        if found is None:
            _without_role(span, kind, roleless, keyed)
            continue
        if role == "tool" and lists_tools(span, found.tool_call):
            continue  # a framework listing a server's tools: no call of the run, no work
        if renamed := found.name == OPENINFERENCE and span.name.endswith(KIND_NAME_ENDS):  # relabelled?
            role, renamed = role_as_named(span, role)
        if role is None:
            marked = langchain.metadata_marks_graph(span)
            if marked:
                role = "run"  # LangChain's own metadata says what its reader does not
            elif marked is None:
                flattened.append(span.span_id)
        if role is not None:
            roles[span.span_id] = (found, role)
            tool_roots = tool_roots or (role == "tool" and span.parent_span_id is None)
            if role == "run":
                read_runs = True
                if renamed or found.run_needs_work(span):
                    idle.append(span.span_id)
        else:
            unroled[span.span_id] = found
            _without_role(span, kind, roleless, keyed)
            operation = span.attributes.get(OPERATION)
            if operation == WORKFLOW:
                workflows.append(span.span_id)
            elif operation is not None and unlisted_agent_operation(operation, span):
                unlisted.append(span.span_id)
    if roots and roles:
        reattach_unended_parents(by_id, roles)
    trace = SpanRoles(by_id, roles, unroled)
    if roleless and not read_runs:
        forked = read_as_fork(list(by_id.values()), roleless, _unforked, _reader_role) if forks else None
        if forked is not None:
            return forked
        tool_roots = _roles_without_runs((roleless, keyed), trace, flattened, (workflows, unlisted, idle))
    return runs_of_described_spans(
        _roles_by_place(trace, roots, flattened, workflows, unlisted, idle, tool_roots)
    )


def _unforked(spans: list[SpanRecord]) -> SpanRoles:
    return span_roles(spans, forks=False)


def _reader_role(span: SpanRecord) -> tuple[Convention | None, SpanRole | None]:
    """The span's reader and the role it gives it, as detected (`_detected`)."""
    return _detected(span)[1:3]


def _without_role(
    span: SpanRecord, kind: KindKeys | None, roleless: list[SpanRecord], keyed: list[SpanRecord]
) -> None:
    """A span no reader gives a role, in `roleless`, and in `keyed` when it may carry a kind key."""
    roleless.append(span)
    if kind is None or kind.named:
        keyed.append(span)


def _roles_without_runs(
    spans: tuple[list[SpanRecord], list[SpanRecord]],
    found: SpanRoles,
    flattened: list[int],
    pending: tuple[list[int], ...],
) -> bool:
    """In a trace in which no reader found a run, the runs spans named as agents' runs are
    (`_runs_named_by_span`), else those of the vocabulary the spans without a role share. `spans`:
    those spans, and those of them that may carry a kind key. Whether a vocabulary was inferred."""
    roleless, keyed = spans
    by_id, roles, unroled = found.by_id, found.roles, found.unroled
    workflows, unlisted, _ = pending
    if roles and _runs_named_by_span(roleless, by_id, roles, unroled, (flattened, workflows, unlisted)):
        return False  # spans at work, none of them in a run, named as runs
    called = [by_id[span_id] for span_id, (_, role) in roles.items() if role != "run"] if keyed else []
    inferred = inferred_reader(roleless, lambda ids: all_working(ids, by_id, roles), keyed, called)
    if inferred is not None:
        _inferred_roles(inferred, roleless, roles, unroled, flattened, pending)
        join_turns(by_id, roles, unroled, inferred)
    return inferred is not None


def _detected(span: SpanRecord) -> tuple[SpanRecord, Convention | None, SpanRole | None, KindKeys | None]:
    """The span's reader, its role and its kind's keys (`detect_with_kind_keys`); the span read
    with its versioned kind values as their kinds when its reader gives it no role."""
    found, kind = detect_with_kind_keys(span)
    # Decided once for a remembered kind's spans (`kind_versions.of_kind`), else for each span;
    # only a span with GenAI's operation may be a relabelled GenAI span (`labels_genai_span`).
    if (
        (kind is None or kind.relabelled)
        and found is not None
        and found.name == OPENINFERENCE
        and OPERATION in span.attributes
    ):
        found = reader_as_written(found, span)  # a GenAI span relabelled?
    role = found.role(span) if found is not None else None
    if role is None:
        if kind is None:  # not remembered: its keys read once, for `versionless` and `_without_role`
            kind = kind_keys(span.attributes)
        if kind.own and (plain := versionless(span, kind)) is not None:
            span, found, role = _versionless_role(plain)  # a newer version's kind
    return span, found, role, kind


def _versionless_role(plain: SpanRecord) -> tuple[SpanRecord, Convention | None, SpanRole | None]:
    """A span its reader gave no role, read with its versioned kind values as their kinds
    (`kind_versions.versionless`), for every rule after (an inferred vocabulary's too)."""
    found = reader_as_written(detect(plain), plain)
    return plain, found, found.role(plain) if found is not None else None


def _roles_by_place(
    found: SpanRoles,
    roots: list[int],
    flattened: list[int],
    workflows: list[int],
    unlisted: list[int],
    idle: list[int],
    tool_roots: bool = False,
) -> SpanRoles:
    """`found` with the roles the spans' places in the trace give or take, once each span's convention
    spoke: model calls by their kind key, graphs flattened into one span, workflows' agents, agents named
    by unlisted operations, runs under tool spans or with nothing of their own, the root around calls."""
    by_id, roles, unroled = found.by_id, found.roles, found.unroled
    if len(by_id) > len(roles) + len(unroled):  # spans no reader claims
        marked_model_calls(by_id, roles, unroled)
    if flattened:
        _flattened_graphs(flattened, by_id, roles, unroled, workflows, unlisted)
    if workflows:
        _working_workflows(workflows, by_id, roles, unroled)
    if unlisted:
        unlisted_agent_operations(unlisted, by_id, roles, unroled)
    # Only a span without a role may be a run by its place under a tool span, and at the top of
    # the trace only one without a role or read as a tool: most traces' spans need no walk.
    under_tool = unroled_under_tools(by_id, roles, unroled) if unroled else None
    if under_tool:
        runs_under_tools(under_tool, by_id, roles, unroled)
    if idle:
        _idle_work_units(idle, by_id, roles, unroled)
    if roots and (unroled or tool_roots):
        top_level_runs(roots, by_id, roles, unroled)
    return found


def _runs_named_by_span(
    roleless: list[SpanRecord],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    pending: tuple[list[int], ...],
) -> bool:
    """In a trace in which no reader found a run, a span no reader gives a role, named as an
    agent's run is (an operation's name and the agent's: Google ADK 1.x's `agent_run
    [weather_agent]`, which carries no attribute), is that agent's run when model or tool spans
    are under it with no such span between: the work it holds is its own. It is read by its
    reader, or, when no reader claimed it, by the reader of the first of them. True when one is."""
    candidates = {span.span_id for span in roleless if span.name.startswith(AGENT_RUN_PREFIXES)}
    if not candidates:
        return False
    working: dict[int, Convention] = {}
    for span_id, (convention, role) in roles.items():
        if role not in ("model", "tool"):
            continue
        current = by_id[span_id].parent_span_id
        for _ in range(MAX_DEPTH):
            if current is None or current not in by_id:
                break
            if current in candidates:
                working.setdefault(current, convention)
                break
            current = by_id[current].parent_span_id
    for span_id, convention in working.items():
        roles[span_id] = (unroled.pop(span_id, convention), "run")
    for waiting in pending:  # a run: no other rule's candidate
        waiting[:] = [span_id for span_id in waiting if span_id not in working]
    return bool(working)


def _inferred_roles(
    inferred: Convention,
    roleless: list[SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    flattened: list[int],
    pending: tuple[list[int], ...],
) -> None:
    """The roles a vocabulary inferred from the trace (`conventions.inferred_reader`) gives the
    spans no reader gave one; the others carrying its kind key are its spans without a role,
    which LangChain's metadata may mark as a graph, as for any reader's."""
    for span in roleless:
        if not inferred.detect(span):
            continue
        span_id = span.span_id
        role = inferred.role(span)
        if role is None and span_id not in unroled:  # no reader claimed it before
            unroled[span_id] = inferred
            marked = langchain.metadata_marks_graph(span)
            if marked is None:
                flattened.append(span_id)
            role = "run" if marked else None
        if role is None:
            continue
        roles[span_id] = (inferred, role)
        unroled.pop(span_id, None)
        for waiting in (flattened, *pending):
            if span_id in waiting:
                waiting.remove(span_id)


def _idle_work_units(
    idle: list[int],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """A run span that marks a unit of work rather than an agent (`Convention.run_needs_work`)
    with no span under it is no run: an instrumentation losing the parent of each callback
    (OpenLLMetry's LangChain.js) writes every step of an agent as such a span, a trace of its own."""
    parents = {span.parent_span_id for span in by_id.values()}
    for span_id in idle:
        if span_id not in parents and roles.get(span_id, (None, None))[1] == "run":
            unroled[span_id] = roles.pop(span_id)[0]


def _flattened_graphs(
    candidates: list[int],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
    workflows: list[int],
    unlisted: list[int],
) -> None:
    """The spans without a role whose LangChain metadata, flattened into keys of their own
    (Langfuse's, OpenLLMetry's), marks an agent graph are runs. Only spans with spans under them
    are asked: a graph runs its nodes, and a leaf span (most spans of every instrumentation)
    need not pay for the search."""
    parents = {span.parent_span_id for span in by_id.values()}
    for span_id in candidates:
        if span_id in parents and langchain.flattened_marks_graph(by_id[span_id]):
            roles[span_id] = (unroled.pop(span_id), "run")
            if span_id in workflows:
                workflows.remove(span_id)
            if span_id in unlisted:
                unlisted.remove(span_id)


def _working_workflows(
    workflows: list[int],
    by_id: Mapping[int, SpanRecord],
    roles: dict[int, tuple[Convention, SpanRole]],
    unroled: dict[int, Convention],
) -> None:
    """A workflow (`invoke_workflow`) that asks a model itself (a model span directly under it)
    outside any agent run is a run: a team whose leader delegates and answers the user (OpenLIT's
    Agno team). Inside an agent run it is a step of that run (CrewAI's `AgentExecutor` under
    OpenLIT); one that asks no model itself only holds its agents' runs (ADK's, a crew's)."""
    asking = {by_id[span_id].parent_span_id for span_id, (_, role) in roles.items() if role == "model"}
    for span_id in workflows:
        if span_id in asking and not _inside_run(by_id[span_id], by_id, roles):
            roles[span_id] = (unroled.pop(span_id), "run")


def _inside_run(
    span: SpanRecord, by_id: Mapping[int, SpanRecord], roles: Mapping[int, tuple[Convention, SpanRole]]
) -> bool:
    """A run span is above `span` before any tool span (a team a tool runs is its own run)."""
    current = span.parent_span_id
    for _ in range(MAX_DEPTH):
        if current is None:
            return False
        role = roles.get(current)
        if role is not None and role[1] in ("run", "tool"):
            return role[1] == "run"
        parent = by_id.get(current)
        current = parent.parent_span_id if parent is not None else None
    return False
