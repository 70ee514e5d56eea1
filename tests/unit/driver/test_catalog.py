"""gh-aw's provider catalog: its shape, and COPILOT_MODEL resolved against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.driver.catalog import EXAMPLE, CatalogError, Model, parse_catalog
from copilot_driver.driver.config import ConfigError, load_config

PROXY = {"name": "copilot", "type": "openai", "baseUrl": "http://127.0.0.1:10002"}


def catalog(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "model": "gpt-5.4",
        "providers": [dict(PROXY, wireApi="responses")],
        "models": [{"id": "gpt-5.4", "provider": "copilot"}],
    }
    value.update(overrides)
    return value


def refused(value: Any) -> str:
    raw = value if isinstance(value, str) else json.dumps(value)
    with pytest.raises(CatalogError) as caught:
        parse_catalog(raw)
    message = str(caught.value)
    assert message.startswith("GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON ")
    return message


@pytest.mark.parametrize("raw", [None, "", " "])
def test_an_absent_catalog_means_none(raw: str | None) -> None:
    assert parse_catalog(raw) is None


def test_a_catalog_is_read_whole() -> None:
    parsed = parse_catalog(json.dumps(catalog()))
    assert parsed is not None
    (provider,) = parsed.providers
    assert (provider.name, provider.type, provider.base_url, provider.wire_api) == (
        "copilot",
        "openai",
        "http://127.0.0.1:10002",
        "responses",
    )
    assert parsed.models == (Model("gpt-5.4", "copilot"),)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{nope", "is not valid JSON"),
        ("[]", "must be a JSON object"),
        (catalog(providers=[]), "needs providers, a non-empty array"),
        (catalog(models=None), "needs models, a non-empty array"),
        (catalog(providers=["copilot"]), "providers entry 1 is not an object"),
        (catalog(providers=[{**PROXY, "name": ""}]), "providers entry 1 has no name string"),
        (catalog(providers=[{**PROXY, "type": "gemini"}]), "has type 'gemini', not one of"),
        (catalog(providers=[{**PROXY, "baseUrl": "api-proxy:10002"}]), "not an http(s) URL"),
        (catalog(providers=[{**PROXY, "wireApi": "grpc"}]), "has wireApi 'grpc'"),
        (catalog(providers=[PROXY, PROXY]), "names a provider twice"),
        (catalog(models=[{"id": "m"}]), "models entry 1 has no provider string"),
        (catalog(models=[{"id": "m", "provider": "other"}]), "names provider 'other'"),
    ],
)
def test_an_incomplete_catalog_is_refused(value: Any, says: str) -> None:
    assert says in refused(value)


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"providers": [],}', "line 1 column 18: expected a key in double quotes, found `}`"),
        ("{nope", "line 1 column 2: expected a key in double quotes, found `n`"),
    ],
)
def test_unreadable_json_says_where_and_shows_a_valid_catalog(raw: str, where: str) -> None:
    message = refused(raw)
    assert where in message
    assert f"a valid value looks like {EXAMPLE}" in message
    assert parse_catalog(EXAMPLE) is not None


def test_model_forms_resolve_to_the_provider_and_id_the_catalog_serves() -> None:
    parsed = parse_catalog(
        json.dumps(
            catalog(
                providers=[PROXY, {**PROXY, "name": "azure-1", "type": "azure"}],
                models=[
                    {"id": "gpt-5.4", "provider": "copilot"},
                    {"id": "o4", "provider": "azure-1"},
                ],
            )
        )
    )
    assert parsed is not None
    for model, qualified in [
        ("copilot/gpt-5.4", "copilot/gpt-5.4"),
        ("gpt-5.4", "copilot/gpt-5.4"),
        ("azure-1/o4", "azure-1/o4"),
        ("copilot/o4", "azure-1/o4"),
        ("o4", "azure-1/o4"),
    ]:
        served = parsed.resolve(model)
        assert served is not None, model
        assert served.qualified == qualified
    for model in ("claude-sonnet-4.6", "azure-1/gpt-5.4-mini", "copilot/", ""):
        assert parsed.resolve(model) is None, model


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    prompt = tmp_path / "prompt.md"
    prompt.write_text("hello", encoding="utf-8")
    return {
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "3002",
        "COPILOT_CONNECTION_TOKEN": "t" * 64,
        **extra,
    }


def test_the_catalog_serves_the_session_and_leaves_the_provider_variables_alone(
    tmp_path: Path,
) -> None:
    env = _env(
        tmp_path,
        COPILOT_MODEL="copilot/gpt-5.4",
        GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON=json.dumps(catalog()),
        COPILOT_PROVIDER_BASE_URL="http://api-proxy:10002",
        COPILOT_PROVIDER_TYPE="openai",
    )
    config = load_config(env, cwd=tmp_path)
    assert config.model == "copilot/gpt-5.4"
    assert config.catalog is not None
    assert config.provider is None


def test_a_model_the_catalog_cannot_serve_is_a_configuration_error(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        COPILOT_MODEL="claude-sonnet-4.6",
        GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON=json.dumps(catalog()),
    )
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    assert caught.value.problems == [
        "COPILOT_MODEL='claude-sonnet-4.6' is not a model GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON "
        "serves (copilot/gpt-5.4): set COPILOT_MODEL to one of them"
    ]


def test_copilot_model_stays_required_with_a_catalog(tmp_path: Path) -> None:
    env = _env(tmp_path, GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON=json.dumps(catalog()))
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    assert [p.split(":")[0] for p in caught.value.problems] == ["COPILOT_MODEL is not set"]


def test_a_secret_pasted_as_the_model_is_masked_in_the_catalog_error(tmp_path: Path) -> None:
    token = "t" * 64
    env = _env(
        tmp_path,
        COPILOT_MODEL=token,
        GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON=json.dumps(catalog()),
    )
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    assert token not in str(caught.value)
    assert token[:12] not in str(caught.value)
