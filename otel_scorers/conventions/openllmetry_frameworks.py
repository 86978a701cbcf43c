"""Which framework a span of OpenLLMetry's is of: by the instrumentation's scope, or by what the
framework writes (CrewAI's ids, LlamaIndex's class names, the OpenAI Agents SDK's handoff kind),
so that a scope not shown is read alike."""

from __future__ import annotations

from otel_scorers.conventions.formats import llamaindex
from otel_scorers.gen_ai_names import GEN_AI_SYSTEM
from otel_scorers.span_record import SpanRecord

#: Agno's instrumentation: tool outputs are `ToolResult` reprs (`formats.agno`), a team is a workflow.
AGNO_SCOPE = "opentelemetry.instrumentation.agno"


#: The system it writes on Agno's agent and tool spans: marks them under any scope.
_AGNO_SYSTEM = "agno"


def agno_span(span: SpanRecord) -> bool:
    """A span of its Agno instrumentation: by its scope, or by the system it names (`agno`)."""
    return span.scope == AGNO_SCOPE or span.attributes.get(GEN_AI_SYSTEM) == _AGNO_SYSTEM


#: CrewAI's instrumentation: a `crewai.workflow` crew span (GenAI keys only, not a run) over a
#: `{description}.task` run span, which holds the agent's role, the task and the answer, over a
#: `{role}.agent` span that holds none of them; no tool spans (`formats.crewai`).
CREWAI_SCOPE = "opentelemetry.instrumentation.crewai.instrumentation"


CREWAI_TASK_AGENT = "crewai.task.agent"


CREWAI_TASK_DESCRIPTION = "crewai.task.description"


#: The ids it writes of CrewAI's crew, task and agent: they mark its CrewAI spans under any scope.
CREW_ID = "crewai.crew.id"
_TASK_ID = "crewai.task.id"
_AGENT_ID = "crewai.agent.id"


def crewai_span(span: SpanRecord) -> bool:
    """A span of its CrewAI instrumentation: by its scope, or by the CrewAI ids it writes."""
    attributes = span.attributes
    return (
        span.scope == CREWAI_SCOPE
        or CREW_ID in attributes
        or _TASK_ID in attributes
        or _AGENT_ID in attributes
    )


#: Its OpenAI Agents SDK instrumentation: an `Agent Workflow` workflow span (the SDK's trace, not
#: an agent) over `{agent}.agent` run spans, side by side even when one hands off to the other or
#: runs as another's tool; `{from} → {to}.handoff` spans (kind `handoff`), whose `to` is written
#: only when the SDK knew it when the span started, which it never does.
OPENAI_AGENTS_SCOPE = "opentelemetry.instrumentation.openai_agents"
#: Its Haystack instrumentation: a pipeline's `haystack_pipeline.workflow` span and its
#: generators' calls, not the runs of the agents among the pipeline's components.
HAYSTACK_SCOPE = "opentelemetry.instrumentation.haystack"
#: The name it gives every pipeline's workflow span (`haystack_pipeline.workflow`): by it the
#: span is known under any scope.
HAYSTACK_PIPELINE = "haystack_pipeline"


#: The span kind of an agent transition (the OpenAI Agents SDK's handoff span), read as a handoff
#: whichever scope wrote it: no other kind of span is written with it.
HANDOFF_KIND = "handoff"


LLAMA_INDEX = "opentelemetry.instrumentation.llamaindex"


LLAMA_INDEX_RUN_SUFFIX = ".workflow"


LLAMA_INDEX_RETRIEVER = "Retriever.task"


#: An agent's workflow run inside another's trace (an agent a tool runs): its class is not named.
LLAMA_INDEX_NESTED_RUN = "run.task"


#: The kinds of its LlamaIndex spans that play a part of their own (steps, workflows).
LLAMA_INDEX_KINDS = ("task", "workflow")


#: Its scopes of other frameworks: their spans are theirs, not LlamaIndex's, whatever their names.
_OTHER_FRAMEWORKS = frozenset(
    {
        AGNO_SCOPE,
        CREWAI_SCOPE,
        OPENAI_AGENTS_SCOPE,
        "opentelemetry.instrumentation.langchain",
        HAYSTACK_SCOPE,
    }
)


def llama_index_span(span: SpanRecord) -> bool:
    """A span of its LlamaIndex instrumentation: by its scope, or by the LlamaIndex class it is
    named after (`FunctionAgent.workflow`, `BaseWorkflowAgent.task`) under any other."""
    scope = span.scope
    return scope == LLAMA_INDEX or (scope not in _OTHER_FRAMEWORKS and llamaindex.names_its_class(span.name))
