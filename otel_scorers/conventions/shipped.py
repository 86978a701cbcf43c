"""The readers shipped as descriptions: `descriptions/*.yaml`, in the format of `conventions:`.

Read once, when the conventions are imported; a shipped file that does not validate is a bug of
the project, so it raises there and then (tests load every one).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from otel_scorers.conventions.description import ConventionDescription, descriptions_from

DESCRIPTIONS_DIR = Path(__file__).with_name("descriptions")
#: Detection order among the shipped descriptions. Those naming a scope are asked for their scope's
#: spans; among those found by their attributes, Haystack's tags come before MLflow's keys, which
#: MLflow also writes on the Haystack spans its autolog records.
SHIPPED_FILES = (
    "langfuse.yaml",
    "haystack.yaml",
    "mlflow.yaml",
    "langsmith.yaml",
    "any_agent.yaml",
    "spring_ai.yaml",
    "genkit.yaml",
    "griptape.yaml",
    "voltagent.yaml",
    "monocle.yaml",
    "laminar.yaml",
    "fiddler.yaml",
    "langwatch.yaml",
    "agentops.yaml",
    "sentry.yaml",
    "trulens.yaml",
    "promptflow.yaml",
    "traceai.yaml",
    "mcp_agent.yaml",
    "wayflow.yaml",
)


def shipped_descriptions() -> tuple[ConventionDescription, ...]:
    found: list[ConventionDescription] = []
    for name in SHIPPED_FILES:
        path = DESCRIPTIONS_DIR / name
        found.extend(descriptions_from(yaml.safe_load(path.read_text(encoding="utf-8"))))
    return tuple(found)


SHIPPED_DESCRIPTIONS = shipped_descriptions()
