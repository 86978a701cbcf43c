"""OpenInference's names: its span-kind attribute, the redaction marks it writes, and the
instrumentation scopes (one per framework) whose spans it reads each their own way."""

from __future__ import annotations

import re

KIND = "openinference.span.kind"


#: What OpenInference's TraceConfig(hide_inputs/hide_outputs) writes instead of content.
REDACTED = frozenset({"__REDACTED__", "[REDACTED]"})


OPENAI_AGENTS = "openinference.instrumentation.openai_agents"


SMOLAGENTS = "openinference.instrumentation.smolagents"


#: The agent's step limit, which smolagents' run span carries: it marks a smolagents agent's run
#: whichever scope wrote it.
SMOLAGENTS_MAX_STEPS = "smolagents.max_steps"


AUTOGEN = "openinference.instrumentation.autogen_agentchat"


LANGCHAIN = "openinference.instrumentation.langchain"
#: The same instrumentation for LangChain.js, which also writes every attribute when a span ends.
LANGCHAIN_JS = "@arizeai/openinference-instrumentation-langchain"


#: CrewAI's two modes: wrapped methods (the default) and `use_event_listener=True`, whose spans
#: come from CrewAI's event bus (`{role}.{task}.execute`, `{model}.llm_call`).
CREWAI = frozenset(
    {"openinference.instrumentation.crewai", "openinference.instrumentation.crewai._event_listener"}
)


LLAMA_INDEX = "openinference.instrumentation.llama_index"


#: Haystack's Agent is a CHAIN span `{AgentClass}.run` (or `.run_async`) that runs its tools
#: without tool spans: its calls are only in its messages (`formats.haystack`).
HAYSTACK = "openinference.instrumentation.haystack"


HAYSTACK_RUN_SUFFIXES = (".run", ".run_async")


#: Its pipelines' spans: their input and output name the components they ran.
HAYSTACK_PIPELINES = ("Pipeline.run", "AsyncPipeline.run")


#: DSPy: an agent module (`dspy.ReAct`) is a CHAIN span `ReAct.forward`; its tools are TOOL spans
#: `{tool}.__call__` with `{"kwargs": {...}}` as input.
#: BeeAI writes a component's emitter events (a tool's `error`, the agent's `final_answer`) as
#: child spans, marked by the event's `metadata.path`: records of their parent, not components.
BEEAI = "openinference.instrumentation.beeai"


BEEAI_EVENT = "metadata.path"
#: OpenInference's BeeAI instrumentation for TypeScript writes the event path as `target` (the
#: span named `{path}-{n}`) and writes no component spans: a tool's or a model's outcome event
#: (`success`, `error`) is that call's only span.
BEEAI_JS_EVENT = "target"
BEEAI_OUTCOMES = (".success", ".error")


#: The class of the BeeAI component a span is of (`RequirementAgent`, `FunctionTool`).
BEEAI_CLASS = "metadata.class_name"


DSPY = "openinference.instrumentation.dspy"


DSPY_RUN_SUFFIXES = (".forward", ".aforward")


DSPY_AGENTS = ("ReAct", "CodeAct")


DSPY_TOOL_SUFFIX = ".__call__"


LLAMA_INDEX_RUN_SUFFIX = ".run"


#: LlamaIndex's LLM span that only builds the request of the LLM span beside it.
LLAMA_INDEX_PREPARE = "._prepare_chat_with_tools"


HANDOFF_PREFIX = "handoff to "
#: The tool name the TypeScript instrumentation gives a handoff span.
HANDOFF_TOOL_PREFIX = "handoff_to_"


DOCUMENTS = "retrieval.documents."


DOCUMENT_KEY = re.compile(r"retrieval\.documents\.(\d+)\.document\.(content|id)")
#: OpenInference's keys of a span's content: a span holding one is OpenInference's own record.
OWN_CONTENT = frozenset({"input.value", "output.value", "llm.input_messages.0.message.role"})
#: The name of OpenInference's reader.
OPENINFERENCE = "openinference"
