"""The `conversations:` section of the config file.

conversations:
  idle_timeout_s: 300          # ended after this long without a turn
  max_duration_s: 3600         # or this long after its first turn
  max_turns: 100               # or at this many turns
  end_when: {op: truthy, left: {path: attributes.app.conversation_ended}}   # or after a run like this
  max_open: 10000              # open conversations kept (least recently active evicted, counted)
  max_turns_kept: 50           # per conversation: the first and the latest kept, the trim recorded
  max_bytes: 67108864          # all open conversations together
  at_shutdown: score           # or drop (counted)
  turn_records: false          # send each turn as an OTLP log record: a sidecar then scores the
                               # conversations the Collector routes to it (collector-config/conversations.yaml)
  scorers:
    - type: multi_turn
      args: {criterion: "The agent resolved the user's request"}
      sampling: {rate: 0.1}    # by conversation: all of its turns or none
      threshold: 1
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from otel_scorers.conversations.scoring import ConversationBinding, bind_conversation
from otel_scorers.conversations.source import ConversationSettings
from otel_scorers.conversations.stage import StageLimits
from otel_scorers.errors import ConfigError
from otel_scorers.scorers.conversation.protocol import ConversationScorer
from otel_scorers.selection.binding import DEFAULT_TIMEOUT_S, unique_names
from otel_scorers.selection.filters import parse_filter
from otel_scorers.selection.sampling import DEFAULT_RATE
from otel_scorers.setting_bounds import MAX_COUNT, MAX_SECONDS

#: Makes a conversation scorer from its type, args and where it is in the file.
MakeScorer = Callable[[str, Mapping[str, Any], str], ConversationScorer]
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ConversationSampling(BaseModel):
    model_config = _STRICT
    rate: float = Field(DEFAULT_RATE, ge=0.0, le=1.0)


class ConversationScorerConfig(BaseModel):
    model_config = _STRICT
    type: str
    name: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    sampling: ConversationSampling = ConversationSampling()
    threshold: float | None = None
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_SECONDS)


# The section's defaults are the settings' own: what a stage built in code gets too.
_DEFAULTS = ConversationSettings()


class ConversationsConfig(BaseModel):
    model_config = _STRICT
    idle_timeout_s: float = Field(_DEFAULTS.limits.idle_timeout_s, gt=0, le=MAX_SECONDS)
    max_duration_s: float = Field(_DEFAULTS.limits.max_duration_s, gt=0, le=MAX_SECONDS)
    max_turns: int = Field(_DEFAULTS.limits.max_turns, ge=1, le=MAX_COUNT)
    end_when: dict[str, Any] | None = None
    max_open: int = Field(_DEFAULTS.limits.max_open, ge=1, le=MAX_COUNT)
    max_turns_kept: int = Field(_DEFAULTS.limits.max_turns_kept, ge=2, le=MAX_COUNT)
    max_bytes: int = Field(_DEFAULTS.limits.max_bytes, ge=1024, le=MAX_COUNT)
    at_shutdown: Literal["score", "drop"] = _DEFAULTS.at_shutdown
    turn_records: bool = _DEFAULTS.turn_records
    tick_s: float = Field(_DEFAULTS.tick_s, gt=0, le=MAX_SECONDS)
    scorers: list[ConversationScorerConfig] = Field(default_factory=list)

    def settings(self, make: MakeScorer, path: str = "conversations") -> ConversationSettings:
        """The section as settings, each scorer made by `make(type, args, where)` (the config's
        one factory call, `config.make_conversation_scorer`); a `ConfigError` names each bad key."""
        errors: list[ConfigError] = []
        end_when = None
        if self.end_when is not None:
            try:
                end_when = parse_filter(self.end_when, f"{path}.end_when")
            except ConfigError as exc:
                errors.append(exc)
        bindings: list[ConversationBinding] = []
        named: list[tuple[str, str]] = []
        for index, entry in enumerate(self.scorers):
            where = f"{path}.scorers[{index}]"
            try:
                scorer = make(entry.type, entry.args, where)
            except ConfigError as exc:
                errors.append(exc)
                continue
            name = entry.name or entry.type
            named.append((where, name))
            bindings.append(
                bind_conversation(
                    scorer,
                    name=name,
                    sampling=entry.sampling.rate,
                    threshold=entry.threshold,
                    timeout_s=entry.timeout_s,
                )
            )
        errors.extend(unique_names(named))
        if errors:
            raise ConfigError.combine(errors)
        limits = StageLimits(
            self.idle_timeout_s,
            self.max_duration_s,
            self.max_turns,
            self.max_open,
            self.max_turns_kept,
            self.max_bytes,
        )
        return ConversationSettings(
            tuple(bindings), limits, end_when, self.at_shutdown, self.turn_records, self.tick_s
        )
