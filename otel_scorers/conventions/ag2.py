"""AG2's own tracing (scope `opentelemetry.instrumentation.ag2`), and AG2 0.x under OpenInference.

AG2's tracing writes GenAI spans: AG2 1.x's `TelemetryMiddleware` `invoke_agent` / `chat` /
`execute_tool`; AG2 0.x's `autogen.opentelemetry` (`instrument_agent`) the same under a
`conversation {sender}` span per `initiate_chat` (`gen_ai.operation.name` = `conversation`,
the chat's first message in `gen_ai.input.messages`, its whole history in
`gen_ai.output.messages`), with one `invoke_agent {agent}` span per reply. The conversation is
the run, named after the agent that replied first (the one the chat was started with); its
replies are its turns (`Convention.absorbs_turns`).

AG2 0.x (`autogen`'s ConversableAgent) under OpenInference's `openinference-instrumentation-ag2`:
A chat is `{sender}.initiate_chat` (AGENT; `ag2.recipient.name`, input.value JSON
`{message, sender, recipient}`, output.value the last message) over one `{agent}.generate_reply`
AGENT span per turn, the tools the executing agent runs under its turn as TOOL spans (input.value
`{arguments: "<JSON>", name}`, `tool_call.id`, output.value AG2's `[success, {name, role,
content}]`: read whichever reader claimed the span, `formats/ag2.py`). The chat is the run, named
after the agent it was started with; its turns are not runs of their own: each agent's replies,
tool calls included, make up the one conversation.
"""

from __future__ import annotations

from dataclasses import replace

from otel_scorers.conventions import genai
from otel_scorers.conventions.base import Convention, RunSpanContent, SpanRole
from otel_scorers.conventions.formats.messages import as_str, has_text, text_of
from otel_scorers.conventions.genai import OPERATION
from otel_scorers.span_record import SpanRecord

SCOPE = "openinference.instrumentation.ag2"
TRACING_SCOPE = "opentelemetry.instrumentation.ag2"
_CONVERSATION = "conversation"


class AG2Convention(Convention):
    name = "ag2"
    # AG2 0.x sets a conversation span's attributes after it starts: its name says what it is.
    run_start_names: tuple[str, ...] = ("invoke_agent", "conversation ")
    run_start_markers: tuple[tuple[str, str | None], ...] = ()

    detection_values = (OPERATION,)

    def detect(self, span: SpanRecord) -> bool:
        # Its conversation span, under any scope: no other framework writes that operation. Its
        # other spans are GenAI's, read alike by the GenAI reader.
        attributes = span.attributes
        return (span.scope == TRACING_SCOPE and OPERATION in attributes) or attributes.get(
            OPERATION
        ) == _CONVERSATION

    def role(self, span: SpanRecord) -> SpanRole | None:
        return "run" if span.attributes.get(OPERATION) == _CONVERSATION else genai.operation_role(span)

    def absorbs_turns(self, span: SpanRecord) -> bool:
        return span.attributes.get(OPERATION) == _CONVERSATION

    def run_content(self, span: SpanRecord) -> RunSpanContent:
        content = genai.run_content(span)
        if not self.absorbs_turns(span):
            return content
        # A conversation's gen_ai.agent.name is the agent that started the chat (a user proxy),
        # and its history is that agent's view, where the other agent's replies are `user`
        # messages: the chat's answer is its last message with text, whoever wrote it.
        last = next((message for message in reversed(content.output.items) if has_text(message)), None)
        return replace(content, agent_name=None, output_text=text_of(last) if last is not None else None)

    tool_call = staticmethod(genai.tool_call)
    model_call = staticmethod(genai.model_call)
    documents = staticmethod(genai.documents)


_TURN_SUFFIX = ".generate_reply"


def is_turn(span: SpanRecord) -> bool:
    """A `{agent}.generate_reply` span (AG2's `ConversableAgent.generate_reply`, under any
    scope): one turn of a chat, not a run."""
    return span.name.endswith(_TURN_SUFFIX)


def chat_agent(span: SpanRecord) -> str | None:
    """The agent a chat was started with (`ag2.recipient.name`, AG2's key under any scope), None
    for other spans."""
    return as_str(span.attributes.get("ag2.recipient.name"))
