"""The `otel-scorers` command: demo, runs, score, calibrate, validate, serve."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from otel_scorers.cli.output import say
from otel_scorers.cli.parser import build_parser
from otel_scorers.errors import ConfigError, ListenError


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except ConfigError as exc:
        say(f"otel-scorers: invalid config: {exc}")
        return 2
    except ListenError as exc:
        say(f"otel-scorers: {exc}")
        return 1
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
