"""What crosses a process boundary, spelled once: one process writes these words
and another reads them, so neither spells them alone.

    DriverErrorKind   the driver's `errorKind` (its `error` log entry, result.json)
    HarnessErrorKind  the harness's own `error-kind` (before or around the driver)
    AdapterErrorKind  an adapter turn's `error_kind` (the adapters' command line)
    LogEvent          the `event` of the driver's log entries (the harness's progress
                      line, the test kit and the benchmarks read them)
    *_FILE_NAME       the files of a session's folder
    RunResult         result.json: written by the driver, read by the report
    PolicyInForce     the tool policy a run enforced: result.json, the events file's
                      `policy.in_force` record, the report and the Action's outputs
    Denial            one denial, from the policy's decision to the log entry, the
                      `policy.denial` record and the report

Each set of error kinds is an enum of its own, named for its writer, so one word
never means two things. Readers here are tolerant: a field of the wrong type is a
field not given, never an exception.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

EVENTS_FILE_NAME = "events.jsonl"
RESULT_FILE_NAME = "result.json"
"""The driver's result, beside the events file."""
SIDECAR_LOG_NAME = "sidecar.log"
"""The harness's copy of the sidecar's own log, beside the events file."""

_MAX_DURATION_MS = 2**63


class DriverErrorKind(StrEnum):
    """The `errorKind` of the driver's `error` log entry and of result.json: stable,
    machine-readable; the harness chooses its fix by it."""

    INTERRUPTED = "interrupted"
    SIDECAR_LOST = "sidecar_lost"
    TOOL_DENIALS_EXCEEDED = "tool_denials_exceeded"
    TOOL_CALL_BUDGET_EXCEEDED = "tool_call_budget_exceeded"
    SEND_TIMEOUT = "send_timeout"
    EVENTS_UNWRITABLE = "events_unwritable"
    SESSION_ERROR = "session_error"
    AUTH_FAILED = "auth_failed"
    AUTH_NOT_CONFIGURED = "auth_not_configured"
    AUTH_REQUIRED = "auth_required"
    NOT_SIGNED_IN = "not_signed_in"
    """The sidecar has no GitHub sign-in and no provider serves the model."""
    TOKEN_REFUSED = "token_refused"  # noqa: S105 - an error kind, not a secret
    NO_COPILOT_ACCESS = "no_copilot_access"
    GITHUB_UNREACHABLE = "github_unreachable"
    MODEL_UNAVAILABLE = "model_unavailable"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXCEEDED = "quota_exceeded"
    COPILOT_API_ERROR = "copilot_api_error"
    """The Copilot API failed the account check (HTTP 5xx): worth another try."""
    SIDECAR_UNREACHABLE = "sidecar_unreachable"
    SIDECAR_UNRESPONSIVE = "sidecar_unresponsive"
    UNEXPECTED = "unexpected"


class HarnessErrorKind(StrEnum):
    """The `error-kind` of failures the harness finds before or around the driver."""

    CLI_NOT_FOUND = "cli_not_found"
    NO_CREDENTIAL = "no_credential"
    UNSUPPORTED_TOKEN = "unsupported_token"  # noqa: S105 - an error kind, not a secret
    """A GitHub token the Copilot CLI refuses by its shape (a classic `ghp_` one)."""
    CONFIG = "config"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    SIDECAR_START_FAILED = "sidecar_start_failed"
    SIDECAR_DIED = "sidecar_died"
    DRIVER_NOT_STARTED = "driver_not_started"
    DRIVER_FAILED = "driver_failed"
    """The driver failed without saying which way (another driver, or a crash)."""


class AdapterErrorKind(StrEnum):
    """An adapter's failure, from which an orchestrator decides what to do next
    (`adapters.core.errors` says which kinds a retry can help)."""

    INVALID_WORKSPACE_CWD = "invalid_workspace_cwd"
    AGENT_NOT_FOUND = "agent_not_found"
    PORT_EXIT = "port_exit"
    RESPONSE_ERROR = "response_error"
    RESPONSE_TIMEOUT = "response_timeout"
    TURN_TIMEOUT = "turn_timeout"
    TURN_FAILED = "turn_failed"
    TURN_CANCELLED = "turn_cancelled"
    TURN_INPUT_REQUIRED = "turn_input_required"


class LogEvent(StrEnum):
    """The `event` field of the driver's log entries (spec 6.5), in the order a run
    writes them. The lifecycle entries and the error entry are audit records,
    written at every log level."""

    COMPATIBILITY = "compatibility"
    COMPATIBILITY_UNKNOWN = "compatibility.unknown"
    CONFIG_FALLBACK = "config.fallback"
    CONFIG_UNKNOWN_VARIABLE = "config.unknown_variable"
    """A variable that looks like a misspelt one the driver reads."""
    SECRETS_SHORT = "secrets.short"
    """A secret too short to mask inside text: masked only as a whole value."""
    PERMISSIONS_CONFIG = "permissions.config"
    PERMISSIONS_UNUSABLE_RULE = "permissions.unusable_rule"
    PERMISSIONS_GRANTS_CODE_EXECUTION = "permissions.grants_code_execution"
    TOOLS_CONFIG = "tools.config"
    CONNECTION_START = "connection.start"
    CLIENT_STARTED = "client.started"
    ACCOUNT_CHECKED = "account.checked"
    """The subscription path's sign-in and model, checked before the session exists."""
    SESSION_CREATED = "session.created"
    PROMPT_DISPATCHED = "prompt.dispatched"
    PERMISSION_APPROVED = "permission.approved"
    PERMISSION_DENIED = "permission.denied"
    PERMISSION_WITHHELD = "permission.withheld"
    PERMISSION_SECONDARY_FAILED = "permission.secondary_failed"
    TOOL_DENIAL = "tool.denial"
    """gh-aw's per-denial line, "tool denial N/M: permission denied: ..."."""
    TOOL_CALL_BUDGET_DENIED = "tool_call_budget.denied"
    TOOL_CALL_BUDGET_EXCEEDED = "guard.tool_call_budget_exceeded"
    SIDECAR_UNREADABLE_NOTIFICATION = "sidecar.unreadable_notification"
    SESSION_IDLE_TIMEOUT = "session.idle_timeout"
    DRIVER_WAITING = "driver.waiting"
    """The keep-alive under gh-aw's harness: the turn is still in flight (heartbeat.py)."""
    SESSION_COMPLETED = "session.completed"
    EVENTS_WRITE_FAILED = "events.write_failed"
    RESULT_WRITE_FAILED = "result.write_failed"
    CLEANUP_TIMEOUT = "cleanup.timeout"
    CLEANUP_FAILED = "cleanup.failed"
    ERROR = "error"
    """The run's verdict: `message` in words and `errorKind` (a DriverErrorKind)."""
    ERROR_DETAIL = "error.detail"


@dataclass(frozen=True)
class RunResult:
    """result.json, the driver's account of how the run ended (spec 7.2). Read back,
    a field may be None: older files lack `errorKind`, and a field of the wrong type
    is not given."""

    exit_code: int | None = None
    error_kind: str | None = None
    """A DriverErrorKind's value."""
    error: str | None = None
    duration_ms: float | None = None
    """`durationMs`: the driver's own clock, from sending the prompt to the session's
    completion (spec 6.5). Not the events' span: it starts and ends elsewhere."""
    output: str = ""
    session_id: str | None = None
    policy: PolicyInForce | None = None
    """None when the driver stopped before it read a policy (a configuration error)."""

    @property
    def has_output(self) -> bool:
        return bool(self.output.strip())

    def to_json(self) -> dict[str, object]:
        """The file's object, in its field order."""
        return {
            "exitCode": self.exit_code,
            "output": self.output,
            "hasOutput": self.has_output,
            "durationMs": self.duration_ms,
            "sessionId": self.session_id,
            "error": self.error,
            "errorKind": self.error_kind,
            "policy": self.policy.to_json() if self.policy else None,
        }

    @classmethod
    def from_json(cls, value: Any) -> RunResult | None:
        """A result.json object read back; None when it is not an object."""
        if not isinstance(value, dict):
            return None
        exit_code = value.get("exitCode")
        return cls(
            exit_code=exit_code if _is_int(exit_code) else None,
            error_kind=_str(value, "errorKind"),
            error=_str(value, "error"),
            duration_ms=_duration(value.get("durationMs")),
            output=_str(value, "output") or "",
            session_id=_str(value, "sessionId"),
            policy=PolicyInForce.from_json(value.get("policy")),
        )


def read_result(events_file: Path) -> RunResult | None:
    """The result.json beside an events file, or None: absent, unreadable, not JSON."""
    try:
        text = events_file.with_name(RESULT_FILE_NAME).read_text(encoding="utf-8", errors="replace")
        return RunResult.from_json(json.loads(text))
    except (OSError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class PolicyInForce:
    """The tool policy a run enforced, as the audit trail names it: its `mode`
    (`scoped`: only what a rule allows; `allow-all` and `unrestricted`: every request
    approved but what a deny rule matches), the variable it came from (`source`), its
    rules, and the start-up log's sentence for it."""

    mode: str
    source: str | None
    """The variable the rules came from; None (JSON null) when no variable set any."""
    allowed_tools: tuple[str, ...] = ()
    denied_tools: tuple[str, ...] = ()
    summary: str = ""

    @property
    def approves_everything(self) -> bool:
        """Every request not denied by a deny rule is approved (no allowlist)."""
        return self.mode != "scoped"

    def to_json(self) -> dict[str, Any]:
        """result.json's `policy` and the `policy.in_force` record's `data`."""
        return {
            "mode": self.mode,
            "source": self.source,
            "allowedTools": list(self.allowed_tools),
            "deniedTools": list(self.denied_tools),
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, value: Any) -> PolicyInForce | None:
        """Read back; None when absent or when `mode` is not a string."""
        if not isinstance(value, dict):
            return None
        mode, source = _str(value, "mode"), _str(value, "source")
        if mode is None:
            return None
        return cls(
            mode=mode,
            source=source,
            allowed_tools=_strings(value.get("allowedTools")),
            denied_tools=_strings(value.get("deniedTools")),
            summary=_str(value, "summary") or "",
        )


@dataclass(frozen=True)
class Denial:
    """One permission request the policy denied: what was asked (`kind`, a short
    `summary`), why not, and the narrowest `--allow-tool` rule that would allow it
    (None: no rule can). The same fields, in the same camelCase keys, make the
    `permission.denied` log entry and the `policy.denial` events record, and the
    report reads them back from the record."""

    kind: str | None
    summary: str
    reason: str
    allow_rule: str | None = None
    tool_call_id: str | None = None
    session_id: str | None = None

    def log_fields(self) -> dict[str, Any]:
        """The `permission.denied` entry's fields."""
        return {
            "sessionId": self.session_id,
            "requestKind": self.kind,
            "requestSummary": self.summary,
            "reason": self.reason,
            "allowRule": self.allow_rule,
        }

    def record_data(self) -> dict[str, Any]:
        """The `policy.denial` record's `data`."""
        return {
            "requestKind": self.kind,
            "requestSummary": self.summary,
            "reason": self.reason,
            "allowRule": self.allow_rule,
            "toolCallId": self.tool_call_id,
        }

    @classmethod
    def from_record_data(cls, data: Mapping[str, Any]) -> Denial:
        """A `policy.denial` record's `data` read back; missing fields in words."""
        return cls(
            kind=_str(data, "requestKind"),
            summary=_str(data, "requestSummary") or "unknown",
            reason=_str(data, "reason") or "(no reason recorded)",
            allow_rule=_str(data, "allowRule"),
            tool_call_id=_str(data, "toolCallId"),
        )


def _str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _strings(value: object) -> tuple[str, ...]:
    """The strings of a JSON array (anything else in it left out); () if not an array."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _duration(value: object) -> float | None:
    """A finite, non-negative JSON number (Python's JSON reader accepts `NaN` and
    `Infinity`, and integers too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and 0 <= number < _MAX_DURATION_MS else None
