"""An output defined outside the package: a JSON line per score on standard output. Listed in a
config file by its import path, `outputs: [otlp, metrics, "tests.jsonl_output:jsonl_output"]`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from otel_scorers import AgentRun, Score
from otel_scorers.conversation_turns import Conversation
from otel_scorers.emission.attributes import conversation_run
from otel_scorers.emission.standard import OutputContext


class JsonLinesOutput:
    def emit(self, run: AgentRun, scores: Sequence[Score], conversation: str | None = None) -> None:
        for score in scores:
            line = {"trace": run.trace_id_hex, "scorer": score.scorer, "value": score.value}
            print(
                json.dumps({**line, "conversation": conversation} if conversation else line), file=sys.stdout
            )

    def emit_conversation(self, conversation: Conversation, scores: Sequence[Score]) -> None:
        self.emit(conversation_run(conversation), scores, conversation.id)

    def flush(self) -> None:
        sys.stdout.flush()

    def behind(self) -> bool:
        return False


def jsonl_output(context: OutputContext) -> JsonLinesOutput:
    return JsonLinesOutput()
