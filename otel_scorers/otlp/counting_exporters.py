"""OTLP span, log and metric exporters wrapped to count what they sent and what they could not,
and to stop sending a signal the endpoint refuses (`refusal.py`): what a command says went out
over OTLP, and what a shutdown reports it could not send."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData

from otel_scorers.otlp.refusal import SignalRefusal


class CountingExporter:
    """An OTLP span or log exporter that counts what it sent (`sent`) and what it could not
    (`unsent`). Once shut down it fails
    at once: the SDK's processors hand it what is still queued, which is then counted, not sent.
    Once the endpoint has refused the signal (`refusal`), nothing more is sent, and what is
    not sent is counted there, as refused rather than unsent."""

    def __init__(self, inner: Any, failure: Any, refusal: SignalRefusal | None = None) -> None:
        self.inner = inner
        self._failure = failure
        self._refusal = refusal
        self.sent = 0
        self.unsent = 0
        self.closed = False

    def _refused(self, batch: Sequence[Any]) -> bool:
        if self._refusal is None or self._refusal.reason is None:
            return False
        self._refusal.count(len(batch))
        return True

    def export(self, batch: Sequence[Any]) -> Any:
        if self._refused(batch):
            return self._failure
        if self.closed:
            self.unsent += len(batch)
            return self._failure
        result = self.inner.export(batch)
        if self._refused(batch):  # refused by this very export
            return self._failure
        # By name: the SDK's log exporters answer with `LogRecordExportResult`, whose members are
        # not `LogExportResult`'s (its older name, still exported).
        if getattr(result, "name", "") == "SUCCESS":
            self.sent += len(batch)
        else:
            self.unsent += len(batch)
        return result

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000) -> None:
        """Ends a send in progress too: the SDK's exporters stop retrying when shut down."""
        if not self.closed:
            self.closed = True
            self.inner.shutdown()


class CountingMetricExporter(MetricExporter):
    """`CountingExporter` for metrics: remembers whether the last export failed. Metrics are
    cumulative, so only the last export matters; once shut down it fails at once, silently (the
    SDK's reader collects once more on shutdown, after the final flush). Metrics the endpoint
    refuses are not sent and not reported lost: /metrics still serves them."""

    def __init__(self, inner: MetricExporter, refusal: SignalRefusal | None = None) -> None:
        super().__init__(inner._preferred_temporality, inner._preferred_aggregation)
        self.inner = inner
        self._refusal = refusal
        self.last_failed = False
        self.closed = False

    def _refused(self) -> bool:
        return self._refusal is not None and self._refusal.reason is not None

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        if self.closed or self._refused():
            return MetricExportResult.FAILURE
        result: MetricExportResult = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        self.last_failed = result is MetricExportResult.FAILURE and not self._refused()
        return MetricExportResult.FAILURE if self._refused() else result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self.closed:
            self.closed = True
            self.inner.shutdown()
