"""Live example traffic: the bundled example agent answers its demo questions round after round and
sends its traces over OTLP, so that a running stack (collector, sidecar, Prometheus, Grafana,
Jaeger) always has fresh runs to score.

    python -m otel_scorers.demos.example_traffic --endpoint http://localhost:4317 --interval 2

Without `--endpoint` the OpenTelemetry SDK's `OTEL_EXPORTER_OTLP_ENDPOINT` (or its default,
localhost:4317) applies. SIGTERM or SIGINT stops it after the current run, with the traces sent.
At the end it says how many runs and spans it sent, and exits 1 when any was not sent.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from otel_scorers.demos.example_agent import DEMO_RUNS, ExampleAgent
from otel_scorers.human_text import counted
from otel_scorers.otlp.counting_exporters import CountingExporter
from otel_scorers.otlp.endpoint import DEFAULT_PROTOCOL, PROTOCOLS, unreachable
from otel_scorers.otlp.exporters import ExportConfig, export_endpoint, signal_exporter

INTERVAL_S = 1.0  # between two runs: a stack's dashboards see a steady trickle


@dataclass(frozen=True, slots=True)
class TrafficSent:
    """What a stretch of example traffic made, and what of it the endpoint accepted."""

    runs: int
    spans: int
    unsent: int


def send_traffic(
    endpoint: str | None = None,
    protocol: str = DEFAULT_PROTOCOL,
    interval_s: float = INTERVAL_S,
    rounds: int | None = None,
    stop: threading.Event | None = None,
) -> TrafficSent:
    """Run every demo script once per round, `interval_s` apart, until `rounds` are done or `stop`
    is set. The traces are flushed before it returns what was made and sent."""
    stop = stop or threading.Event()
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "weather-service")})
    # The example agent's own provider, as an agent of a user's builds it; its exporter is the
    # one the export settings make.
    provider = TracerProvider(resource=resource)
    # Left out, the endpoint is the SDK's environment's (`OTEL_EXPORTER_OTLP_*`).
    settings = ExportConfig(endpoint=endpoint, protocol=protocol)  # type: ignore[arg-type]
    exporter = CountingExporter(signal_exporter(settings, "traces"), SpanExportResult.FAILURE)
    provider.add_span_processor(BatchSpanProcessor(exporter))  # type: ignore[arg-type]
    agent = ExampleAgent(tracer=provider.get_tracer("example-agent"))
    made = 0
    done = 0
    try:
        while not stop.is_set() and (rounds is None or done < rounds):
            for script in DEMO_RUNS:
                agent.run(script)
                made += 1
                if stop.wait(interval_s):
                    break
            done += 1
    finally:
        provider.shutdown()  # sends what is still batched
    return TrafficSent(made, exporter.sent + exporter.unsent, exporter.unsent)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m otel_scorers.demos.example_traffic",
        description="Send the example agent's traces over OTLP, continuously.",
    )
    parser.add_argument("--endpoint", help="OTLP endpoint (default: OTEL_EXPORTER_OTLP_ENDPOINT)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=DEFAULT_PROTOCOL)
    parser.add_argument(
        "--interval", type=float, default=INTERVAL_S, help="seconds between two runs (default %(default)g)"
    )
    parser.add_argument("--rounds", type=int, help="stop after this many rounds of the demo questions")
    args = parser.parse_args(argv)
    if args.interval < 0:
        parser.error(f"--interval must be 0 or more, not {args.interval}")
    if args.rounds is not None and args.rounds < 1:
        parser.error(f"--rounds must be 1 or more, not {args.rounds}")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda _signum, _frame: stop.set())
    destination = export_endpoint(ExportConfig(endpoint=args.endpoint, protocol=args.protocol))
    problem = unreachable(destination, args.protocol)
    if problem is not None:  # a collector may still come up: say so, and keep going
        print(f"example traffic: nothing accepts traces at {destination} yet: {problem}", file=sys.stderr)
    sent = send_traffic(args.endpoint, args.protocol, args.interval, args.rounds, stop)
    if sent.unsent:
        print(
            f"example traffic: {counted(sent.runs, 'run')} made, but {sent.unsent} of their {counted(sent.spans, 'span')} were "
            f"not sent to {destination} (the exporter's messages above say why)",
            file=sys.stderr,
        )
        return 1
    print(
        f"example traffic: {counted(sent.runs, 'run')} sent ({counted(sent.spans, 'span')}) to {destination}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
