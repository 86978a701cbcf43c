"""`otel-scorers validate`: a configuration checked whole, its scorers named."""

from __future__ import annotations

import argparse

from otel_scorers.cli.score_command import backfill_of_conversations
from otel_scorers.config import load_config
from otel_scorers.human_text import counted, printable


def cmd_validate(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    bindings, settings = config.scoring()
    names = [binding.name for binding in bindings]
    parts = (
        [f"{counted(len(names), 'scorer')}: {', '.join(names)}"]
        if names or config.conversations is None
        else []
    )
    conversations = backfill_of_conversations(settings)
    if conversations is not None:
        each = [binding.name for binding in conversations.settings.bindings]
        parts.append(f"{counted(len(each), 'conversation scorer')}: {', '.join(each)}")
    print(printable(f"{args.config}: valid ({'; '.join(parts)})"))
    return 0
