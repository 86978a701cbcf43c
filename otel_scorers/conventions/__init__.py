"""Instrumentation conventions, in detection order: the first whose markers a span carries wins."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from otel_scorers.conventions.ag2 import AG2Convention
from otel_scorers.conventions.autogen import AutoGenConvention
from otel_scorers.conventions.base import Convention, Markers, SpanRole
from otel_scorers.conventions.described import DescribedConvention, described
from otel_scorers.conventions.description import ConventionDescription
from otel_scorers.conventions.forked import Fork, Forks
from otel_scorers.conventions.genai import GenAIConvention
from otel_scorers.conventions.google_adk import GoogleADKConvention
from otel_scorers.conventions.inferred import VocabularyInference
from otel_scorers.conventions.inferred_calls import MODEL_CALLS
from otel_scorers.conventions.kind_versions import KindKeys, kind_keys, of_kind, versionless_kind
from otel_scorers.conventions.lent_scopes import lent_out
from otel_scorers.conventions.litellm import LiteLLMConvention
from otel_scorers.conventions.logfire_openai_agents import LogfireOpenAIAgentsConvention
from otel_scorers.conventions.mastra import MastraConvention
from otel_scorers.conventions.namespaces import namespaces as _namespaces
from otel_scorers.conventions.namespaces import reader_forks as _forks
from otel_scorers.conventions.openinference import OpenInferenceConvention
from otel_scorers.conventions.openllmetry import OpenLLMetryConvention
from otel_scorers.conventions.pydantic_ai import PydanticAIConvention
from otel_scorers.conventions.relabelled import relabelled
from otel_scorers.conventions.semantic_kernel import SemanticKernelConvention
from otel_scorers.conventions.shipped import SHIPPED_DESCRIPTIONS
from otel_scorers.conventions.strands import StrandsConvention
from otel_scorers.conventions.unscoped import described_of, found_by_markers, inference_without, with_twins
from otel_scorers.conventions.vercel import VercelAIConvention
from otel_scorers.conventions.withheld_runs import RunsWithheld, without_runs
from otel_scorers.span_record import SpanRecord

#: The readers shipped with the project, in detection order (docs/conventions.md): the most
#: specific markers first, plain GenAI last. Langfuse's, MLflow's and Haystack's are descriptions
#: (`descriptions/*.yaml`), in the format users write in `conventions:`: those naming a scope are
#: asked first for their scope's spans wherever they stand; one found by its attributes alone
#: (Haystack's spans under a tracer of any scope) is asked late, once per kind of span, as its
#: keys are Haystack's own and no other reader's.
_SHIPPED_DESCRIBED = described(SHIPPED_DESCRIPTIONS)
SHIPPED: tuple[Convention, ...] = (
    MastraConvention(),
    VercelAIConvention(),
    OpenLLMetryConvention(),
    OpenInferenceConvention(),
    *(convention for convention in _SHIPPED_DESCRIBED if convention.scopes),
    LogfireOpenAIAgentsConvention(),
    PydanticAIConvention(),
    GoogleADKConvention(),
    StrandsConvention(),
    AutoGenConvention(),
    SemanticKernelConvention(),
    AG2Convention(),
    *(convention for convention in _SHIPPED_DESCRIBED if not convention.scopes),
    # Last before plain GenAI, whose keys it writes too: no other convention's span pays its check.
    LiteLLMConvention(),
    GenAIConvention(),
)

#: Every reader, in detection order: the user's descriptions (`use_descriptions`) first, then
#: the shipped ones. The names below are derived from it, again whenever it changes.
CONVENTIONS: tuple[Convention, ...] = SHIPPED
RUN_NAME_PREFIXES: tuple[str, ...] = ()
#: attribute key -> the values that mark a run (None: the key's presence alone does).
RUN_MARKERS: dict[str, frozenset[str] | None] = {}
#: Instrumentation scopes whose run spans carry their markers only when they end
#: (`Convention.run_start_scopes`).
RUN_START_SCOPES: frozenset[str] = frozenset()
#: Span-name prefixes of handoffs whose next run starts after the handing run ended
#: (`Convention.handoff_start_names`).
HANDOFF_NAME_PREFIXES: tuple[str, ...] = ()
#: The attribute keys worth reading from a span that starts (or arrives over OTLP) to spot a run.
#: A set changed in place, so that modules holding it see the user's descriptions too.
RUN_MARKER_KEYS: set[str] = set()
#: Span names whose check is remembered (names are few; past this many, each is checked anew).
_MAX_REMEMBERED_NAMES = 4096
_run_names: dict[str, bool] = {}
_handoff_names: dict[str, bool] = {}


def may_start_run(name: str, attributes: Mapping[str, Any] | None, scope: str | None = None) -> bool | None:
    """Whether a span may be an agent run: the one rule of both the processor (spans starting)
    and the sidecar (spans received).

    By its name, by a marker among `attributes` (those it has so far; a kind value with a version,
    `AGENT.v2`, as the value without it: `kind_versions.versionless_kind`), or by `scope`: give the
    span's instrumentation scope only when the span is starting and its trace has no run yet,
    because some instrumentations (LangChain's, in OpenInference and OpenLLMetry) write every
    attribute when a span ends, so the first span of their scope has to count as a run's start.

    None (false, as "no") for a span that is no run but carries a marker's key with another value
    (a model call's `gen_ai.operation.name`): a step of some instrumentation's run, whose run span
    may have been marked only after it started (`set_attribute` after `start_span`, as the GenAI
    conventions allow): the processor then looks at the span's parent (`TraceAssembler`).

    Cheap by design: it runs on the agent's thread for every span. Span names repeat, so the
    name check is remembered; the attributes a span starts with (or only the marker keys,
    `RUN_MARKER_KEYS`) are compared with the marker keys in one set operation, in C, and walked
    only when one of them is there. A false positive costs a buffer; a false negative, a run.
    """
    is_run = _run_names.get(name)
    if is_run is None:
        is_run = name.startswith(RUN_NAME_PREFIXES)
        if len(_run_names) < _MAX_REMEMBERED_NAMES:
            _run_names[name] = is_run
    if is_run:
        return True
    # A Python loop over a span's keys costs about twice the set operation for two keys, and
    # grows with each key: most spans, outside agents, carry no marker at all.
    if attributes and not RUN_MARKER_KEYS.isdisjoint(attributes):
        markers = RUN_MARKERS
        for key in attributes:
            if key in markers:
                values = markers[key]
                if values is None:
                    return True
                value = attributes[key]
                # A kind of a newer version than its reader knows (`AGENT.v2`): remembered per value.
                if value in values or versionless_kind(value) in values:
                    return True
        return True if scope is not None and scope in RUN_START_SCOPES else None
    return scope is not None and scope in RUN_START_SCOPES


def may_hand_off(name: str) -> bool:
    """Whether a span starting inside a run, not itself a run, is a handoff whose next run starts
    only after the handing run ends (`Convention.handoff_start_names`). One remembered lookup:
    it runs on the agent's thread for the spans of buffered traces."""
    hands_off = _handoff_names.get(name)
    if hands_off is None:
        hands_off = name.startswith(HANDOFF_NAME_PREFIXES)
        if len(_handoff_names) < _MAX_REMEMBERED_NAMES:
            _handoff_names[name] = hands_off
    return hands_off


#: Each convention with its bound `detect`, in detection order: `detect` asks up to twelve of
#: them for every span of every run, and binding the method anew each time is a fair share of it.
_DETECTORS: tuple[tuple[Convention, Any], ...] = ()
#: Described instrumentations that name their scopes, by scope, in detection order: found by one
#: dict lookup of a span's scope, ahead of `_DETECTORS` (a scope is its instrumentation's own, so
#: no code reader's markers come before it), instead of a call for each of them on every span.
_BY_SCOPE: dict[str, tuple[tuple[Convention, Any], ...]] = {}
#: Described instrumentations found by their marker attributes alone, in detection order
#: (`also_reading`).
_BY_MARKERS: tuple[DescribedConvention, ...] = ()
_BY_MARKERS_KEYS: frozenset[str] = frozenset()
#: The attribute keys whose values some convention's `detect` compares
#: (`Convention.detection_values`): with a span's scope, name and attribute keys, its kind,
#: whose convention `detect` decides once.
_DETECTION_VALUES: tuple[str, ...] = ()
#: The first code readers are asked directly, as they come: the instrumentations with readers
#: of their own mark their spans with keys of their own, found in a lookup or two, for less than
#: remembering costs. The readers after them are asked only once per kind of span (`detect`).
_ASKED_FIRST = 6
_FIRST: tuple[tuple[Convention, Any], ...] = ()
_REST: tuple[tuple[Convention, Any], ...] = ()
#: The first readers' markers together (`Convention.markers`), when each of them declares its
#: own: a span carrying none of them skips those readers, one check instead of a call to each
#: (most spans are of the readers after them, plain GenAI's above all). None: each is asked.
_FIRST_MARKERS: Markers | None = None
#: A kind's convention among `_REST`, as first decided (`detect`), with the span's kind keys
#: (`kind_versions.kind_keys`: the kind holds its attribute keys, so a span of a remembered kind
#: needs no lookup of its own for them). Kinds are few in a steady stream (span names
#: repeat); past this many, or for a span of more attribute keys than `MAX_KIND_KEYS` (a kind's
#: key holds them all, and flattened messages make many), each span is detected anew.
_MAX_REMEMBERED_KINDS = 4096
MAX_KIND_KEYS = 64
_detected: dict[tuple[Any, ...], tuple[Convention | None, KindKeys]] = {}
#: The vocabulary of spans no reader in use gives a role (`inferred.py`), for the readers in use.
_INFERENCE = VocabularyInference(())
_FORKS = Forks((), frozenset())


def _derive(conventions: tuple[Convention, ...]) -> None:
    """Set the detection order and everything derived from it."""
    global CONVENTIONS, RUN_NAME_PREFIXES, RUN_START_SCOPES, HANDOFF_NAME_PREFIXES, _DETECTORS, _BY_SCOPE
    global _DETECTION_VALUES, _FIRST, _REST, _FIRST_MARKERS, _BY_MARKERS, _BY_MARKERS_KEYS, _INFERENCE, _FORKS
    given, conventions = conventions, with_twins(conventions)
    markers: dict[str, frozenset[str] | None] = {}
    for convention in conventions:
        for key, value in convention.run_start_markers:
            if value is None or markers.get(key, frozenset()) is None:
                markers[key] = None
            else:
                markers[key] = (markers.get(key) or frozenset()) | {value}
    RUN_MARKERS.clear()
    RUN_MARKERS.update(markers)
    RUN_MARKER_KEYS.clear()
    RUN_MARKER_KEYS.update(markers)
    RUN_NAME_PREFIXES = tuple(dict.fromkeys(p for c in conventions for p in c.run_start_names))
    RUN_START_SCOPES = frozenset(scope for c in conventions for scope in c.run_start_scopes)
    HANDOFF_NAME_PREFIXES = tuple(dict.fromkeys(p for c in conventions for p in c.handoff_start_names))
    by_scope: dict[str, list[tuple[Convention, Any]]] = {}
    for convention in conventions:
        if isinstance(convention, DescribedConvention):
            for scope in convention.scopes:
                by_scope.setdefault(scope, []).append((convention, convention.detect))
    _BY_SCOPE = {scope: tuple(found) for scope, found in by_scope.items()}
    _BY_MARKERS = found_by_markers(conventions)
    _BY_MARKERS_KEYS = frozenset(key for c in _BY_MARKERS if c.markers is not None for key in c.markers.keys)
    _DETECTORS = tuple(
        (convention, convention.detect)
        for convention in conventions
        if not (isinstance(convention, DescribedConvention) and convention.scopes)
    )
    _FIRST, _REST = _DETECTORS[:_ASKED_FIRST], _DETECTORS[_ASKED_FIRST:]
    _FIRST_MARKERS = Markers.together(tuple(convention.markers for convention, _ in _FIRST))
    _DETECTION_VALUES = tuple(dict.fromkeys(key for c in conventions for key in c.detection_values))
    CONVENTIONS = conventions
    _INFERENCE = VocabularyInference(_namespaces(given))
    _FORKS = _forks(given)
    _detected.clear()
    _run_names.clear()
    _handoff_names.clear()


def forks_of(attributes: Mapping[str, Any]) -> tuple[Fork, ...]:
    """The readers' vocabularies a span's keys under an unknown namespace read as (`forked.py`)."""
    return _FORKS.of(attributes)


def forks_of_spans(spans: Iterable[SpanRecord]) -> dict[Fork, None]:
    """`forks_of` each of these spans, the forks in their order, once each."""
    return _FORKS.of_spans(spans)


def inferred_reader(
    spans: Sequence[SpanRecord],
    works: Callable[[Collection[int]], bool],
    keyed: Sequence[SpanRecord] | None = None,
    called: Sequence[SpanRecord] = (),
) -> Convention | None:
    """The reader of a vocabulary of its own shared by these spans of one trace, none of which a
    reader in use gives a role (`inferred.py`), or None; the rest as `VocabularyInference.reader`."""
    return _INFERENCE.reader(spans, works, keyed, called)


def inferred_reader_without(
    names: frozenset[str], spans: Sequence[SpanRecord], works: Callable[[Collection[int]], bool]
) -> Convention | None:
    """`inferred_reader` as if the readers `names` were not in use (`runs/unrun_descriptions.py`)."""
    return inference_without(CONVENTIONS, names).reader(spans, works)


def may_be_kind_key(key: str) -> bool:
    """Whether `key` may be the kind key of a vocabulary inferred for the readers in use
    (`inferred.py`): its name says kind, outside their namespaces. The sidecar's screen of the
    spans it receives (`sidecar/span_marks.py`)."""
    return _INFERENCE.may_be_kind(key)


#: The names of the shipped descriptions (`descriptions/*.yaml`): `use_descriptions` may withhold them.
SHIPPED_DESCRIPTION_NAMES: tuple[str, ...] = tuple(dict.fromkeys(c.name for c in _SHIPPED_DESCRIBED))


def use_descriptions(
    descriptions: Sequence[ConventionDescription | Mapping[str, Any]],
    withheld: Collection[str] = (),
    runs_withheld: Collection[str] = (),
) -> None:
    """Read spans with these descriptions of instrumentations (the `conventions:` section) before
    the shipped readers, in their order; they replace the descriptions given before. Process-wide,
    as the shipped readers are: the processor, the sidecar and the CLI call it with their config's.
    Call it before spans flow: a trace already buffered was sorted by the readers of then.
    `withheld`: names of shipped descriptions left out (to measure what is read without them);
    `runs_withheld`: read without their run-finding clauses (`withheld_runs.py`)."""
    unknown = {*withheld, *runs_withheld} - set(SHIPPED_DESCRIPTION_NAMES)
    if unknown:
        raise ValueError(
            f"no shipped description named {', '.join(sorted(unknown))}: "
            f"they are {', '.join(SHIPPED_DESCRIPTION_NAMES)}"
        )
    shipped = tuple(c for c in SHIPPED if not (isinstance(c, DescribedConvention) and c.name in withheld))
    _derive((*described(descriptions), *without_runs(shipped, runs_withheld)))


def user_descriptions() -> tuple[ConventionDescription, ...]:
    """The descriptions in use (`use_descriptions`), in their order."""
    shipped = (*SHIPPED, *(c for c in CONVENTIONS if isinstance(c, RunsWithheld)))
    return tuple(c.description for c in described_of(CONVENTIONS) if c not in shipped)


def detection_values() -> tuple[str, ...]:
    """The attribute keys whose values the conventions in use compare to claim a span
    (`Convention.detection_values`): with its scope, name and attribute keys, a span's kind."""
    return _DETECTION_VALUES


def detect(span: SpanRecord) -> Convention | None:
    """The first convention whose markers the span carries (its scope's unless lent: `lent_scopes.py`). Past
    the first few (`_ASKED_FIRST`), decided once per kind: scope, name, keys and compared values."""
    return detect_with_kind_keys(span)[0]


def detect_with_kind_keys(span: SpanRecord) -> tuple[Convention | None, KindKeys | None]:
    """`detect`, with the span's kind keys (`kind_versions.kind_keys`) when its kind is remembered
    (None otherwise): a remembered kind spares run building their lookup, and the checks decided
    once for the kind (`kind_versions.of_kind`)."""
    # Asked inline, not through `_first_carrying`: this runs for every span the host ends.
    described = _BY_SCOPE.get(span.scope)
    attributes, first = span.attributes, _FIRST_MARKERS
    if described is not None:
        for convention, carries_markers in described:
            if carries_markers(span) and not lent_out(convention, span, first, _FIRST):
                return convention, None
    # `Markers.carried_by`, inline: this runs for every span.
    if (
        first is None
        or not attributes.keys().isdisjoint(first.keys)  # keys mark most of the first readers' spans
        or span.scope in first.scopes
        or span.name in first.names
    ):
        for convention, carries_markers in _FIRST:
            if carries_markers(span):
                return convention, None
    if len(attributes) > MAX_KIND_KEYS:
        return _detect_rest(span), None
    kind = (span.scope, span.name, tuple(map(attributes.get, _DETECTION_VALUES)), *attributes)
    try:
        return _detected[kind]
    except KeyError:
        reader = _detect_rest(span)
        keys = of_kind(kind_keys(attributes), attributes, _DETECTION_VALUES, relabelled(reader, span))
        if len(_detected) < _MAX_REMEMBERED_KINDS:
            _detected[kind] = (reader, keys)
        return reader, keys
    except TypeError:  # a value that cannot be a key (a list): this span is detected anew
        return _detect_rest(span), None


def _first_carrying(
    detectors: Iterable[tuple[Convention, Callable[[SpanRecord], bool]]], span: SpanRecord
) -> Convention | None:
    """The first of `detectors`' conventions whose markers the span carries."""
    for convention, carries_markers in detectors:
        if carries_markers(span):
            return convention
    return None


def _detect_rest(span: SpanRecord) -> Convention | None:
    return _first_carrying(_REST, span)


def _detect(span: SpanRecord) -> Convention | None:
    """`detect` without remembering: every reader asked, in order."""
    scoped = [r for r in _BY_SCOPE.get(span.scope, ()) if not lent_out(r[0], span, _FIRST_MARKERS, _FIRST)]
    return _first_carrying(scoped, span) or _first_carrying(_DETECTORS, span)


def also_reading(span: SpanRecord, claimed: Convention) -> Iterable[Convention]:
    """The readers found by their attributes alone (descriptions of keys a library writes on spans
    another one started: MLflow's autolog on Semantic Kernel's) that read the span too, its keys
    holding what `claimed` finds none of; not `claimed`, nor its own entry under any scope (of the
    same name, reading the same keys). Most spans carry no such reader's markers: one check."""
    if span.attributes.keys().isdisjoint(_BY_MARKERS_KEYS):
        return ()
    return (c for c in _BY_MARKERS if c.name != claimed.name and c.detect(span))


def model_call_reader(span: SpanRecord) -> Convention | None:
    """The span's reader as a model call by a kind key on it alone (`inferred_calls.py`)."""
    return MODEL_CALLS.reader(span, _INFERENCE)


def classify(span: SpanRecord) -> tuple[Convention, SpanRole] | None:
    """The span's convention and role, or None for spans that play no part in a run."""
    convention = detect(span)
    if convention is None:
        return None
    role = convention.role(span)
    return (convention, role) if role is not None else None


_derive(SHIPPED)

__all__ = [
    "CONVENTIONS",
    "HANDOFF_NAME_PREFIXES",
    "MAX_KIND_KEYS",
    "RUN_MARKERS",
    "RUN_MARKER_KEYS",
    "RUN_NAME_PREFIXES",
    "RUN_START_SCOPES",
    "SHIPPED",
    "SHIPPED_DESCRIPTION_NAMES",
    "Convention",
    "ConventionDescription",
    "SpanRole",
    "classify",
    "detect",
    "detect_with_kind_keys",
    "detection_values",
    "forks_of",
    "forks_of_spans",
    "inferred_reader",
    "may_be_kind_key",
    "may_hand_off",
    "may_start_run",
    "use_descriptions",
    "user_descriptions",
]
