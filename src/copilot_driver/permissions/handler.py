"""SDK glue: permission request -> policy -> SDK decision, with the diagnostics.

Every denial (spec 5.5, 6.3):
- returns a reject decision whose feedback tells the model the invocation is
  not allowed by workflow tool permissions;
- logs one `permission.denied` entry (`requestKind`, `requestSummary`,
  `reason`, warning level);
- goes to each secondary denial logger (pluggable; under GitHub Actions one
  of them prints a warning annotation);
- counts towards the tool-denials guard (GH_AW_MAX_TOOL_DENIALS), which
  stops the session at its threshold.

The handler is synchronous and does no I/O beyond the log line: decisions
cost microseconds and never block the event loop. Anything unexpected while
deciding is a denial (fail closed).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from copilot_driver.logs import DriverLog
from copilot_driver.permissions.policy import DENIAL_FEEDBACK, Decision, Policy
from copilot_driver.redaction import Redactor


@dataclass(frozen=True)
class Denial:
    session_id: str | None
    kind: str
    summary: str
    reason: str


DenialLogger = Callable[[Denial], None]


def github_actions_annotation(redactor: Redactor, stream: IO[str] | None = None) -> DenialLogger:
    """A secondary logger printing `::warning ...::` workflow commands (stderr).

    stdout carries only the final answer, so the annotation goes to stderr,
    which the Actions runner also scans for workflow commands.
    """

    def log(denial: Denial) -> None:
        message = f"Tool invocation denied by workflow tool permissions: {denial.summary}"
        line = (
            f"::warning title={_escape_property('Copilot tool permission denied')}::"
            f"{_escape_data(redactor.text(message))}\n"
        )
        target = stream or sys.stderr
        target.write(line)
        target.flush()

    return log


class DenialGuard:
    """Counts denials; calls `on_trip(count, threshold)` once at the threshold."""

    def __init__(self, threshold: int, on_trip: Callable[[int, int], None]) -> None:
        self.threshold = threshold
        self.count = 0
        self.tripped = False
        self._on_trip = on_trip

    def record(self) -> None:
        self.count += 1
        if not self.tripped and self.count >= self.threshold:
            self.tripped = True
            self._on_trip(self.count, self.threshold)


class DecisionsInFlight:
    """Decisions made but maybe not yet delivered to the runtime.

    The SDK calls the handler inside a task of its own and sends the decision
    over RPC only after the handler returned. When a decision stops the run
    (the denials guard), the cleanup's `abort` could overtake those replies
    and the runtime would record the requests as cancelled instead of denied;
    the cleanup waits for these tasks first (briefly: they only send a reply).
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def track(self) -> None:
        """Called from the handler: remember the SDK task that will send the decision."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # called outside an event loop (a test, a future SDK)
            return
        if task is not None and not task.done():
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def delivered(self, timeout: float) -> None:
        """Wait until every decision made so far has been sent, at most `timeout`."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)


def make_permission_handler(
    policy: Policy,
    log: DriverLog,
    *,
    secondary: Sequence[DenialLogger] = (),
    guard: DenialGuard | None = None,
    in_flight: DecisionsInFlight | None = None,
) -> Callable[[Any, Any], Any]:
    """The `on_permission_request` handler for `create_session`."""
    from copilot.rpc import PermissionDecisionApproveOnce, PermissionDecisionReject
    from copilot.session import PermissionHandler

    def handle(request: Any, invocation: Any) -> Any:
        if in_flight is not None:
            in_flight.track()
        if policy.approves_everything:
            # What "defer to the SDK default policy" means (spec 5.2).
            return PermissionHandler.approve_all(request, invocation)
        decision = _decide(policy, request)
        if decision.allowed:
            log.debug(
                "permission.approved",
                f"approved {decision.summary}",
                requestKind=decision.kind,
                requestSummary=decision.summary,
            )
            return PermissionDecisionApproveOnce()
        session_id = invocation.get("session_id") if isinstance(invocation, dict) else None
        denial = Denial(session_id, decision.kind, decision.summary, decision.reason)
        log.warning(
            "permission.denied",
            f"permission denied by workflow tool permissions: {decision.summary}",
            sessionId=session_id,
            requestKind=decision.kind,
            requestSummary=decision.summary,
            reason=decision.reason,
        )
        for secondary_logger in secondary:
            try:
                secondary_logger(denial)
            except Exception as error:  # a diagnostic must never change the decision
                log.debug("permission.secondary_failed", f"a denial logger failed: {error}")
        if guard is not None:
            guard.record()
        return PermissionDecisionReject(feedback=DENIAL_FEEDBACK)

    return handle


def _decide(policy: Policy, request: Any) -> Decision:
    try:
        wire = request.to_dict()
    except Exception:  # not a request we can read: deny
        wire = None
    if not isinstance(wire, dict):
        return Decision(False, "unknown", "unknown", "the request could not be read")
    try:
        return policy.decide(wire)
    except Exception as error:  # a bug must deny, never approve
        return Decision(
            False,
            str(wire.get("kind")),
            "unknown",
            f"internal error while deciding ({type(error).__name__})",
        )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
