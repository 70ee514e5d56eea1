"""The model catalog `GET {api}/models` answers.

The default is a realistic free-plan catalog: `gpt-5-mini` (free, the chat
default), `gpt-5.2` and `claude-sonnet-4.5` (premium, multiplier 1), and
`gpt-4.1`, which the API lists but Copilot CLI 1.0.102 hides from its
`models.list` whatever its entry says (`HIDDEN_BY_CLI`): a session that asks
for it fails at `session.create` with `Model "gpt-4.1" is not available`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

HIDDEN_BY_CLI = frozenset({"gpt-4.1", "gpt-4.1-2025-04-14", "gemini-2.5-pro", "grok-code-fast-1"})
"""Ids CLI 1.0.102 leaves out of `models.list` however the catalog lists them
(measured; an unknown id such as `scripted-model` is kept)."""

DEFAULT_MODEL = "gpt-5-mini"


@dataclass(frozen=True)
class CatalogModel:
    """One catalog entry; `entry()` writes it in the API's shape."""

    id: str
    name: str
    vendor: str
    premium: bool = False
    multiplier: float = 0.0
    category: str = "versatile"
    chat_default: bool = False
    chat_fallback: bool = False
    tokenizer: str = "o200k_base"
    context_window: int = 128_000
    max_output: int = 16_384

    def entry(self) -> dict[str, Any]:
        """The model as `GET /models` lists it."""
        return {
            "id": self.id,
            "name": self.name,
            "vendor": self.vendor,
            "version": self.id,
            "object": "model",
            "model_picker_enabled": True,
            "model_picker_category": self.category,
            "preview": False,
            "is_chat_default": self.chat_default,
            "is_chat_fallback": self.chat_fallback,
            "capabilities": {
                "family": self.id,
                "type": "chat",
                "object": "model_capabilities",
                "tokenizer": self.tokenizer,
                "limits": {
                    "max_context_window_tokens": self.context_window,
                    "max_output_tokens": self.max_output,
                    "max_prompt_tokens": self.context_window - self.max_output,
                },
                "supports": {
                    "streaming": True,
                    "tool_calls": True,
                    "parallel_tool_calls": True,
                    "structured_outputs": True,
                },
            },
            "policy": {"state": "enabled", "terms": f"Enable access to {self.name}."},
            "billing": {"is_premium": self.premium, "multiplier": self.multiplier},
            "supported_endpoints": ["/chat/completions", "/responses"],
        }


DEFAULT_CATALOG: tuple[CatalogModel, ...] = (
    CatalogModel(
        "gpt-5-mini", "GPT-5 mini", "Azure OpenAI", category="lightweight", chat_default=True
    ),
    CatalogModel("gpt-5.2", "GPT-5.2", "OpenAI", premium=True, multiplier=1.0),
    CatalogModel(
        "claude-sonnet-4.5",
        "Claude Sonnet 4.5",
        "Anthropic",
        premium=True,
        multiplier=1.0,
        tokenizer="o200k_base",
        context_window=144_000,
    ),
    CatalogModel("gpt-4.1", "GPT-4.1", "Azure OpenAI", chat_fallback=True),
)


def catalog_without(
    *ids: str, catalog: Iterable[CatalogModel] = DEFAULT_CATALOG
) -> tuple[CatalogModel, ...]:
    """`catalog` with the models `ids` left out."""
    return tuple(model for model in catalog if model.id not in ids)


def models_answer(catalog: Iterable[CatalogModel]) -> dict[str, Any]:
    """The body of `GET {api}/models`."""
    return {"object": "list", "data": [model.entry() for model in catalog]}


def visible_ids(catalog: Iterable[CatalogModel]) -> list[str]:
    """The ids CLI 1.0.102 keeps in its `models.list` from `catalog`."""
    return [model.id for model in catalog if model.id not in HIDDEN_BY_CLI]
