"""Model calls of a vocabulary nobody described, by the kind key on their span alone.

A library may write its keys onto spans another started, or its own spans inside another's runs
(MLflow's autolog: `mlflow.spanType = "CHAT_MODEL"` and `mlflow.spanInputs` on Semantic Kernel's
model spans, `"LLM"` client spans inside AutoGen's agent spans). With no description of it, a kind
key on such a span naming a model call (`inferred.py` finds kind keys) says it is one, and the keys
under that key's prefix hold its messages, as an inferred vocabulary reads them. Decided once per
kind of span (its scope, name, keys) and kind value.
"""

from __future__ import annotations

from typing import Any

from otel_scorers.conventions.described import DescribedConvention
from otel_scorers.conventions.inferred import VocabularyInference
from otel_scorers.conventions.inferred_description import inferred_description
from otel_scorers.conventions.inferred_kinds import MODEL_KINDS, normalised
from otel_scorers.span_record import SpanRecord

_MAX_REMEMBERED = 4096
#: What the readers remembered say of a kind value naming no model call, and of one not seen.
_NO_CALL, _UNSEEN = object(), object()


class ModelCallReaders:
    """The reader of a span as a model call by a kind key on it, for the readers in use (their
    namespaces' keys are theirs, never read so)."""

    def __init__(self) -> None:
        self._inference: VocabularyInference | None = None
        #: The keys that may be a kind key, by kind of span (scope, name, keys).
        self._named: dict[tuple[Any, ...], tuple[str, ...]] = {}
        #: The reader, by kind key, its value and kind of span; None: it reads no messages.
        self._readers: dict[tuple[Any, ...], DescribedConvention | object | None] = {}

    def reader(self, span: SpanRecord, inference: VocabularyInference) -> DescribedConvention | None:
        """The span's reader as a model call whose messages are under the prefix of a kind key
        on it naming one, for the readers `inference` is for; None when no kind key on it names
        a model call, or none holds them."""
        if inference is not self._inference:  # other readers in use: other namespaces
            self._inference = inference
            self._named.clear()
            self._readers.clear()
        attributes = span.attributes
        kind = (span.scope, span.name, *attributes)
        named = self._named.get(kind)
        if not named:
            if named is not None:
                return None  # most spans: no key that may say their kind
            named = tuple(inference.kind_keys_in(span))
            if len(self._named) < _MAX_REMEMBERED:
                self._named[kind] = named
        for key in named:
            raw = attributes.get(key)
            if type(raw) is not str:
                continue
            signature = (key, raw, kind)
            reader = self._readers.get(signature, _UNSEEN)
            if reader is _UNSEEN:
                model = normalised(raw) in MODEL_KINDS
                reader = _model_reader(key, raw, frozenset(attributes)) if model else _NO_CALL
                if len(self._readers) < _MAX_REMEMBERED:
                    self._readers[signature] = reader
            if reader is not _NO_CALL:
                return reader if isinstance(reader, DescribedConvention) else None
        return None


def _model_reader(key: str, raw: str, keys: frozenset[str]) -> DescribedConvention | None:
    """The reader of a model call by its kind key `key` (written `raw`) among `keys`, when the
    keys under its prefix hold its messages."""
    quoted = len(raw) >= 2 and raw[0] == raw[-1] == '"'
    found = {"run": frozenset[str](), "tool": frozenset[str](), "model": keys}
    described = inferred_description(key, [raw], found, quoted, names_label=True)
    model = described.model if described is not None else None
    if described is None or model is None or (model.input is None and model.output is None):
        return None
    return DescribedConvention(described)


#: The readers for the readers in use (`conventions.model_call_reader`).
MODEL_CALLS = ModelCallReaders()
