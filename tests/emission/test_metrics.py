"""`Tally`: counters kept in a dict and reported at collection, as the SDK would report them."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_scorers.metrics import TALLY_LIMIT, Tally


def points(reader: InMemoryMetricReader) -> dict[tuple[tuple[str, Any], ...], float]:
    data = reader.get_metrics_data()
    assert data is not None
    found = {}
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                assert metric.name == "things"
                assert metric.data.is_monotonic
                for point in metric.data.data_points:
                    found[tuple(sorted(point.attributes.items()))] = point.value
    return found


def test_a_tally_reports_cumulative_sums_per_attribute_set_and_leaves_out_none() -> None:
    reader = InMemoryMetricReader()
    tally = Tally(MeterProvider(metric_readers=[reader]).get_meter("t"), "things", "1", "Things.", ("a", "b"))
    tally.add(1, "x", None)
    tally.add(2, "x", None)
    tally.add(1, "x", "y")
    assert points(reader) == {(("a", "x"),): 3, (("a", "x"), ("b", "y")): 1}
    tally.add(4, "x", "y")
    assert points(reader)[(("a", "x"), ("b", "y"))] == 5  # cumulative across collections


def test_a_tally_past_its_limit_counts_new_attribute_sets_as_overflow() -> None:
    reader = InMemoryMetricReader()
    tally = Tally(MeterProvider(metric_readers=[reader]).get_meter("t"), "things", "1", "Things.", ("n",))
    for number in range(TALLY_LIMIT + 10):
        tally.add(1, str(number))
    tally.add(1, "0")  # a set it already has still counts as itself
    found = points(reader)
    assert len(found) == TALLY_LIMIT + 1
    assert found[(("n", "0"),)] == 2
    assert found[(("otel.metric.overflow", True),)] == 10
    assert sum(found.values()) == TALLY_LIMIT + 11  # nothing lost
