"""gh-aw's provider catalog, `GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON`; pure.

    {"model": "gpt-5.4",
     "providers": [{"name": "copilot", "type": "openai",
                    "baseUrl": "http://api-proxy:10002", "wireApi": "responses"}],
     "models": [{"id": "gpt-5.4", "provider": "copilot"}]}

gh-aw's harness builds it from its API proxy; it holds no credentials. The
session gets its providers and models, and `COPILOT_MODEL` is resolved
against it: `<provider>/<id>` as written, the legacy `copilot/<id>`, or a
bare id, each to the `<provider>/<id>` the catalog serves. Anything the
catalog cannot serve is a configuration error, never a silent fallback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from copilot_driver.env import PROVIDER_CATALOG
from copilot_driver.errors import CopilotDriverError
from copilot_driver.json_input import json_object

PROVIDER_TYPES = ("openai", "azure", "anthropic")
"""What a provider's type may be, in the catalog and in COPILOT_PROVIDER_TYPE."""
WIRE_APIS = ("completions", "responses")
"""What a provider's API may be, in the catalog and in COPILOT_PROVIDER_WIRE_API."""
_HTTP_URL = re.compile(r"https?://[^/\s]+\S*")
_SHOWN_MODELS = 8
EXAMPLE = (
    '{"providers": [{"name": "proxy", "type": "openai", "baseUrl": "http://api-proxy:10002"}], '
    '"models": [{"id": "gpt-4.1", "provider": "proxy"}]}'
)
"""A complete catalog, shown when the given one is not JSON or not an object."""


class CatalogError(CopilotDriverError, ValueError):
    """The catalog cannot be used, or cannot serve the model; the message says why."""


@dataclass(frozen=True)
class Provider:
    name: str
    type: str
    base_url: str
    wire_api: str | None = None


@dataclass(frozen=True)
class Model:
    id: str
    provider: str

    @property
    def qualified(self) -> str:
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True)
class ProviderCatalog:
    providers: tuple[Provider, ...]
    models: tuple[Model, ...]

    def resolve(self, model: str) -> Model | None:
        """The catalog entry `model` names, or None when the catalog cannot serve it."""
        for entry in self.models:
            if model == entry.qualified:
                return entry
        bare = model.removeprefix("copilot/")
        for entry in self.models:
            if bare == entry.id:
                return entry
        return None

    def to_sdk(self) -> dict[str, list[dict[str, str]]]:
        """The session's `providers` and `models`, in the SDK's names."""
        providers = []
        for provider in self.providers:
            entry = {"name": provider.name, "type": provider.type, "base_url": provider.base_url}
            if provider.wire_api:
                entry["wire_api"] = provider.wire_api
            providers.append(entry)
        models = [{"id": model.id, "provider": model.provider} for model in self.models]
        return {"providers": providers, "models": models}

    def served(self) -> str:
        """The models it serves, for an error message."""
        shown = ", ".join(entry.qualified for entry in self.models[:_SHOWN_MODELS])
        return shown + (", ..." if len(self.models) > _SHOWN_MODELS else "")


def parse_catalog(raw: str | None) -> ProviderCatalog | None:
    """The catalog, or None when the variable is unset or blank. Raises CatalogError
    for anything that is not a complete catalog."""
    if raw is None or not raw.strip():
        return None
    try:
        value = json_object(raw, "providers and models", EXAMPLE)
    except ValueError as problem:
        raise _error(str(problem)) from None
    providers = tuple(
        _provider(entry, index)
        for index, entry in enumerate(_non_empty_list(value, "providers"), 1)
    )
    names = [provider.name for provider in providers]
    if len(set(names)) != len(names):
        raise _error("names a provider twice")
    models = tuple(
        _model(entry, index, names)
        for index, entry in enumerate(_non_empty_list(value, "models"), 1)
    )
    return ProviderCatalog(providers, models)


def _error(what: str) -> CatalogError:
    return CatalogError(
        f"{PROVIDER_CATALOG.name} {what}; gh-aw's harness writes this catalog: "
        "check the workflow's engine and firewall settings"
    )


def _non_empty_list(value: dict[str, Any], key: str) -> list[Any]:
    entries = value.get(key)
    if not isinstance(entries, list) or not entries:
        raise _error(f"needs {key}, a non-empty array")
    return entries


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _error(f"{where} has no {key} string")
    return value.strip()


def _provider(entry: Any, index: int) -> Provider:
    where = f"providers entry {index}"
    if not isinstance(entry, dict):
        raise _error(f"{where} is not an object")
    kind = _text(entry, "type", where)
    if kind not in PROVIDER_TYPES:
        raise _error(f"{where} has type {kind[:40]!r}, not one of {', '.join(PROVIDER_TYPES)}")
    base_url = _text(entry, "baseUrl", where)
    if not _HTTP_URL.fullmatch(base_url):
        raise _error(f"{where} has a baseUrl that is not an http(s) URL")
    wire_api = entry.get("wireApi")
    if wire_api is not None and wire_api not in WIRE_APIS:
        raise _error(
            f"{where} has wireApi {str(wire_api)[:40]!r}, not one of {', '.join(WIRE_APIS)}"
        )
    return Provider(_text(entry, "name", where), kind, base_url, wire_api)


def _model(entry: Any, index: int, providers: list[str]) -> Model:
    where = f"models entry {index}"
    if not isinstance(entry, dict):
        raise _error(f"{where} is not an object")
    model = Model(_text(entry, "id", where), _text(entry, "provider", where))
    if model.provider not in providers:
        raise _error(f"{where} names provider {model.provider[:40]!r}, which it does not list")
    return model
