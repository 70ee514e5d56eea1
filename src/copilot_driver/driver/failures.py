"""Turn what the SDK raises into one sentence a workflow author can act on.

Pure (duck-typed on the SDK's exceptions), so it is tested without a
sidecar. The SDK's own texts are kept after the explanation: they are what
a maintainer searches for.
"""

from __future__ import annotations

from dataclasses import dataclass

# JSON-RPC error codes the Copilot CLI uses for the connection handshake.
AUTHENTICATION_REQUIRED = -32001
AUTHENTICATION_FAILED = -32002
AUTHENTICATION_NOT_CONFIGURED = -32003


@dataclass(frozen=True)
class Failure:
    kind: str
    """A stable machine-readable name (`sidecar_unreachable`, `auth_failed`, ...)."""
    message: str


def describe_failure(error: BaseException, *, phase: str, sdk_uri: str) -> Failure:
    """Explain `error`, raised while the driver was in `phase`."""
    code = getattr(error, "code", None)
    text = " ".join(str(error).split()) or type(error).__name__
    own_kind = getattr(error, "failure_kind", None)
    if isinstance(own_kind, str):  # the driver's own errors say what they are
        return Failure(own_kind, text)
    if code == AUTHENTICATION_FAILED:
        return Failure(
            "auth_failed",
            f"the Copilot sidecar at {sdk_uri} rejected the connection token "
            "(AUTHENTICATION_FAILED): COPILOT_CONNECTION_TOKEN must be the value the "
            "harness gave the sidecar for this run",
        )
    if code == AUTHENTICATION_NOT_CONFIGURED:
        return Failure(
            "auth_not_configured",
            f"the Copilot sidecar at {sdk_uri} was started without a connection token "
            "(AUTHENTICATION_NOT_CONFIGURED): start it with COPILOT_CONNECTION_TOKEN set",
        )
    if code == AUTHENTICATION_REQUIRED:
        return Failure(
            "auth_required",
            f"the Copilot sidecar at {sdk_uri} requires authentication (AUTHENTICATION_REQUIRED)",
        )
    if phase == "connect":
        if "Connection refused" in text or "Errno 111" in text:
            return Failure(
                "sidecar_unreachable",
                f"cannot reach the Copilot sidecar at {sdk_uri}: connection refused; "
                f"is the sidecar running and is COPILOT_SDK_URI its address? ({text})",
            )
        if isinstance(error, TimeoutError):
            return Failure(
                "sidecar_unresponsive",
                f"the Copilot sidecar at {sdk_uri} did not complete the connection "
                "handshake in time",
            )
        return Failure(
            "sidecar_unreachable", f"cannot connect to the Copilot sidecar at {sdk_uri}: {text}"
        )
    if text.startswith("Session error:"):
        return Failure(
            "session_error", f"the session failed: {text.removeprefix('Session error:').strip()}"
        )
    if "closed before response completed" in text or type(error).__name__ == "ProcessExitedError":
        return Failure(
            "sidecar_lost",
            f"the connection to the Copilot sidecar at {sdk_uri} was lost during {phase}: {text}",
        )
    if isinstance(error, TimeoutError):
        return Failure(
            "sidecar_unresponsive",
            f"the Copilot sidecar at {sdk_uri} did not answer during {phase} in time",
        )
    return Failure("unexpected", f"unexpected error during {phase}: {type(error).__name__}: {text}")
