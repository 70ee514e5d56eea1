"""The idle watchdog: a session that answered but never goes idle still ends.

The SDK's `send_and_wait` returns on `session.idle`. A runtime that has given
its answer, has no tool call running and is outside an assistant turn, yet
never reports idle, would hold the run until the send timeout.
`AnswerWatch` follows the session's events; once the answer is in and the
session has been quiet like that for `idle_s`, `settled()` returns the
answer, and the driver ends the turn with it. Any event restarts the wait.
"""

from __future__ import annotations

import asyncio
from typing import Any

from copilot_driver.driver import sdk


class AnswerWatch:
    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self.answer: str | None = None
        self._running_tools: set[str] = set()
        self._in_turn = False
        self._timer: asyncio.TimerHandle | None = None
        self._settled: asyncio.Future[str] | None = None

    def observe(self, event: Any) -> None:
        """The SDK's event handler (on the event loop); never raises."""
        try:
            self._take(sdk.event_type(event), event.data)
            self._restart_timer()
        except Exception:  # noqa: S110 - a watchdog that cannot read an event just waits
            pass

    async def settled(self) -> str:
        """The answer, once the session has stayed quiet after it for `idle_s`."""
        self._settled = asyncio.get_running_loop().create_future()
        self._restart_timer()
        return await self._settled

    def _take(self, event_type: str, data: Any) -> None:
        if event_type == "assistant.turn_start":
            self._in_turn = True
        elif event_type == "assistant.turn_end":
            self._in_turn = False
        elif event_type == "tool.execution_start":
            self._running_tools.add(str(getattr(data, "tool_call_id", "")))
        elif event_type == "tool.execution_complete":
            self._running_tools.discard(str(getattr(data, "tool_call_id", "")))
        elif event_type == "assistant.message":
            content = getattr(data, "content", None)
            if (
                isinstance(content, str)
                and content.strip()
                and not getattr(data, "tool_requests", None)
            ):
                self.answer = content

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        settled = self._settled
        if settled is None or settled.done() or self.answer is None:
            return
        if self._in_turn or self._running_tools:
            return
        self._timer = asyncio.get_running_loop().call_later(self.idle_s, self._fire)

    def _fire(self) -> None:
        if self._settled is not None and not self._settled.done() and self.answer is not None:
            self._settled.set_result(self.answer)
