"""Which judge models litellm can call and what they cost, read from litellm's own files without
importing it; litellm itself, imported here, is the reference each answer is checked against."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from otel_scorers.scorers.judge import import_litellm, models

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture(scope="module")
def litellm() -> Any:
    return import_litellm()  # seconds, once; its model cost map is the bundled one, as ours


def litellm_price(litellm: Any, model: str) -> tuple[float, float] | None:
    try:
        input_cost, _ = litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=0)
        _, output_cost = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=1)
    except Exception:
        return None
    return float(input_cost), float(output_cost)


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o-mini",
        "openai/gpt-4o-mini",
        "azure/gpt-4o",
        "claude-sonnet-4-5",
        "anthropic/claude-sonnet-4-5",
        "vertex_ai/gemini-2.5-flash",
        "ollama/llama3",
        "mistral/codestral-latest",
        "groq/openai/gpt-oss-20b",
        "openai/no-such-model",
        "ollama/my-own-finetune",
    ],
)
def test_a_models_price_is_litellms(litellm: Any, model: str) -> None:
    assert models.price(model) == litellm_price(litellm, model)


def test_a_model_without_a_price_has_none() -> None:
    assert models.price("openai/no-such-model") is None
    assert models.price("notaprovider/xyz") is None
    assert models.price("ollama/llama3") == (0.0, 0.0)  # listed, and free: a price


def test_every_provider_litellm_accepts_is_known(litellm: Any) -> None:
    catalog = models.catalog()
    assert catalog is not None
    assert {str(provider.value) for provider in litellm.provider_list} <= catalog.providers
    for provider in ("openai", "anthropic", "azure", "bedrock", "ollama", "hosted_vllm", "gemini"):
        assert models.known_provider(provider)
    assert not models.known_provider("notaprovider")


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-4o-mini",
        "openai/a-model-of-my-own",
        "hosted_vllm/my-model",
        "ollama/llama3",
        "gpt-4o-mini",
        "claude-sonnet-4-5",
        "claude-newfamily-7",  # a routing rule's: litellm sends future Claude names to Anthropic
        "notaprovider/xyz",
        "deepseek-v4-pro",  # in the map, but litellm finds a DeepSeek model only by its prefix
        "my-local-model",
        "OpenAI/gpt-4o-mini",
    ],
)
def test_a_model_is_refused_exactly_when_litellm_cannot_route_it(litellm: Any, model: str) -> None:
    try:
        litellm.get_llm_provider(model=model)
        routable = True
    except Exception:
        routable = False
    assert (models.unknown_model(model) is None) == routable


def test_a_refusal_says_how_to_write_the_model() -> None:
    assert "unknown provider 'notaprovider'" in (models.unknown_model("notaprovider/xyz") or "")
    assert "deepseek/deepseek-v4-pro" in (models.unknown_model("deepseek-v4-pro") or "")


def test_reading_models_and_prices_never_imports_litellm() -> None:
    code = (
        "import sys, time\n"
        "from otel_scorers.scorers.judge import models\n"
        "started = time.perf_counter()\n"
        "assert models.price('openai/gpt-4o-mini') is not None\n"
        "assert models.unknown_model('notaprovider/xyz')\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
        "print(time.perf_counter() - started)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, timeout=60, capture_output=True, text=True
    )
    assert float(done.stdout) < 1.0  # the files are read in a fraction of litellm's import time
