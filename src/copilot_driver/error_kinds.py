"""Every error kind the package's processes write and read, in one place.

The driver writes its kind in its `error` log entry and in result.json; the
harness reads it (to choose the fix, to decide a retry) and adds kinds of its
own for what it finds around the driver; the adapters' command line writes its
own in its JSON events. Each set is an enum of its own, named for its writer, so
one word never means two things and no reader spells a kind as a bare string:

    DriverErrorKind   the driver's `errorKind` (log entry, result.json)
    HarnessErrorKind  the harness's own `error-kind` (before or around the driver)
    AdapterErrorKind  an adapter turn's `error_kind` (the adapters' command line)
"""

from __future__ import annotations

from enum import StrEnum


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
    SIDECAR_UNREACHABLE = "sidecar_unreachable"
    SIDECAR_UNRESPONSIVE = "sidecar_unresponsive"
    UNEXPECTED = "unexpected"


class HarnessErrorKind(StrEnum):
    """The `error-kind` of failures the harness finds before or around the driver."""

    CLI_NOT_FOUND = "cli_not_found"
    NO_CREDENTIAL = "no_credential"
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
