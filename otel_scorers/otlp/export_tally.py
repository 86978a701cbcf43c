"""An exporter wrapped to count what it sent: the command line's and the example traffic's line
about what went out over OTLP, and what did not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ExportTally:
    """A span or log exporter that counts what its wrapped exporter accepted: items `sent`, and
    the `failed` batches with the `unsent` items in them."""

    def __init__(self, exporter: Any) -> None:
        self._exporter = exporter
        self.sent = 0
        self.failed = 0
        self.unsent = 0
        self._closed = False

    def export(self, batch: Sequence[Any]) -> Any:
        result = self._exporter.export(batch)
        if getattr(result, "name", "") == "SUCCESS":
            self.sent += len(batch)
        else:
            self.failed += 1
            self.unsent += len(batch)
        return result

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True
