"""A file of lines that never grows past a size: when the next line would take it over
`max_bytes`, it is renamed `PATH.1` (the last backup, `PATH.<backups>`, dropped; the others moved
up one) and a new one started, as the Collector's file exporter rotates. Several processes may
append to one file (the sidecar's scoring processes): each append and rotation holds an exclusive
lock on `PATH.lock`, so lines never interleave. A line longer than `max_bytes` is not written;
it is counted in `too_long`."""

from __future__ import annotations

import os
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one process per file
    fcntl = None  # type: ignore[assignment]


class RotatingFile:
    def __init__(self, path: Path, max_bytes: int | None, backups: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.written = 0
        self.too_long = 0
        self._lock = threading.Lock()
        self._lock_path = path.with_name(path.name + ".lock")

    def append(self, line: bytes) -> bool:
        """Write `line` (ending in a newline), rotating first if it would not fit. False when it
        is longer than the whole file may be."""
        if self.max_bytes is not None and len(line) > self.max_bytes:
            self.too_long += 1
            return False
        with self._lock, self._lock_path.open("ab") as lock:
            if fcntl is not None:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when `lock` closes
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if self.max_bytes is not None and size and size + len(line) > self.max_bytes:
                self._rotate()
            with self.path.open("ab") as out:
                out.write(line)
            self.written += 1
        return True

    def _rotate(self) -> None:
        if self.backups == 0:
            self.path.unlink(missing_ok=True)
            return
        for number in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{number}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{number + 1}"))
        os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
