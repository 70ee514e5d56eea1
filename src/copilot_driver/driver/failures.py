"""Turn what ended a run into one sentence a workflow author can act on.

Pure, so it is tested without a sidecar. The SDK's failures arrive already
classified by the SDK boundary (sdk.py) as the errors defined here; whatever
it could not classify arrives as the SDK raised it and is described by its
type and text. The SDK's own texts are kept after the explanation: they are
what a maintainer searches for.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from copilot_driver.driver.stop import (
    StopRequestedError,
    StopSignalError,
    ToolCallBudgetExceededError,
    ToolDenialsExceededError,
)
from copilot_driver.errors import CopilotDriverError
from copilot_driver.exit_codes import ExitCode, for_signal
from copilot_driver.vocabulary import DriverErrorKind


class Phase(StrEnum):
    """Where the lifecycle was when the run ended; error messages name it."""

    CONNECT = "connect"
    ACCOUNT = "the account check"
    SESSION_CREATION = "session creation"
    TURN = "the turn"
    CLEANUP = "cleanup"


# JSON-RPC error codes the Copilot CLI uses for the connection handshake.
AUTHENTICATION_REQUIRED = -32001
AUTHENTICATION_FAILED = -32002
AUTHENTICATION_NOT_CONFIGURED = -32003
AUTHENTICATION_CODES = frozenset(
    {AUTHENTICATION_REQUIRED, AUTHENTICATION_FAILED, AUTHENTICATION_NOT_CONFIGURED}
)


class SdkError(CopilotDriverError):
    """An SDK call failed in a way the SDK boundary recognised; `sdk_error` is what
    the SDK raised, and its text and type are what the messages show."""

    def __init__(self, sdk_error: BaseException) -> None:
        super().__init__(str(sdk_error))
        self.sdk_error = sdk_error


class SidecarAuthError(SdkError):
    """The sidecar refused the connection handshake; `code` is one of the
    AUTHENTICATION_* JSON-RPC codes."""

    def __init__(self, sdk_error: BaseException, code: int) -> None:
        super().__init__(sdk_error)
        self.code = code


class SidecarRefusedError(SdkError):
    """Nothing listens at the sidecar's address (the connection was refused)."""


class SidecarDisconnectedError(SdkError):
    """The SDK's connection to the sidecar closed under the call."""


class CatalogUnreadableError(SdkError):
    """The sidecar could not list the account's models (`models.list` failed)."""


class SessionFailedError(SdkError):
    """The runtime reported a session error; `reason` is the runtime's own words."""

    def __init__(self, sdk_error: BaseException, reason: str) -> None:
        super().__init__(sdk_error)
        self.reason = reason


def as_raised(error: BaseException) -> BaseException:
    """The exception as the SDK raised it (`error` itself when it is not an SdkError)."""
    return error.sdk_error if isinstance(error, SdkError) else error


@dataclass(frozen=True)
class Failure:
    kind: DriverErrorKind
    message: str
    exit_code: int = ExitCode.FAILURE


def describe_failure(
    error: BaseException, *, phase: Phase, sdk_uri: str, connected: bool = True
) -> Failure:
    """Explain `error`, raised while the driver was in `phase`; `connected` is False
    once the SDK has seen its connection to the sidecar close."""
    raised = as_raised(error)
    text = " ".join(str(raised).split()) or type(raised).__name__
    own_kind = getattr(error, "failure_kind", None)
    if isinstance(own_kind, DriverErrorKind):  # the driver's own errors say what they are
        return Failure(own_kind, text)
    if isinstance(error, SidecarAuthError):
        return _authentication(error.code, sdk_uri)
    if phase == Phase.CONNECT:
        if isinstance(error, SidecarRefusedError):
            return Failure(
                DriverErrorKind.SIDECAR_UNREACHABLE,
                f"cannot reach the Copilot sidecar at {sdk_uri}: connection refused; "
                f"is the sidecar running and is COPILOT_SDK_URI its address? ({text})",
            )
        if isinstance(error, TimeoutError):
            return Failure(
                DriverErrorKind.SIDECAR_UNRESPONSIVE,
                f"the Copilot sidecar at {sdk_uri} did not complete the connection "
                "handshake in time",
            )
        return Failure(
            DriverErrorKind.SIDECAR_UNREACHABLE,
            f"cannot connect to the Copilot sidecar at {sdk_uri}: {text}",
        )
    if isinstance(error, SessionFailedError):
        return Failure(DriverErrorKind.SESSION_ERROR, f"the session failed: {error.reason}")
    if not connected or isinstance(error, SidecarDisconnectedError):
        return Failure(
            DriverErrorKind.SIDECAR_LOST,
            f"the connection to the Copilot sidecar at {sdk_uri} was lost during {phase}: {text}",
        )
    if isinstance(error, TimeoutError):
        return Failure(
            DriverErrorKind.SIDECAR_UNRESPONSIVE,
            f"the Copilot sidecar at {sdk_uri} did not answer during {phase} in time",
        )
    return Failure(
        DriverErrorKind.UNEXPECTED,
        f"unexpected error during {phase}: {type(raised).__name__}: {text}",
    )


def _authentication(code: int, sdk_uri: str) -> Failure:
    if code == AUTHENTICATION_FAILED:
        return Failure(
            DriverErrorKind.AUTH_FAILED,
            f"the Copilot sidecar at {sdk_uri} rejected the connection token "
            "(AUTHENTICATION_FAILED): COPILOT_CONNECTION_TOKEN must be the value the "
            "harness gave the sidecar for this run",
        )
    if code == AUTHENTICATION_NOT_CONFIGURED:
        return Failure(
            DriverErrorKind.AUTH_NOT_CONFIGURED,
            f"the Copilot sidecar at {sdk_uri} was started without a connection token "
            "(AUTHENTICATION_NOT_CONFIGURED): start it with COPILOT_CONNECTION_TOKEN set",
        )
    return Failure(
        DriverErrorKind.AUTH_REQUIRED,
        f"the Copilot sidecar at {sdk_uri} requires authentication (AUTHENTICATION_REQUIRED)",
    )


def describe_stop(reason: StopRequestedError, phase: Phase) -> Failure:
    """What a stop request means for the run's result."""
    if isinstance(reason, StopSignalError):
        where = "cleanup, after the answer arrived" if phase == Phase.CLEANUP else phase.value
        return Failure(
            DriverErrorKind.INTERRUPTED,
            f"stopped by {reason} during {where}; cleaned up",
            for_signal(reason.signum),
        )
    if isinstance(reason, ToolDenialsExceededError):
        return Failure(
            DriverErrorKind.TOOL_DENIALS_EXCEEDED, reason.explanation, ExitCode.TOOL_DENIALS
        )
    if isinstance(reason, ToolCallBudgetExceededError):
        return Failure(
            DriverErrorKind.TOOL_CALL_BUDGET_EXCEEDED, reason.explanation, ExitCode.TOOL_CALL_BUDGET
        )
    return Failure(DriverErrorKind.SIDECAR_LOST, f"{reason} (during {phase})")


def describe_send_timeout(send_timeout_ms: int) -> Failure:
    return Failure(
        DriverErrorKind.SEND_TIMEOUT,
        f"the session did not finish within {send_timeout_ms} ms "
        "(COPILOT_SDK_SEND_TIMEOUT_MS); the turn was aborted",
        ExitCode.SEND_TIMEOUT,
    )


def describe_incomplete_events(error: str) -> Failure:
    return Failure(
        DriverErrorKind.EVENTS_UNWRITABLE,
        f"the session completed, but its events file is incomplete: {error}",
    )
