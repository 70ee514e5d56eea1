"""The error kinds every adapter reports, and whether a retry can help.

An orchestrator decides what to do next from the kind alone: a workspace
that does not exist will not appear on retry, a crashed agent process might
start fine next time. The default retryability comes from the kind; an
adapter that knows better (e.g. Codex's `contextWindowExceeded` is a
`turn_failed` that no retry fixes) says so per error.
"""

from __future__ import annotations

from copilot_driver.errors import CopilotDriverError
from copilot_driver.vocabulary import AdapterErrorKind

RETRYABLE_BY_DEFAULT = frozenset(
    {
        AdapterErrorKind.PORT_EXIT,
        AdapterErrorKind.RESPONSE_TIMEOUT,
        AdapterErrorKind.TURN_TIMEOUT,
        AdapterErrorKind.TURN_FAILED,
    }
)


class AgentError(CopilotDriverError):
    """A failure an adapter reports: a kind, one clear sentence, and a retry hint."""

    def __init__(
        self, kind: AdapterErrorKind, message: str, *, retryable: bool | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = kind in RETRYABLE_BY_DEFAULT if retryable is None else retryable

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def __repr__(self) -> str:
        return f"AgentError({self.kind.value!r}, {self.message!r}, retryable={self.retryable})"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind.value, "message": self.message, "retryable": self.retryable}
