"""The judge's requests written down instead of sent: `otel-scorers judge-requests`.

`RequestRecorder` stands in for `ProviderCall` (one judge call to the provider): it builds each
request exactly as a call would (`judge_request`: messages, response format, token bound, model
and base URL), from prompts built as they always are (the run's text masked first, as `redact:`
says), keeps it with the API key replaced by `<api key>`, and fails the call with
`not_sent`, so nothing leaves the machine and no key is needed. A scorer that asks in several
steps (`steps: 2`) is shown its first request only: the later ones are built from the replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from otel_scorers.scorers.judge.config import JudgeConfig
from otel_scorers.scorers.judge.errors import JudgeError
from otel_scorers.scorers.judge.provider_call import ProviderCall
from otel_scorers.scorers.judge.request import judge_request
from otel_scorers.scorers.judge.spend import Spend
from otel_scorers.scorers.judge.usage import Completion, Consultation, Message

NOT_SENT = "not_sent"
#: What stands for a configured API key in a written-down request.
KEY_SHOWN = "<api key>"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as `litellm.acompletion` would have been given it; `name` is the reply's
    (the scorer's rule, or the batch)."""

    name: str
    request: dict[str, Any]


class RequestRecorder(ProviderCall):
    """A `ProviderCall` that records each request and sends none."""

    def __init__(self, config: JudgeConfig, spend: Spend) -> None:
        super().__init__(config, spend)
        self.recorded: list[RecordedRequest] = []

    def taken(self) -> list[RecordedRequest]:
        """The requests recorded since the last call, and forgotten here."""
        found, self.recorded = self.recorded, []
        return found

    async def complete(
        self,
        messages: Sequence[Message],
        consultation: Consultation,
        *,
        name: str = "reply",
        schema: Any = None,
    ) -> Completion:
        litellm = await self._load(consultation)
        request = judge_request(self.config, litellm, consultation.model, messages, schema, name)
        if "api_key" in request:
            request["api_key"] = KEY_SHOWN
        self.recorded.append(RecordedRequest(name, request))
        raise JudgeError(NOT_SENT, "the request was written down, not sent (judge-requests)")
