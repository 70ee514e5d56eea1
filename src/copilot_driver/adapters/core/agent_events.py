"""The domain events every adapter emits, whatever agent it drives.

`AgentEvent` is one small, flat, typed record for all of them, so a
consumer (a log, a dashboard, the JSON Lines printer) handles one shape.
Fields that do not apply to an event type stay `None` and are left out of
the JSON form. `TokenUsage` is the token count events and results carry.
Each adapter's `translate.py` turns its agent's output into these events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from copilot_driver import formatting
from copilot_driver.formatting import iso_utc
from copilot_driver.vocabulary import AdapterErrorKind

MESSAGE_LIMIT = 500
"""Longest `message` an event carries; longer text is cut with an ellipsis."""


class EventType(StrEnum):
    SESSION_STARTED = "session_started"
    NOTIFICATION = "notification"
    TOKEN_USAGE = "token_usage"  # noqa: S105 (an event name, not a secret)
    TOOL_RESULT = "tool_result"
    TURN_COMPLETED = "turn_completed"
    TURN_FAILED = "turn_failed"
    TURN_CANCELLED = "turn_cancelled"
    MALFORMED = "malformed"
    OTHER_MESSAGE = "other_message"
    UNSUPPORTED_TOOL_CALL = "unsupported_tool_call"


@dataclass(frozen=True)
class TokenUsage:
    """Cumulative token counts for a session (not per message)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    model: str = ""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            model=other.model or self.model,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }
        if self.model:
            out["model"] = self.model
        return out


def _now() -> datetime:
    return datetime.now(UTC)


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """At most `limit` characters, cut with a one-character ellipsis (`…`), line
    breaks kept: the form the events promise."""
    return formatting.shorten(text, limit, one_line=False, ellipsis="…")


@dataclass(frozen=True)
class AgentEvent:
    type: EventType
    session_id: str = ""
    message: str = ""
    timestamp: datetime = field(default_factory=_now)
    tool_name: str | None = None
    tool_duration_ms: int | None = None
    tool_error: bool | None = None
    usage: TokenUsage | None = None
    error_kind: AdapterErrorKind | None = None
    api_duration_ms: int | None = None
    raw_type: str | None = None
    """The agent's own event name (e.g. `tool.execution_start`), for tracing."""

    def replace(self, **changes: Any) -> AgentEvent:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type.value,
            "timestamp": iso_utc(self.timestamp),
            "session_id": self.session_id,
        }
        if self.message:
            out["message"] = self.message
        for name in ("tool_name", "tool_duration_ms", "tool_error", "api_duration_ms", "raw_type"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.error_kind is not None:
            out["error_kind"] = self.error_kind.value
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        return out
