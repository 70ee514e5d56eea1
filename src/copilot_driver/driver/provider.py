"""The session's model and who serves it: gh-aw's provider catalog
(`driver.catalog`) when it is given, else an optional bring-your-own-model
provider from the `COPILOT_PROVIDER_*` variables (the Copilot CLI's own names).

Values are echoed as given, never the key: a key the sidecar cannot send as a
header (too long, a pasted newline) is refused without being shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from copilot_driver.driver.catalog import (
    PROVIDER_TYPES,
    WIRE_APIS,
    CatalogError,
    ProviderCatalog,
    parse_catalog,
)
from copilot_driver.driver.quoting import PATH_CHARS, TOKEN_PREFIX, Quote, shorten
from copilot_driver.env import (
    MODEL,
    PROVIDER_API_KEY,
    PROVIDER_BASE_URL,
    PROVIDER_CATALOG,
    PROVIDER_TYPE,
    PROVIDER_WIRE_API,
    value_of,
)
from copilot_driver.redaction import mask_url_userinfo

MAX_MODEL_CHARS = 200
MAX_PROVIDER_KEY_CHARS = 4096
"""Longer keys make the CLI 1.0.102 sidecar stop answering (docs/sdk-defects.md)."""


@dataclass(frozen=True)
class ProviderConfig:
    """A bring-your-own-model provider for the session (the CLI's own names)."""

    base_url: str = field(repr=False)
    type: str = "openai"
    wire_api: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @property
    def shown_url(self) -> str:
        """The base URL as logs and errors write it: userinfo (`user:key@`) as `***@`."""
        return mask_url_userinfo(self.base_url)

    def to_sdk(self) -> dict[str, str]:
        """The SDK's `ProviderConfig` mapping."""
        provider = {"type": self.type, "base_url": self.base_url}
        if self.wire_api:
            provider["wire_api"] = self.wire_api
        if self.api_key:
            provider["api_key"] = self.api_key
        return provider


def check_model(model: str | None, quote: Quote, problems: list[str]) -> str | None:
    """COPILOT_MODEL, when it reads as a model name; a token pasted into it is reported
    and dropped, so nothing echoes it again."""
    if model is not None and TOKEN_PREFIX.match(model):
        problems.append(
            f"{MODEL.name} looks like a token, not a model name: set it to a model "
            f"such as gpt-5 (it is {quote(model)}), and put the token in the variable it "
            "belongs to"
        )
        return None
    if model is not None and (len(model) > MAX_MODEL_CHARS or not model.isprintable()):
        problems.append(_not_a_model_name(quote(model)))
    return model


def _not_a_model_name(quoted: str) -> str:
    return (
        f"{MODEL.name}={quoted!r} is not a model name (at most "
        f"{MAX_MODEL_CHARS} printable characters, e.g. gpt-5-mini)"
    )


def model_and_providers(
    env: Mapping[str, str], model: str | None, quote: Quote, problems: list[str]
) -> tuple[ProviderConfig | None, ProviderCatalog | None, str | None]:
    """The session's provider(s) and its model: gh-aw's catalog when it is given (the
    `COPILOT_PROVIDER_*` variables are then the sidecar's own), else the single
    bring-your-own-model provider, if any."""
    try:
        catalog = parse_catalog(env.get(PROVIDER_CATALOG.name))
    except CatalogError as error:
        problems.append(str(error))
        return None, None, model
    if catalog is None:
        try:
            return parse_provider(env, quote=quote), None, model
        except ValueError as error:
            problems.append(str(error))
            return None, None, model
    if model is None:
        return None, catalog, None  # reported as missing already
    served = catalog.resolve(model)
    if served is None:
        problems.append(
            f"{MODEL.name}={quote(model)!r} is not a model "
            f"{PROVIDER_CATALOG.name} serves ({catalog.served()}): set "
            f"{MODEL.name} to one of them"
        )
        return None, catalog, model
    return None, catalog, served.qualified


def parse_provider(env: Mapping[str, str], *, quote: Quote = shorten) -> ProviderConfig | None:
    """The optional bring-your-own-model provider, or None when not configured."""
    base_url = value_of(env, PROVIDER_BASE_URL)
    provider_type = value_of(env, PROVIDER_TYPE)
    wire_api = value_of(env, PROVIDER_WIRE_API)
    api_key = env.get(PROVIDER_API_KEY.name)
    if api_key is not None and not api_key.strip():
        api_key = None
    if base_url is None:
        stray = [
            name
            for name, value in (
                (PROVIDER_TYPE.name, provider_type),
                (PROVIDER_WIRE_API.name, wire_api),
                (PROVIDER_API_KEY.name, api_key),
            )
            if value is not None
        ]
        if stray:
            raise ValueError(
                f"{', '.join(stray)} set without {PROVIDER_BASE_URL.name}: "
                "set the provider's base URL too, or unset them"
            )
        return None
    if not re.match(r"^https?://[^/\s]+", base_url):
        raise ValueError(_not_an_http_url(base_url, quote))
    # Values are echoed as given (never lowercased): the redactor masks a
    # secret pasted into the wrong variable only in its exact spelling.
    if provider_type is not None and provider_type.lower() not in PROVIDER_TYPES:
        raise ValueError(
            f"{PROVIDER_TYPE.name}={quote(provider_type)!r} is not one of "
            f"{', '.join(PROVIDER_TYPES)}"
        )
    provider_type = (provider_type or "openai").lower()
    if wire_api is not None:
        if wire_api.lower() not in WIRE_APIS:
            raise ValueError(
                f"{PROVIDER_WIRE_API.name}={quote(wire_api)!r} is not one of {', '.join(WIRE_APIS)}"
            )
        wire_api = wire_api.lower()
    if api_key is not None:
        check_provider_key(api_key)
    return ProviderConfig(base_url=base_url, type=provider_type, wire_api=wire_api, api_key=api_key)


def _not_an_http_url(base_url: str, quote: Quote) -> str:
    """The fix for a base URL without its scheme: the URL with one, else the form."""
    base_url = mask_url_userinfo(base_url)
    said = f"{PROVIDER_BASE_URL.name} is not an http(s) URL: {quote(base_url, PATH_CHARS)}"
    if "://" in base_url or not re.match(r"[A-Za-z0-9\[]", base_url):
        return f"{said}: write it as https://HOST/PATH, e.g. https://api.openai.com/v1"
    local = re.match(r"(localhost|127\.|\[::1\])", base_url, re.IGNORECASE)
    scheme = "http://" if local else "https://"
    return f"{said}: it has no scheme: write {scheme}{quote(base_url, PATH_CHARS)}"


def check_provider_key(api_key: str) -> None:
    """Refuse a key the runtime cannot send as a header, never echoing it.

    The runtime puts the key in an HTTP header: a control character (a
    pasted newline) makes it fail with an error quoting the key in a form
    the redactor does not recognise, and a very long key hangs the sidecar.
    """
    if len(api_key) > MAX_PROVIDER_KEY_CHARS:
        raise ValueError(
            f"{PROVIDER_API_KEY.name} is {len(api_key)} characters long; the sidecar accepts "
            f"at most {MAX_PROVIDER_KEY_CHARS}"
        )
    if any(not char.isprintable() or char.isspace() for char in api_key):
        raise ValueError(
            f"{PROVIDER_API_KEY.name} holds whitespace or a control character (a pasted "
            "newline?): set it to the key alone"
        )
