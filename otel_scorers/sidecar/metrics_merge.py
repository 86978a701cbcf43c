"""`/metrics` of a sidecar that scores in child processes: every process's exposition as one."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector, CollectorRegistry


class _Families(Collector):
    def __init__(self, families: Sequence[Metric]) -> None:
        self._families = families

    def collect(self) -> Sequence[Metric]:
        return self._families


def merge_prometheus_text(*texts: bytes) -> bytes:
    """One exposition of several processes' metrics: series of the same family and labels are
    added up (the processes count different things under the same names, e.g. runs dropped by
    the receiving side and runs assembled by the scoring side)."""
    families: dict[str, Metric] = {}
    values: dict[tuple[str, str, tuple[tuple[str, str], ...]], int] = {}
    for text in texts:
        for family in text_string_to_metric_families(text.decode()):
            merged = families.get(family.name)
            if merged is None:
                merged = families[family.name] = Metric(
                    family.name, family.documentation, family.type, family.unit
                )
            for sample in family.samples:
                key = (family.name, sample.name, tuple(sorted(sample.labels.items())))
                index = values.get(key)
                if index is None:
                    values[key] = len(merged.samples)
                    merged.samples.append(sample)
                else:
                    existing = merged.samples[index]
                    merged.samples[index] = existing._replace(value=existing.value + sample.value)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(list(families.values())))
    return generate_latest(registry)
