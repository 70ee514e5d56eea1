"""Unit tests for `copilot_driver.adapters.core.agent_events`: the domain event, its JSON form."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from copilot_driver.adapters.core.agent_events import (
    MESSAGE_LIMIT,
    AgentEvent,
    EventType,
    TokenUsage,
    shorten,
)
from copilot_driver.vocabulary import AdapterErrorKind

WHEN = datetime(2026, 11, 21, 6, 21, 48, 752_345, tzinfo=UTC)


def test_event_type_values_are_the_specs_names() -> None:
    assert {t.value for t in EventType} == {
        "session_started",
        "notification",
        "token_usage",
        "tool_result",
        "turn_completed",
        "turn_failed",
        "turn_cancelled",
        "malformed",
        "other_message",
        "unsupported_tool_call",
    }


def test_to_dict_of_a_bare_event_omits_every_unset_field() -> None:
    event = AgentEvent(EventType.NOTIFICATION, timestamp=WHEN)
    assert event.to_dict() == {
        "type": "notification",
        "timestamp": "2026-11-21T06:21:48.752Z",
        "session_id": "",
    }


def test_to_dict_of_a_full_event() -> None:
    event = AgentEvent(
        EventType.TOOL_RESULT,
        session_id="s-1",
        message="bash done",
        timestamp=WHEN,
        tool_name="bash",
        tool_duration_ms=12,
        tool_error=False,
        usage=TokenUsage(input_tokens=10, output_tokens=5, cached_input_tokens=2, model="m"),
        error_kind=AdapterErrorKind.TURN_FAILED,
        api_duration_ms=17,
        raw_type="tool.execution_complete",
    )
    assert event.to_dict() == {
        "type": "tool_result",
        "timestamp": "2026-11-21T06:21:48.752Z",
        "session_id": "s-1",
        "message": "bash done",
        "tool_name": "bash",
        "tool_duration_ms": 12,
        "tool_error": False,  # False is a value, not an absent field
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "cached_input_tokens": 2,
            "model": "m",
        },
        "error_kind": "turn_failed",
        "api_duration_ms": 17,
        "raw_type": "tool.execution_complete",
    }


def test_to_dict_is_json_serialisable() -> None:
    event = AgentEvent(EventType.TOKEN_USAGE, usage=TokenUsage(output_tokens=3))
    assert json.loads(json.dumps(event.to_dict()))["usage"]["total_tokens"] == 3


def test_default_timestamp_is_now_in_utc_with_a_z() -> None:
    before = datetime.now(UTC)
    stamp = AgentEvent(EventType.NOTIFICATION).to_dict()["timestamp"]
    after = datetime.now(UTC)
    assert stamp.endswith("Z")
    assert len(stamp) == len("2026-11-21T06:21:48.752Z")
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before - timedelta(milliseconds=1) <= parsed <= after


def test_replace_returns_a_changed_copy() -> None:
    event = AgentEvent(EventType.NOTIFICATION, message="a", timestamp=WHEN)
    changed = event.replace(message="b")
    assert (event.message, changed.message) == ("a", "b")
    assert changed.timestamp == WHEN


def test_usage_totals_and_dict() -> None:
    usage = TokenUsage(input_tokens=7, output_tokens=5, cached_input_tokens=3)
    assert usage.total_tokens == 12  # cached input is part of the input, not extra
    assert usage.to_dict() == {
        "input_tokens": 7,
        "output_tokens": 5,
        "total_tokens": 12,
        "cached_input_tokens": 3,
    }


@pytest.mark.parametrize(
    ("left", "right", "model"),
    [("a", "b", "b"), ("a", "", "a"), ("", "b", "b"), ("", "", "")],
)
def test_usage_addition(left: str, right: str, model: str) -> None:
    total = TokenUsage(1, 2, 3, left) + TokenUsage(10, 20, 30, right)
    assert total == TokenUsage(11, 22, 33, model)


def test_empty_usage() -> None:
    assert TokenUsage().to_dict() == {
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "cached_input_tokens": 0,
    }


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("", 5, ""),
        ("abcde", 5, "abcde"),
        ("abcdef", 5, "abcd…"),
        ("x" * MESSAGE_LIMIT, MESSAGE_LIMIT, "x" * MESSAGE_LIMIT),
        ("x" * (MESSAGE_LIMIT + 1), MESSAGE_LIMIT, "x" * (MESSAGE_LIMIT - 1) + "…"),
    ],
)
def test_shorten(text: str, limit: int, expected: str) -> None:
    assert shorten(text, limit) == expected
    assert len(shorten(text, limit)) <= limit


def test_shorten_default_limit_is_500() -> None:
    assert MESSAGE_LIMIT == 500
    assert len(shorten("y" * 10_000)) == 500
