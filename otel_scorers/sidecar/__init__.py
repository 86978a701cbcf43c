"""`otel-scorers serve`: an OTLP receiver service that scores what an OpenTelemetry Collector sends.

    sidecar = Sidecar(load_config("config.yaml"))
    await sidecar.start()
    ...
    await sidecar.stop()

Needs the `sidecar` extra: `pip install 'otel-scorers[sidecar]'`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from otel_scorers.config import Config, load_config
from otel_scorers.sidecar.service import Sidecar
from otel_scorers.sidecar.signals import stop_on_signals


async def serve(config: Config, stop: asyncio.Event | None = None) -> None:
    """Run until `stop` is set or the process gets SIGTERM/SIGINT, then shut down gracefully."""
    stop = stop or asyncio.Event()
    sidecar = Sidecar(config)
    stop_on_signals(stop)
    await sidecar.start()
    try:
        await stop.wait()
    finally:
        await sidecar.stop()


def run(config_path: str | Path) -> int:
    asyncio.run(serve(load_config(config_path)))
    return 0


__all__ = ["Sidecar", "run", "serve"]
