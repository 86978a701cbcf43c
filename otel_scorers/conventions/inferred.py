"""A framework's own tracing vocabulary, inferred from the trace itself when no reader knows it.

Frameworks that trace themselves (Spring AI, Genkit, Langfuse, MLflow...) follow no GenAI
convention: each writes a key of its own that says what kind of work a span is, and keys beside
it, under the same prefix, that hold its input, output and name. A shipped description
(`descriptions/*.yaml`) reads those it knows; the next framework's, nobody has described. For the
spans no reader gives a role, in a trace in which no reader found a run (`span_roles`), this
finds such a vocabulary and writes its description, read by `DescribedConvention` as any other,
so one implementation reads both:

- the kind key: a key whose name says kind (`*.kind`, `*.type`, `*.spanType`, `*:subtype`...),
  outside the namespace of every reader in use (theirs and `gen_ai.*` are read already, but for a
  kind key the GenAI conventions do not define: `gen_ai.span.kind`), whose values on the trace's
  spans name an agent run (`agent`, `flow`, `workflow`, `chat_client`...)
  and a tool call or a model call beside it (`tool`, `tool_call`, `llm`, `generation`...), or
  whose runs each have a model or tool span (of any reader) under them, or, agents', each record
  their request and answer under its prefix (`inferred_recorded_runs`). A key naming tool and model
  calls but no run is read too, its runs those the rules every reader shares find (LangChain's
  metadata); one naming calls of one kind only, where that metadata marks a graph. Any other key
  says too little: nothing is read (a wrong run is worse than none). Of two keys naming as much,
  the one on more spans, then the shorter (not a copy). When values of both tiers name
  runs (`agent` and `workflow`), only the agent is one;
  agent spans side by side taking turns (A, B, A) are a conversation: nothing is read. A key
  naming runs on every span of an agent's work (its steps too) leaves the calls' kinds to another
  kind key on the steps naming tools or models and no run; a run is then a span that key does
  not mark, told from the steps by a key every run span carries and no step does;
- the keys that share its prefix (each leading part of the key, longest first): the input
  (`<prefix>input`, `<prefix>spanInputs`, `<prefix>input.value`...), the output, the name, a tool's
  arguments and result, a model's name, found on the spans of each kind (a call's under its
  kind's own value first: `tool.name`, `llm.model`; not a name under a run's kind,
  `acme:flow:name`, which names the run a call is in); values JSON-quoted on
  the kind key (`"AGENT"`) say every value is JSON;
- the agent's name: the prefix's name key, else a field named for it in the output each run
  recorded (`current_agent_name`), else the run span's name (less the method, when each
  run span is named after a traced method: `ReAct.forward`) unless it only labels the kind
  (`spring_ai chat_client`).

The description is named `inferred:<kind key>`: it is the reader of the runs it finds, as
`runs --explain` and `AgentRun.convention` say. Inferred descriptions are remembered by what they
were inferred from, so a stream of traces of one framework builds one reader.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache
from typing import Any

from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.inferred_definitions import defined_runs_reader
from otel_scorers.conventions.inferred_description import (
    GEN_AI_PREFIX,
    GENERIC_OUTPUT,
    TAILS,
    inferred_description,
    prefixes,
    source_key,
)
from otel_scorers.conventions.inferred_handoffs import handoff_reading
from otel_scorers.conventions.inferred_kinds import (
    CHAIN_KINDS,
    KINDS,
    MODEL_KINDS,
    RUN_KINDS,
    TOOL_KINDS,
    normalised,
)
from otel_scorers.conventions.inferred_names import (
    SEPARATORS,
    labels_kind,
    name_keys_name_steps,
    recorded_name,
    traced_methods,
)
from otel_scorers.conventions.inferred_recorded_runs import recorded_runs
from otel_scorers.conventions.inferred_records import records_of
from otel_scorers.conventions.inferred_span_names import span_names_reader
from otel_scorers.conventions.inferred_steps import (
    call_key_apart,
    key_of_runs_alone,
    spans_of_each_kind,
    turns_of_a_conversation,
)
from otel_scorers.conventions.inferred_tops import OneKindKeys
from otel_scorers.conventions.kind_versions import KIND_KEY, kind_keys
from otel_scorers.gen_ai_names import (
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_TYPE,
    GEN_AI_TOKEN_TYPE,
    GEN_AI_TOOL_TYPE,
)
from otel_scorers.span_record import SpanRecord

#: The namespace of the GenAI conventions, read by the GenAI reader.
GEN_AI_NAMESPACE = "gen_ai"
#: The keys of the GenAI conventions whose name says kind: the GenAI reader's (a tool's `function`
#: type names no tool span), where another key of the namespace may be a tracer's own kind key.
_GEN_AI_TYPE_KEYS = frozenset({GEN_AI_OUTPUT_TYPE, GEN_AI_TOKEN_TYPE, GEN_AI_TOOL_TYPE})
_MAX_REMEMBERED_READERS = 64
_MAX_REMEMBERED_KINDS = 4096
_READ_KINDS = KINDS | CHAIN_KINDS
#: The longest text `normalised` reads as a kind value.
_LONGEST_KIND = 64


def _names_kind(value: Any) -> bool:
    """The value names a kind of work (`KINDS`), read once per text: kind values repeat, and
    none is longer than `_LONGEST_KIND` (`normalised`)."""
    return type(value) is str and len(value) <= _LONGEST_KIND and _text_names_kind(value)


@lru_cache(maxsize=_MAX_REMEMBERED_KINDS)
def _text_names_kind(value: str) -> bool:
    return normalised(value) in _READ_KINDS


class VocabularyInference:
    """Infers the vocabulary of the spans no reader gives a role, for the readers in use: keys
    of their namespaces are theirs, never inferred."""

    def __init__(self, known_namespaces: Iterable[str]) -> None:
        self._known = frozenset(known_namespaces) | {GEN_AI_NAMESPACE}
        self._readers: dict[tuple[Any, ...], DescribedConvention | None] = {}
        #: Kinds of span (scope, name, keys: two instrumentations may share a
        #: scope's name and a span's) seen holding no kind of work: the keys named as kind keys on
        #: it, and their values.
        self._without_kinds: dict[tuple[str | None, ...], tuple[tuple[str, ...], tuple[Any, ...]]] = {}

    def may_be_kind(self, key: str) -> bool:
        """Whether `key` may be a kind key: its name says kind, outside the readers' namespaces."""
        return KIND_KEY.search(key) is not None and self._own_key(key)

    def _own_key(self, key: str) -> bool:
        """Whether `key` is outside the readers' namespaces, or a GenAI key the conventions do not
        define as a kind (`gen_ai.span.kind`)."""
        first = SEPARATORS.split(key, 1)[0]
        return first not in self._known or (first == GEN_AI_NAMESPACE and key not in _GEN_AI_TYPE_KEYS)

    def _kind_values(
        self, spans: Sequence[SpanRecord], named: list[SpanRecord] | None = None
    ) -> dict[str, Counter[str]]:
        """How many of the spans carry each kind value, under each of their kind keys; `named`
        gets the spans carrying a key named as a kind key, whatever its value."""
        values: dict[str, Counter[str]] = {}
        for span in spans:
            for key in self._kind_keys_of(span, named):
                kind = normalised(span.attributes[key])
                if kind is not None:
                    values.setdefault(key, Counter())[kind] += 1
        return values

    def _kind_keys_of(self, span: SpanRecord, named_spans: list[SpanRecord] | None = None) -> Any:
        """The keys of the span that may be a kind key and hold a kind of work, decided once per
        kind of span (its scope, name, keys: two instrumentations may share
        a scope's name and a span's) for the many that carry none. Only a
        key whose value names a kind of work counts (`messaging.message.type = request` does
        not), and a value is each span's own: spans of one kind may hold a kind of work on one
        and none on another (MLflow names a LangChain graph's `"CHAIN"` span and an agent's
        `"AGENT"` span after the agent), so a kind of span is remembered with its values."""
        kind = (span.scope, span.name, *span.attributes)
        attributes = span.attributes
        seen = self._without_kinds.get(kind)
        if seen is not None and (not seen[0] or tuple(map(attributes.get, seen[0])) == seen[1]):
            if seen[0] and named_spans is not None:
                named_spans.append(span)
            return ()
        named = self.kind_keys_in(span)
        if named and named_spans is not None:
            named_spans.append(span)
        found = [key for key in named if _names_kind(attributes[key])]
        if not found and len(self._without_kinds) < _MAX_REMEMBERED_KINDS:
            self._without_kinds[kind] = (tuple(named), tuple(map(attributes.get, named)))
        return found

    def kind_keys_in(self, span: SpanRecord) -> list[str]:
        """The span's keys whose name says kind (`kind_versions.kind_keys`), outside the readers'
        namespaces; on a span saying its operation the GenAI way (`gen_ai.operation.name`), none of
        the GenAI namespace: the GenAI reader reads its kind."""
        genai = GEN_AI_OPERATION_NAME in span.attributes
        return [
            key
            for key in kind_keys(span.attributes).named
            if self._own_key(key) and not (genai and key.startswith(GEN_AI_PREFIX))
        ]

    def reader(
        self,
        spans: Sequence[SpanRecord],
        works: Callable[[Collection[int]], bool],
        may_be_keyed: Sequence[SpanRecord] | None = None,
        called: Sequence[SpanRecord] = (),
    ) -> DescribedConvention | None:
        """The reader of the vocabulary these spans (one trace's, none with a role) share, or
        None when they carry none that says which are agent runs and what they call. `works`
        says whether each of these span ids has a model or tool span (of any reader) under it:
        what a kind key naming runs alone, not what they call, needs to be believed. Where no kind
        key says which spans are runs, runs recording their agent's definition are read
        (`inferred_definitions`), else the kinds the spans' names say (`inferred_span_names`).
        `may_be_keyed`: those of the spans that may carry a kind key, in their order, when known
        (their kind's keys, as detection found them): only those are looked at for one. `called`:
        the trace's spans another reader read as calls (a model call by its GenAI keys): where
        neither the spans' own kind values nor agents' definitions say which are runs, their
        values of a kind key the spans carry count too (the key names those calls as well)."""
        keyed: list[SpanRecord] = []  # the spans with a kind key, whatever its value
        may_be = spans if may_be_keyed is None else may_be_keyed
        values = self._kind_values(may_be, keyed) if may_be else {}  # most traces: no kind value
        return (
            (self._kind_key_reader(spans, works, values) if values else None)
            or (defined_runs_reader(keyed, self.kind_keys_in, works) if keyed else None)
            or (self._kind_key_reader(spans, works, values, called) if values and called else None)
            or span_names_reader(spans, works)
        )

    def _runs_believed(
        self,
        key: str,
        runs: frozenset[str],
        calls_named: bool,
        run_spans: Sequence[SpanRecord],
        spans: Sequence[SpanRecord],
        works: Callable[[Collection[int]], bool],
    ) -> bool:
        """Whether the spans `key` names runs are runs: it names their calls too, or they record
        their request and answer (`inferred_recorded_runs`), or each has work under it. What other
        traces showed of the key counts for nothing: a trace is read the same whatever came before."""
        return (
            calls_named
            or recorded_runs(runs, run_spans, spans, lambda keys, part: source_key(prefixes(key), keys, part))
            or works({span.span_id for span in run_spans})
        )

    def _kind_key_reader(
        self,
        spans: Sequence[SpanRecord],
        works: Callable[[Collection[int]], bool],
        values: dict[str, Counter[str]],
        called: Sequence[SpanRecord] = (),
    ) -> DescribedConvention | None:
        """The reader of the kind key these `values` (the spans' kind values, by key) say; with
        `called`, the values on those spans count too."""
        if called:
            values = {key: counts.copy() for key, counts in values.items()}
            for key, counts in self._kind_values(called).items():
                if key in values:
                    values[key].update(counts)
        one_kind = OneKindKeys(spans, lambda key, keys: source_key(prefixes(key), keys, "input"))
        chosen = _kind_key(values, one_kind)
        if chosen is None:
            return None
        key, runs, calls_named = chosen
        top = (one_kind.top_inputs[key],) if not runs and key in one_kind.top_inputs else ()
        call_key = call_key_apart(values, key) if runs and not calls_named else None
        carrying = [span for span in spans if key in span.attributes]
        kinds = spans_of_each_kind(carrying, key, runs, call_key)
        only = key_of_runs_alone(kinds["run"], carrying, call_key)
        if call_key is not None and only is None:
            return None
        calls_named = calls_named or call_key is not None
        if turns_of_a_conversation(kinds["run"]):
            return None
        if not self._runs_believed(key, runs, calls_named, kinds["run"], spans, works):
            return None
        # A span naming the agent of another run as the one handed to (`inferred_handoffs`).
        handoff = handoff_reading(spans, kinds["run"]) if runs else None
        if not runs:  # the runs the shared rules find are read from the keys every span has
            kinds["run"] = carrying
        return self._described(key, runs, (call_key, only), top, carrying, kinds, handoff)

    def _described(
        self,
        key: str,
        runs: frozenset[str],
        calls_apart: tuple[str | None, str | None],
        top: tuple[str, ...],
        carrying: Sequence[SpanRecord],
        kinds: dict[str, list[SpanRecord]],
        handoff: dict[str, Any] | None = None,
    ) -> DescribedConvention | None:
        """The reader of the vocabulary of kind key `key` over these spans of each kind, made once
        for what it is inferred from."""
        raw, json_values = _kind_values(key, calls_apart[0], carrying)
        names_label = bool(runs) and all(labels_kind(span.name, runs) for span in kinds["run"])
        methods = traced_methods(kinds["run"]) if runs else ()
        name_keys = not name_keys_name_steps(carrying)
        keys = {kind: frozenset(k for s in found for k in s.attributes) for kind, found in kinds.items()}
        records = records_of(kinds, TAILS)
        signature: tuple[Any, ...] = (
            repr(records),
            key,
            top,
            calls_apart,
            methods,
            tuple(sorted(raw)),
            json_values,
            names_label,
            name_keys,
            repr(handoff),
        )
        signature += tuple(keys.values())
        try:
            return self._readers[signature]
        except KeyError:
            pass
        # The output under the kind key's prefix, else under the generic bare key (`generic_io`).
        output = (source_key(prefixes(key), keys["run"], "output") or GENERIC_OUTPUT) if runs else None
        named = (output, recorded_name(kinds["run"], output)) if output else None
        chain_runs = bool(runs) and runs <= CHAIN_KINDS
        description = inferred_description(
            key,
            raw,
            keys,
            json_values,
            names_label,
            calls_apart,
            methods,
            named,
            chain_runs,
            top,
            records,
            name_keys,
            handoff,
        )
        reader = DescribedConvention(description) if description is not None else None
        if len(self._readers) < _MAX_REMEMBERED_READERS:
            self._readers[signature] = reader
        return reader


def _kind_values(key: str, calls_key: str | None, carrying: Sequence[SpanRecord]) -> tuple[set[str], bool]:
    """The values the kind keys hold on these spans, and whether each is written as a JSON string."""
    raw = {
        str(span.attributes[k]) for span in carrying for k in (key, calls_key or key) if k in span.attributes
    }
    return raw, all(len(value) >= 2 and value[0] == value[-1] == '"' for value in raw)


def _kind_key(
    values: dict[str, Counter[str]],
    one_kind: OneKindKeys,
) -> tuple[str, frozenset[str], bool] | None:
    """The key whose values name runs (the one naming the tools or models they call too, on most
    spans, first), with the values that name its runs (the first tier present) and whether it
    names their calls. `one_kind` says whether a framework's metadata marks one of the spans
    as an agent's graph (a run the rules every reader share find) and whether a key naming calls
    of one kind is read (`inferred_tops`)."""
    found: list[tuple[bool, bool, int, int, str, frozenset[str]]] = []
    for key, counts in values.items():
        runs = next((tier & counts.keys() for tier in RUN_KINDS if tier & counts.keys()), frozenset())
        tools = any(kind in TOOL_KINDS for kind in counts)
        models = any(kind in MODEL_KINDS for kind in counts)
        chains = frozenset(CHAIN_KINDS & counts.keys())
        if not runs and not models and chains and tools:
            runs = frozenset() if one_kind.graph_marked() else chains
        # Without a run kind, a key naming both tools and model calls is a vocabulary of kinds:
        # its runs are the ones the rules every reader shares find (a framework's own mark).
        # Naming calls of one kind (an agent that answered without a tool), it is read only where
        # the framework's metadata marks a graph among the spans, or where the trace's root is
        # the key's untyped unit of work around them (`inferred_tops`).
        if not (runs or ((tools or chains) and models)) and (tools or models) and not one_kind.read(key):
            continue
        if runs or tools or models:
            # Of two keys on as many spans, the shorter: not a copy (`acme_metadata.event_type` of
            # `acme_event_type`).
            found.append((bool(runs), tools or models, sum(counts.values()), -len(key), key, frozenset(runs)))
    if not found:
        return None
    _, calls, _, _, key, runs = max(found)
    return key, runs, calls
