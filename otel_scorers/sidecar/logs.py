"""The sidecar's own log: one line per event worth an operator's attention, never one per call."""

from __future__ import annotations

import logging
import os
import warnings

from otel_scorers.human_text import printable
from otel_scorers.throttled_log import throttled

#: litellm logs each completion at INFO ("LiteLLM completion() model= ..."): at a few hundred
#: judge calls a minute that buries everything else. Its warnings and errors still show, and
#: setting LITELLM_LOG brings the rest back.
_CHATTY = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
#: litellm's `acompletion` makes the provider's coroutine on an executor thread and awaits it
#: afterwards: a judge call cancelled in between (the shutdown's deadline cancels the scores
#: still waiting, counted as not scored) leaves that coroutine unawaited, and Python says so
#: with a RuntimeWarning and no way to tell which call. Abandoned on purpose, it is not a line
#: for an operator.
ABANDONED_JUDGE_CALL = r"coroutine '\w+\.acompletion\w*' was never awaited"


class _UndecodableGrpcError(logging.Filter):
    """grpcio logs a traceback each time an error text from its core is not UTF-8, then goes on
    with it decoded as Latin-1. Out of file descriptors, every failed connect says "socket: Too
    many open files" followed by a raw socket address, and the exporter that made the call logs
    the error itself: this keeps one throttled line of it, with the count."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != "Invalid encoding on %s":
            return True
        text = record.args[0] if isinstance(record.args, tuple) and record.args else b""
        shown = text[:80] if isinstance(text, bytes) else b""
        throttled.warning(
            "grpc_undecodable", "otel_scorers: gRPC reported an error that is not UTF-8: %r", shown
        )
        return False


class _Printable(logging.Formatter):
    """Log lines quote what senders and configs name (endpoints, keys, scorer names): none of it
    may steer the terminal that shows the log."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), newlines=True)


def setup_logging(tag: str = "") -> None:
    """INFO to stderr, each line tagged with `tag` (the scoring process says `[scoring]`)."""
    prefix = f"{tag} " if tag else ""
    line = f"%(asctime)s %(levelname)s {prefix}%(message)s"
    logging.basicConfig(level=logging.INFO, format=line)
    for handler in logging.getLogger().handlers:
        if type(handler.formatter) is logging.Formatter:  # basicConfig's, not one the host set
            handler.setFormatter(_Printable(line))
    if "LITELLM_LOG" not in os.environ:
        for name in _CHATTY:
            logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("grpc._cython.cygrpc").addFilter(_UndecodableGrpcError())
    warnings.filterwarnings("ignore", ABANDONED_JUDGE_CALL, RuntimeWarning)
