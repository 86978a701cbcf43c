"""The commands that start something and run until stopped: `demo`, `serve` and `fake-judge`."""

from __future__ import annotations

import argparse

from otel_scorers.cli.output import say
from otel_scorers.install import install_hint


def cmd_demo(args: argparse.Namespace) -> int:
    from otel_scorers.demos.live_demo import run_demo

    return run_demo(
        otlp_endpoint=args.otlp_endpoint,
        protocol=args.otlp_protocol,
        config_path=args.config,
        traces_out=args.traces_out,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from otel_scorers.sidecar import run
        from otel_scorers.sidecar.logs import setup_logging
    except ImportError as exc:
        say(
            f"otel-scorers: serve needs the sidecar extra ({install_hint('sidecar')}, or make sidecar): {exc}"
        )
        return 2
    setup_logging()
    return run(args.config, console=args.console)


def cmd_fake_judge(args: argparse.Namespace) -> int:
    from otel_scorers.demos.fake_judge import serve

    return serve(args.host, args.port)
