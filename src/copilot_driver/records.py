"""The events file's record: one JSON object per line of `events.jsonl` (spec 3.3).

    {"type": "tool.execution_start", "timestamp": "2026-...Z", "data": {...},
     "id": "...", "parentId": "...", "agentId": "..."}

The driver's sink writes records, the report and the harness's progress line
read them, and the test kit checks them; all of them go through this module,
so the shape and the type names live here once. Readers are tolerant: a line
that is not a record, or a record with a missing or odd field, is reported as
such (`parse_line` returns None, the accessors return None or `{}`), never
raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from copilot_driver.formatting import iso_utc, parse_iso
from copilot_driver.vocabulary import Denial, PolicyInForce

# The runtime's event types that anything here reads or writes.
SESSION_START = "session.start"
SESSION_SHUTDOWN = "session.shutdown"
SESSION_ERROR = "session.error"
SESSION_WARNING = "session.warning"
SESSION_IDLE = "session.idle"
USER_MESSAGE = "user.message"
ASSISTANT_TURN_START = "assistant.turn_start"
ASSISTANT_TURN_END = "assistant.turn_end"
ASSISTANT_MESSAGE = "assistant.message"
TOOL_EXECUTION_START = "tool.execution_start"
TOOL_EXECUTION_COMPLETE = "tool.execution_complete"
PERMISSION_REQUESTED = "permission.requested"
PERMISSION_COMPLETED = "permission.completed"
ABORT = "abort"
# The driver's own record, written when the tool-denials guard stops the session.
GUARD_TOOL_DENIALS_EXCEEDED = "guard.tool_denials_exceeded"
# ... for every tool call counted against the tool contract's budget (gh-aw's record),
GUARD_TOOL_CALL_BUDGET_DEBIT = "guard.tool_call_budget_debit"
# ... and when the model kept calling tools past it and the driver stopped the turn.
GUARD_TOOL_CALL_BUDGET_EXCEEDED = "guard.tool_call_budget_exceeded"
# ... and for each denial: the policy's reason and the rule that would allow the
# request (the runtime's `permission.completed` says only `denied-...`).
POLICY_DENIAL = "policy.denial"
# ... and, first in the file, the tool policy the run enforces (its rules, or that every
# request is approved), so the file alone says what was allowed.
POLICY_IN_FORCE = "policy.in_force"

UNREPORTED_TYPES = frozenset(
    [
        SESSION_IDLE,
        "system.message",
        "system.notification",
        "session.info",
        "session.usage_info",
        "session.usage_checkpoint",
        "session.model_change",
        "session.mode_changed",
        "session.title_changed",
        "session.context_changed",
        "session.truncation",
        "session.compaction_start",
        "session.compaction_complete",
        "pending_messages.modified",
        "assistant.intent",
        "assistant.reasoning",
        "assistant.usage",
        "assistant.idle",
        "assistant.message_start",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.shell_output",
        "hook.start",
        "hook.end",
        "hook.progress",
        "instruction.update",
    ]
)
"""The runtime's other event types: known, but carrying nothing the run report
shows (usage, reasoning, streamed output, hooks). The report counts a type that is
neither one of the constants above nor in this set as unknown."""

ID_FIELDS = ("id", "parentId", "agentId")
"""Kept as the runtime gave them: they link subagent events to their parents."""


class EventRecord(TypedDict):
    type: str
    timestamp: str | None
    data: Any
    id: NotRequired[str]
    parentId: NotRequired[str]
    agentId: NotRequired[str]


def make_record(
    event_type: str, data: Any, *, timestamp: Any = None, ids: Mapping[str, Any] = {}
) -> EventRecord:
    """A record in the file's field order; `timestamp` defaults to now.

    Timestamps are written as gh-aw's driver writes them (JavaScript's
    `toISOString()`, `2026-11-26T11:53:03.880Z`), whatever form the SDK gave
    (`...880000+00:00`); one that cannot be read is kept as it came.
    """
    moment = parse_iso(timestamp)
    record: EventRecord = {
        "type": event_type,
        "timestamp": iso_utc(moment) if moment is not None or timestamp is None else timestamp,
        "data": data,
    }
    for key in ID_FIELDS:
        value = ids.get(key)
        if value is not None:
            record[key] = value  # type: ignore[literal-required]
    return record


def guard_record(count: int, threshold: int, reason: str) -> EventRecord:
    """The tool-denials guard's record (spec 4.5)."""
    return make_record(
        GUARD_TOOL_DENIALS_EXCEEDED,
        {"denialCount": count, "threshold": threshold, "reason": reason},
    )


def budget_debit_record(tool: str, session_id: str | None, count: int, limit: int) -> EventRecord:
    """One call counted against the tool-call budget, in gh-aw's fields; `exhausted`
    marks a call past the budget (it was denied)."""
    return make_record(
        GUARD_TOOL_CALL_BUDGET_DEBIT,
        {
            "toolName": tool,
            "sessionId": session_id,
            "callCount": count,
            "limit": limit,
            "exhausted": count > limit,
        },
    )


def budget_record(
    tool: str, session_id: str | None, count: int, limit: int, reason: str
) -> EventRecord:
    """The call at which the driver stopped a model that kept calling tools past the
    budget, and why; the debit's fields plus `reason`."""
    return make_record(
        GUARD_TOOL_CALL_BUDGET_EXCEEDED,
        {
            "toolName": tool,
            "sessionId": session_id,
            "callCount": count,
            "limit": limit,
            "exhausted": True,
            "reason": reason,
        },
    )


def denial_record(denial: Denial) -> EventRecord:
    """The policy's account of one denial; `allowRule` is null when no rule can allow it."""
    return make_record(POLICY_DENIAL, denial.record_data())


def policy_record(policy: PolicyInForce) -> EventRecord:
    """The policy the run enforces, as result.json's `policy` gives it."""
    return make_record(POLICY_IN_FORCE, policy.to_json())


def parse_line(line: str | bytes) -> dict[str, Any] | None:
    """One line of an events file as a JSON object, or None (blank, not JSON, not an
    object). The object may still lack fields: read them with the accessors."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def event_type(record: Mapping[str, Any]) -> str | None:
    value = record.get("type")
    return value if isinstance(value, str) else None


def event_data(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's `data` object; `{}` when it is missing or not an object."""
    value = record.get("data")
    return value if isinstance(value, dict) else {}


def event_time(record: Mapping[str, Any]) -> datetime | None:
    """The record's timestamp, when it is a readable ISO 8601 one."""
    return parse_iso(record.get("timestamp"))
