"""Trace-id sampling: OpenTelemetry's consistent probability rule, and per-binding rate limits."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_scorers.selection.sampling import RateLimiter, TraceIdSampler, threshold_for

trace_ids = st.integers(min_value=1, max_value=(1 << 128) - 1)
rates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(trace_ids, rates)
def test_same_rate_picks_the_same_traces(trace_id: int, rate: float) -> None:
    assert TraceIdSampler(rate).sampled(trace_id) == TraceIdSampler(rate).sampled(trace_id)


@given(trace_ids, rates, rates)
def test_a_lower_rate_picks_a_subset_of_a_higher_one(trace_id: int, a: float, b: float) -> None:
    low, high = sorted((a, b))
    if TraceIdSampler(low).sampled(trace_id):
        assert TraceIdSampler(high).sampled(trace_id)


@given(trace_ids)
def test_rate_one_keeps_all_and_rate_zero_none(trace_id: int) -> None:
    assert TraceIdSampler(1.0).sampled(trace_id)
    assert not TraceIdSampler(0.0).sampled(trace_id)


@given(trace_ids)
def test_only_the_rightmost_56_bits_decide(trace_id: int) -> None:
    other_high_bits = trace_id ^ (0xABCDEF << 100)
    for rate in (0.01, 0.3, 0.5, 0.99):
        assert TraceIdSampler(rate).sampled(trace_id) == TraceIdSampler(rate).sampled(other_high_bits)


@pytest.mark.parametrize("rate", [0.001, 0.01, 0.1, 0.25, 0.5, 0.9])
def test_observed_rate_over_100k_random_trace_ids(rate: float) -> None:
    generator = random.Random(20261202)
    sampler = TraceIdSampler(rate)
    n = 100_000
    kept = sum(sampler.sampled(generator.getrandbits(128)) for _ in range(n))
    expected = rate * n
    # Five standard deviations of a binomial: fails by chance about once in 3.5 million runs.
    tolerance = 5 * (n * rate * (1 - rate)) ** 0.5
    assert abs(kept - expected) <= tolerance, (kept, expected, tolerance)


def test_threshold_matches_the_specification_examples() -> None:
    # OTel's threshold for probability p is (1 - p) * 2^56; 50% is 0x80000000000000.
    assert threshold_for(0.5) == 0x80000000000000
    assert threshold_for(1.0) == 0
    assert threshold_for(0.0) == 1 << 56
    with pytest.raises(ValueError, match="between 0 and 1"):
        threshold_for(1.5)


def test_rate_limiter_allows_a_burst_then_refills_per_minute() -> None:
    limiter = RateLimiter(60)  # one a second
    start = 1000.0
    limiter._last = start  # a deterministic clock for the test
    assert sum(limiter.try_acquire(start) for _ in range(100)) == 60
    assert not limiter.try_acquire(start + 0.5)
    assert limiter.try_acquire(start + 1.01)
    assert not limiter.try_acquire(start + 1.02)
    with pytest.raises(ValueError, match="between 1 and 1,000,000"):
        RateLimiter(0)
