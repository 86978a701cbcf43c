"""Which judge models litellm can call and what they cost, read from the files litellm ships,
never by importing it (its import takes seconds, and must not happen at config load).

litellm prices models from its model cost map, `model_prices_and_context_window_backup.json` in
its package: the file it uses with `LITELLM_LOCAL_MODEL_COST_MAP=True`, which the judge sets
unless told otherwise. A model string is `provider/name` (`openai/gpt-4o-mini`), or a name the
map knows (`gpt-4o-mini`). The providers litellm accepts as a prefix are its `LlmProviders` enum
(read from its source, `litellm/types/utils.py`, without running it), the providers declared in
`litellm/llms/openai_like/providers.json`, and the `litellm_provider` of every model in the map.
The files are read once, on first use, off the agent's thread (at config load).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COST_MAP = "model_prices_and_context_window_backup.json"
#: Used when litellm's provider enum cannot be read from its source (a release that moved it):
#: the providers a judge is most often run on, so that their models are never refused.
FALLBACK_PROVIDERS = frozenset(
    {
        "openai", "azure", "azure_ai", "anthropic", "bedrock", "bedrock_converse", "vertex_ai",
        "gemini", "mistral", "groq", "together_ai", "fireworks_ai", "openrouter", "ollama",
        "ollama_chat", "hosted_vllm", "vllm", "lm_studio", "huggingface", "deepseek", "xai",
        "cohere", "cohere_chat", "databricks", "watsonx", "litellm_proxy", "custom_openai",
        "openai_like", "text-completion-openai", "perplexity", "cerebras", "sambanova", "nvidia_nim",
    }
)  # fmt: skip
# Providers whose models may be priced under another provider's entry (litellm's
# `_check_provider_match`): a proxy prices as what it proxies, Azure AI as Azure or OpenAI.
_PRICED_AS_ANY = frozenset({"litellm_proxy", "github", "nadir"})
_PRICED_AS = {"azure_ai": frozenset({"azure", "openai"})}
#: The enum's class statement: its line and the indented (or blank) lines after it.
_ENUM_CLASS = re.compile(r"^class LlmProviders\b.*\n(?:(?:[ \t]+.*)?\n)*", re.MULTILINE)
# Local servers, whose every model litellm prices at zero.
_FREE_PROVIDERS = frozenset({"ollama", "ollama_chat"})
_NOT_MODELS = frozenset({"sample_spec", "fallback_generalizations"})
# The providers whose models litellm finds by their bare name, without a prefix (the lists
# `get_llm_provider` checks), besides the `vertex_ai-...` families.
_BARE_NAME_PROVIDERS = frozenset(
    {
        "openai", "text-completion-openai", "anthropic", "cohere", "cohere_chat", "replicate",
        "openrouter", "maritalk", "ai21", "aleph_alpha", "baseten", "nlp_cloud", "petals", "bedrock",
        "bedrock_converse", "watsonx", "empower", "gradient_ai",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Catalog:
    """What litellm ships: its models (keys lower-cased, as litellm matches them), the
    providers it accepts as a prefix, and its routing rules for bare model names."""

    models: Mapping[str, Mapping[str, Any]]
    providers: frozenset[str]
    routes: tuple[tuple[re.Pattern[str], str], ...]


def litellm_dir() -> Path | None:
    """The installed litellm package's directory, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def catalog() -> Catalog | None:
    """litellm's models and providers, read once; None when litellm is not installed or its
    model cost map cannot be read (then nothing is refused for being unknown)."""
    root = litellm_dir()
    if root is None:
        return None
    try:
        document = json.loads((root / COST_MAP).read_bytes())
    except (OSError, ValueError):
        return None
    models: dict[str, Mapping[str, Any]] = {}
    for key, entry in document.items() if isinstance(document, dict) else ():
        if (
            key not in _NOT_MODELS
            and isinstance(entry, dict)
            and isinstance(entry.get("litellm_provider"), str)
        ):
            models.setdefault(key.lower(), entry)
    # The prefixes litellm accepts are its enum's and its JSON-declared providers'; the map's own
    # `litellm_provider` values (some are families, `vertex_ai-language-models`) stand in for the
    # enum only when it cannot be read.
    providers = set(_enum_providers(root)) or {
        *FALLBACK_PROVIDERS,
        *(e["litellm_provider"] for e in models.values()),
    }
    providers |= _json_providers(root)
    return Catalog(models, frozenset(providers), _routes(document))


def _enum_providers(root: Path) -> frozenset[str]:
    """The string values of `class LlmProviders` in litellm's source (empty if not found): the
    class alone is parsed, not the 200 KB module around it."""
    try:
        source = (root / "types" / "utils.py").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return frozenset()
    found = _ENUM_CLASS.search(source)
    try:
        tree = ast.parse(found.group(0)) if found is not None else None
    except (SyntaxError, ValueError):
        return frozenset()
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.ClassDef):
        return frozenset()
    return frozenset(
        statement.value.value
        for statement in tree.body[0].body
        if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _json_providers(root: Path) -> frozenset[str]:
    """The OpenAI-compatible providers litellm declares in a JSON file of its own."""
    try:
        declared = json.loads((root / "llms" / "openai_like" / "providers.json").read_bytes())
    except (OSError, ValueError):
        return frozenset()
    return frozenset(declared) if isinstance(declared, dict) else frozenset()


def _routes(document: Any) -> tuple[tuple[re.Pattern[str], str], ...]:
    """The map's routing rules: a regular expression over a bare model name and the provider it
    goes to (`claude-...` to anthropic), which litellm tries when no entry names the model."""
    rules = document.get("fallback_generalizations", {}) if isinstance(document, dict) else {}
    routes = []
    for rule in rules.get("rules", []) if isinstance(rules, dict) else []:
        info = rule.get("model_info") if isinstance(rule, dict) else None
        if (
            isinstance(info, dict)
            and set(info) == {"litellm_provider"}
            and isinstance(rule.get("pattern"), str)
        ):
            try:
                routes.append((re.compile(rule["pattern"], re.IGNORECASE), str(info["litellm_provider"])))
            except re.error:
                continue
    return tuple(routes)


def known_provider(provider: str) -> bool:
    """True when litellm accepts `provider` as a model prefix (also when litellm cannot be read)."""
    found = catalog()
    return found is None or provider in found.providers


def provider_of(model: str) -> str | None:
    """The provider litellm sends `model` to, or None when it would not know (it then refuses
    the call): the prefix when it is a provider; for a bare name, the provider of the map's
    entry when litellm routes that provider's bare names, else the first routing rule's."""
    found = catalog()
    if found is None:
        return None
    prefix, _, rest = model.partition("/")
    if rest and prefix in found.providers:
        return prefix
    entry = found.models.get(model.lower())
    if entry is not None:
        provider = str(entry["litellm_provider"])
        if _routes_bare_names(provider) or model.startswith(f"{provider}/"):
            return provider
    if "ft:gpt-" in model or model.startswith("gpt-image"):  # litellm's own rules for OpenAI names
        return "openai"
    return next((provider for pattern, provider in found.routes if pattern.search(model)), None)


def _routes_bare_names(provider: str) -> bool:
    return provider in _BARE_NAME_PROVIDERS or provider.startswith("vertex_ai-")


def unknown_model(model: str) -> str | None:
    """Why litellm cannot call `model`, or None when it can (or when litellm cannot be read)."""
    found = catalog()
    if found is None or provider_of(model) is not None:
        return None
    prefix, _, rest = model.partition("/")
    entry = found.models.get(model.lower())
    if entry is not None:
        provider = entry["litellm_provider"]
        return f"litellm needs the provider in the model's name: {provider}/{model}"
    if rest:
        return (
            f"unknown provider {prefix!r}; write the model as 'provider/name' with a provider "
            "litellm knows (openai, anthropic, azure, bedrock, gemini, ollama, hosted_vllm...)"
        )
    return f"litellm does not know which provider serves {model!r}; write it as 'provider/name' (openai/{model}...)"


def price(model: str) -> tuple[float, float] | None:
    """(USD per input token, USD per output token) of `model` in litellm's cost map, looked up
    as litellm does: the whole string (letter case aside), then without its provider prefix in an
    entry of that provider; any model of a local Ollama server is free; None when the map has
    no entry with a price for it. Adjustments
    litellm makes when it prices a reply (cache hits, tiers past the first, discounts) are not here."""
    found = catalog()
    if found is None:
        return None
    prefix, _, rest = model.partition("/")
    provider = prefix if rest and prefix in found.providers else None
    candidates = [model] if provider is None else [model, rest]
    for candidate in candidates:
        entry = found.models.get(candidate.lower())
        if entry is not None and _priced_as(provider, str(entry["litellm_provider"])):
            return _per_token(entry)
    return (0.0, 0.0) if provider in _FREE_PROVIDERS else None


def _per_token(entry: Mapping[str, Any]) -> tuple[float, float] | None:
    """An entry's per-token prices: its own, else its first tier's (a judge's prompts are short);
    None for an entry listed without a price (litellm would count it free, which is not known)."""
    tiers = entry.get("tiered_pricing")
    for prices in (entry, *(tiers[:1] if isinstance(tiers, list) else ())):
        if not isinstance(prices, Mapping):
            continue
        input_cost, output_cost = prices.get("input_cost_per_token"), prices.get("output_cost_per_token")
        if isinstance(input_cost, (int, float)) or isinstance(output_cost, (int, float)):
            return _usd(input_cost), _usd(output_cost)
    return None


def _usd(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _priced_as(provider: str | None, entry_provider: str) -> bool:
    """Whether an entry of `entry_provider` prices a model sent to `provider` (litellm's rule:
    the same provider, or a family of it, `vertex_ai` for `vertex_ai-language-models`)."""
    if provider is None or entry_provider == provider or provider in _PRICED_AS_ANY:
        return True
    if provider in ("vertex_ai", "fireworks_ai") and entry_provider.startswith(provider):
        return True
    if provider.startswith("bedrock") and entry_provider.startswith("bedrock"):
        return True
    return entry_provider in _PRICED_AS.get(provider, ())


def cost_map_is_litellms() -> bool:
    """True when litellm prices from the bundled map read here (`LITELLM_LOCAL_MODEL_COST_MAP`
    unset, which the judge makes True, or true); otherwise it fetches a newer one at import."""
    return os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True").strip().lower() == "true"
