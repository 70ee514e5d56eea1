"""SDK glue: permission request -> policy -> SDK decision, with the diagnostics.

Every denial (spec 5.5, 6.3):
- returns a reject decision whose feedback tells the model the invocation is
  not allowed by workflow tool permissions;
- logs one `permission.denied` entry (`requestKind`, `requestSummary`,
  `reason`, warning level);
- goes to each secondary denial logger (pluggable; under GitHub Actions one
  of them prints a warning annotation);
- counts towards the tool-denials guard (GH_AW_MAX_TOOL_DENIALS), which
  stops the session at its threshold (spec 4.5).

Decisions are synchronous and do no I/O beyond the log line: they cost
microseconds and never block the event loop. Anything unexpected while
deciding is a denial (fail closed). The one exception is the guard's stop:
the denial that reaches the threshold, and every request after it, are
withheld (the handler returns an awaitable, which the SDK awaits) until the
driver has aborted the turn. A decision delivered first would let the
runtime call the model again, and the model could ask for yet another tool
before the abort landed. Withheld requests end as cancelled in the
runtime's record; the driver's log and events file carry the denial that
tripped the guard.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from copilot_driver.logs import DriverLog
from copilot_driver.permissions.policy import DENIAL_FEEDBACK, Decision, Policy
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import Denial, LogEvent
from copilot_driver.workflow_commands import annotation

DenialLogger = Callable[[Denial], None]

WITHHOLD_TIMEOUT_S = 30.0
"""A backstop: the driver stops the turn within seconds of the guard tripping."""


def github_actions_warning(title: str, message: str, stream: IO[str] | None = None) -> None:
    """Print a `::warning ...::` workflow command on stderr (`message` already masked).

    stdout carries only the final answer, so annotations go to stderr, which
    the Actions runner also scans for workflow commands.
    """
    _annotate("warning", title, message, stream)


def github_actions_notice(title: str, message: str, stream: IO[str] | None = None) -> None:
    """Print a `::notice ...::` workflow command on stderr (`message` already masked)."""
    _annotate("notice", title, message, stream)


def _annotate(level: str, title: str, message: str, stream: IO[str] | None) -> None:
    target = stream or sys.stderr
    target.write(annotation(level, title, message))
    target.flush()


def github_actions_annotation(redactor: Redactor, stream: IO[str] | None = None) -> DenialLogger:
    """A secondary logger printing each denial as a warning annotation."""

    def log(denial: Denial) -> None:
        # Not the words "permission denied": gh-aw's harness counts them to decide not to
        # retry, and the two log lines of each denial already say it as gh-aw's driver does.
        message = f"Tool invocation denied by workflow tool permissions: {denial.summary}"
        github_actions_warning("Copilot tool denied", redactor.text(message), stream)

    return log


class DenialGuard:
    """Counts denials; calls `on_trip(count, threshold)` once, at the threshold.

    From then on it withholds decisions (`withhold`) until `turn_stopped()`:
    the driver calls that once it has aborted the turn (or given up trying).
    """

    def __init__(
        self,
        threshold: int,
        on_trip: Callable[[int, int], None],
        *,
        withhold_timeout: float = WITHHOLD_TIMEOUT_S,
    ) -> None:
        self.threshold = threshold
        self.count = 0
        self.tripped = False
        self._on_trip = on_trip
        self._withhold_timeout = withhold_timeout
        self._turn_stopped = asyncio.Event()

    def record(self) -> bool:
        """Count one denial; True when this one reached the threshold."""
        self.count += 1
        if self.tripped or self.count < self.threshold:
            return False
        self.tripped = True
        self._on_trip(self.count, self.threshold)
        return True

    def turn_stopped(self) -> None:
        """The turn is over: withheld requests may end."""
        self._turn_stopped.set()

    async def withhold(self, fallback: Any) -> Any:
        """Send nothing until the turn is stopped; then nothing at all (the runtime
        has cancelled the request). `fallback`, a rejection, is sent only if the
        turn is not stopped within the timeout: a decision, never an approval."""
        from copilot.session import PermissionNoResult

        try:
            async with asyncio.timeout(self._withhold_timeout):
                await self._turn_stopped.wait()
        except TimeoutError:
            return fallback
        return PermissionNoResult()


class DecisionsInFlight:
    """Decisions made but maybe not yet delivered to the runtime.

    The SDK calls the handler inside a task of its own and sends the decision
    over RPC only after the handler returned. When the run stops mid-turn (the
    denials guard), the cleanup's `abort` could overtake replies already made,
    and the runtime would record those requests as cancelled instead of
    denied; the cleanup waits for these tasks first (briefly: they only send a
    reply). Withheld requests are not tracked: they wait for the abort.
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
        if policy.approves_everything:
            # What "defer to the SDK default policy" means (spec 5.2).
            return _sent(PermissionHandler.approve_all(request, invocation))
        session_id = invocation.get("session_id") if isinstance(invocation, dict) else None
        rejection = PermissionDecisionReject(feedback=DENIAL_FEEDBACK)
        if guard is not None and guard.tripped:
            # The session is stopping: this request is neither approved nor counted.
            log.info(
                LogEvent.PERMISSION_WITHHELD,
                "not decided: the tool-denials guard is stopping the session",
                sessionId=session_id,
                requestSummary=_decide(policy, request).summary,
            )
            return guard.withhold(rejection)
        decision = _decide(policy, request)
        if decision.allowed:
            log.debug(
                LogEvent.PERMISSION_APPROVED,
                f"approved {decision.summary}",
                requestKind=decision.kind,
                requestSummary=decision.summary,
            )
            return _sent(PermissionDecisionApproveOnce())
        denial = Denial(
            kind=decision.kind,
            summary=decision.summary,
            reason=decision.reason,
            allow_rule=decision.allow_rule,
            tool_call_id=_tool_call_id(request),
            session_id=session_id,
        )
        log.warning(
            LogEvent.PERMISSION_DENIED,
            f"permission denied by workflow tool permissions: {decision.summary}",
            **denial.log_fields(),
        )
        for secondary_logger in secondary:
            try:
                secondary_logger(denial)
            except Exception as error:  # a diagnostic must never change the decision
                log.debug(LogEvent.PERMISSION_SECONDARY_FAILED, f"a denial logger failed: {error}")
        if guard is not None:
            # gh-aw's driver writes this line per denial, and gh-aw's harness counts
            # "permission denied" to decide not to retry: the same words, the same count.
            log.warning(
                LogEvent.TOOL_DENIAL,
                f"tool denial {guard.count + 1}/{guard.threshold}: permission denied: "
                f"{decision.summary}",
                denialCount=guard.count + 1,
                threshold=guard.threshold,
            )
            if guard.record():
                return guard.withhold(rejection)
        return _sent(rejection)

    def _sent(decision: Any) -> Any:
        """A decision returned at once: the SDK task that sends it is tracked."""
        if in_flight is not None:
            in_flight.track()
        return decision

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


def _tool_call_id(request: Any) -> str | None:
    """The request's `toolCallId` (which tool call asked), when it has one."""
    try:
        value = request.to_dict().get("toolCallId")
    except Exception:  # unreadable requests are denied without it
        return None
    return value if isinstance(value, str) else None
