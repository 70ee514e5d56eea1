"""The orchestration limits, applied the same way to every adapter.

- `max_turns`: turns one session may run.
- `turn_timeout_ms`: wall-clock bound of one turn.
- `stall_timeout_ms`: longest silence between two events of a turn; every
  event resets it; `<= 0` disables it.

When a limit trips, the turn's task is cancelled with the reason as the
cancellation message; the adapter stops its process group gracefully and
reports `turn_cancelled` with that reason; the runner returns a
`turn_timeout` result. Events pass through a redactor on their way out.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.adapters.core.agent_events import AgentEvent
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import (
    Adapter,
    EventCallback,
    ExitReason,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.turn import cancelling
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import AdapterErrorKind

DEFAULT_MAX_TURNS = 20
DEFAULT_TURN_TIMEOUT_MS = 3_600_000
DEFAULT_STALL_TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class RunnerLimits:
    max_turns: int = DEFAULT_MAX_TURNS
    turn_timeout_ms: int = DEFAULT_TURN_TIMEOUT_MS
    stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS


class TurnRunner:
    def __init__(
        self,
        adapter: Adapter,
        limits: RunnerLimits | None = None,
        *,
        redactor: Redactor | None = None,
    ) -> None:
        self.adapter = adapter
        self.limits = limits or RunnerLimits()
        self._redactor = redactor or Redactor()

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> Session:
        return await self.adapter.start_session(workspace, resume_session_id=resume_session_id)

    async def stop_session(self, session: Session) -> None:
        await self.adapter.stop_session(session)

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult:
        if session.turns_started >= self.limits.max_turns:
            raise AgentError(
                AdapterErrorKind.TURN_FAILED,
                f"max_turns reached: this session already ran {session.turns_started} "
                f"of {self.limits.max_turns} turns",
                retryable=False,
            )
        session.turns_started += 1
        last_event = time.monotonic()

        def relay(event: AgentEvent) -> None:
            nonlocal last_event
            last_event = time.monotonic()
            on_event(self._redacted(event))

        turn = asyncio.create_task(self.adapter.run_turn(session, prompt, on_event=relay))
        deadline = time.monotonic() + self.limits.turn_timeout_ms / 1000
        stall_s = self.limits.stall_timeout_ms / 1000
        reason: str | None = None
        try:
            while not turn.done():
                now = time.monotonic()
                wake = deadline
                if stall_s > 0:
                    wake = min(wake, last_event + stall_s)
                if now >= wake:
                    if now >= deadline:
                        limit = _seconds(self.limits.turn_timeout_ms)
                        reason = f"turn timeout: the turn ran longer than {limit}"
                    else:
                        limit = _seconds(self.limits.stall_timeout_ms)
                        reason = f"stalled: no event for {limit}"
                    turn.cancel(reason)
                    break
                await asyncio.wait({turn}, timeout=wake - now)
            result = await turn
        except asyncio.CancelledError:
            if reason is None or cancelling(asyncio.current_task()):
                raise  # our caller cancelled us, not a limit
            return _limit_tripped(session, reason)
        finally:
            if not turn.done():
                turn.cancel()
                await asyncio.gather(turn, return_exceptions=True)
        if reason is not None:  # the adapter finished the turn its own way after the cancel
            return _limit_tripped(session, reason)
        return self._redacted_result(result)

    def _redacted(self, event: AgentEvent) -> AgentEvent:
        if not event.message:
            return event
        return event.replace(message=self._redactor.text(event.message))

    def _redacted_result(self, result: TurnResult) -> TurnResult:
        error = result.error
        if error is not None:
            error = AgentError(
                error.kind, self._redactor.text(error.message), retryable=error.retryable
            )
        return TurnResult(
            session_id=result.session_id,
            exit_reason=result.exit_reason,
            usage=result.usage,
            error=error,
            reply=self._redactor.text(result.reply),
            api_duration_ms=result.api_duration_ms,
        )


def _limit_tripped(session: Session, reason: str) -> TurnResult:
    return TurnResult(
        session_id=session.id,
        exit_reason=ExitReason.CANCELLED,
        usage=session.usage,
        error=AgentError(AdapterErrorKind.TURN_TIMEOUT, reason),
    )


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"
