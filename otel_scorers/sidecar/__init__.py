"""`otel-scorers serve`: an OTLP receiver service that scores what an OpenTelemetry Collector sends.

    sidecar = Sidecar(load_config("config.yaml"))
    await sidecar.start()
    ...
    await sidecar.stop()

Needs the `sidecar` extra: `pip install -e '.[sidecar]'` in a checkout of the otel-scorers
repository (or `make sidecar`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from otel_scorers.config import Config, load_config
from otel_scorers.sidecar.export_destination import endpoint_configured
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


def with_console(config: Config) -> Config:
    """`serve --console`: a line per score on standard output. With no OTLP endpoint named
    (neither `sidecar.export.endpoint` nor `OTEL_EXPORTER_OTLP_ENDPOINT`), the console is then
    where scores go, instead of retrying a collector that nobody started."""
    sidecar = config.sidecar
    export = sidecar.export
    if not endpoint_configured(export):
        export = export.model_copy(update={"enabled": False})
    return config.model_copy(
        update={"sidecar": sidecar.model_copy(update={"console": True, "export": export})}
    )


def run(config_path: str | Path, console: bool = False) -> int:
    """`otel-scorers serve`: serve until stopped, then end the process."""
    config = load_config(config_path)
    asyncio.run(serve(with_console(config) if console else config))
    # Everything is sent or counted by now, within shutdown_timeout_s. Tearing the interpreter
    # down (gRPC's and the SDK's threads and exit hooks) takes half a second more, past the
    # limit a pod is given to stop: the scoring process ends the same way.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


__all__ = ["Sidecar", "run", "serve", "with_console"]
