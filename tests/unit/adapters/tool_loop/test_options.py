"""The `tool-loop` block: strict, with the key kept out of WORKFLOW.md."""

from __future__ import annotations

from typing import Any

import pytest

from copilot_driver.adapters.core.workflow import WorkflowError, parse_workflow
from copilot_driver.adapters.tool_loop.options import (
    DEFAULT_MAX_ROUNDS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    ToolLoopOptions,
)

MINIMAL = {"base_url": "https://api.example.com/v1", "model": "gpt-4o"}


def options(**fields: Any) -> ToolLoopOptions:
    return ToolLoopOptions.from_mapping({**MINIMAL, **fields})


def problem(**fields: Any) -> str:
    with pytest.raises(ValueError, match=r"^tool-loop") as caught:
        options(**fields)
    return str(caught.value)


def test_defaults_follow_the_spec() -> None:
    parsed = options()
    assert parsed.max_rounds == DEFAULT_MAX_ROUNDS == 20
    assert parsed.temperature == 0.1
    assert parsed.max_tokens == 4096
    assert parsed.api_key_env == "OPENAI_API_KEY"
    assert parsed.max_tool_result_chars == DEFAULT_MAX_TOOL_RESULT_CHARS
    assert parsed.chat_completions_url == "https://api.example.com/v1/chat/completions"


def test_a_trailing_slash_on_the_base_url_is_dropped() -> None:
    assert options(base_url="http://127.0.0.1:8080/v1/").chat_completions_url == (
        "http://127.0.0.1:8080/v1/chat/completions"
    )


@pytest.mark.parametrize("missing", ["base_url", "model"])
def test_base_url_and_model_are_required(missing: str) -> None:
    raw = {k: v for k, v in MINIMAL.items() if k != missing}
    with pytest.raises(ValueError, match=f"{missing} is required"):
        ToolLoopOptions.from_mapping(raw)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/v1", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("javascript:alert(1)", "only http:// and https://"),
        ("example.com/v1", "only http:// and https://"),
        ("http:///v1", "has no host"),
        ("https://user:sk-secret@example.com/v1", "must not carry credentials"),
        ("https://example.com/v1?key=1", "query or fragment"),
        ("https://example.com:port/v1", "not a URL"),
        ("https://exa mple.com/v1", "whitespace"),
    ],
)
def test_only_plain_http_and_https_base_urls_are_accepted(url: str, reason: str) -> None:
    assert reason in problem(base_url=url)


@pytest.mark.parametrize("name", ["sk-proj-abc123", "MY KEY", "", "1ABC"])
def test_api_key_env_must_name_a_variable_not_hold_a_key(name: str) -> None:
    assert "is not an environment variable name" in problem(api_key_env=name)


@pytest.mark.parametrize("value", [0, 0.7, 2])
def test_temperature_takes_integers_and_floats(value: float) -> None:
    assert options(temperature=value).temperature == value


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"temperature": 2.5}, "temperature must be between 0 and 2"),
        ({"temperature": float("nan")}, "temperature must be between 0 and 2"),
        ({"temperature": "hot"}, "tool-loop.temperature: expected"),
        ({"max_rounds": 0}, "max_rounds must be 1 or more"),
        ({"max_rounds": True}, "tool-loop.max_rounds: expected an integer"),
        ({"max_rounds": "20"}, "tool-loop.max_rounds: expected an integer"),
        ({"max_tool_result_chars": 50}, "max_tool_result_chars must be 200 or more"),
        ({"max_tokens": 0}, "max_tokens must be 1 or more"),
        ({"request_timeout_ms": 0}, "request_timeout_ms must be 1 or more"),
        ({"max_round": 3}, "tool-loop.max_round: unknown field"),
        ({"api_key": "sk-1"}, "tool-loop.api_key: unknown field"),
    ],
)
def test_bad_fields_are_errors_that_name_them(fields: dict[str, Any], message: str) -> None:
    assert message in problem(**fields)


def test_max_tokens_may_be_null_to_leave_it_out() -> None:
    assert options(max_tokens=None).max_tokens is None


def test_the_workflow_loader_validates_the_tool_loop_block() -> None:
    workflow = parse_workflow({"agent": {"kind": "tool-loop"}, "tool-loop": MINIMAL})
    assert workflow.kind == "tool-loop"
    assert workflow.options == MINIMAL
    with pytest.raises(WorkflowError, match=r"tool-loop\.max_rouds: unknown field"):
        parse_workflow({"agent": {"kind": "tool-loop"}, "tool-loop": {**MINIMAL, "max_rouds": 1}})
    with pytest.raises(WorkflowError, match="base_url is required"):
        parse_workflow({}, kind="tool-loop")
