"""The sidecar's own log: one line per event worth an operator's attention, never one per call."""

from __future__ import annotations

import logging
import os

#: litellm logs each completion at INFO ("LiteLLM completion() model= ..."): at a few hundred
#: judge calls a minute that buries everything else. Its warnings and errors still show, and
#: setting LITELLM_LOG brings the rest back.
_CHATTY = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


def setup_logging(tag: str = "") -> None:
    """INFO to stderr, each line tagged with `tag` (the scoring process says `[scoring]`)."""
    prefix = f"{tag} " if tag else ""
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s {prefix}%(message)s")
    if "LITELLM_LOG" not in os.environ:
        for name in _CHATTY:
            logging.getLogger(name).setLevel(logging.WARNING)
