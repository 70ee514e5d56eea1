"""Stop requests: everything that ends a run early, as one event each step races.

SIGTERM and SIGINT, the tool-denials guard and a lost sidecar each become a
`StopRequestedError`; the first one is kept and reported. `StopRequests.race`
awaits one step of the lifecycle against them and against its deadline.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable
from typing import Any, TypeVar

from copilot_driver.env import MAX_TOOL_DENIALS
from copilot_driver.errors import CopilotDriverError

T = TypeVar("T")


class StopRequestedError(CopilotDriverError):
    """The run must stop now; raised by the step that was under way."""


class StopSignalError(StopRequestedError):
    """SIGTERM or SIGINT arrived."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class ToolDenialsExceededError(StopRequestedError):
    """The tool-denials guard reached its threshold."""

    def __init__(self, count: int, threshold: int) -> None:
        super().__init__(
            f"max tool denials threshold reached: permission denied {count} times "
            f"({MAX_TOOL_DENIALS.name}={threshold})"
        )
        self.count = count
        self.threshold = threshold
        self.explanation = (
            f"stopped the session: {self}; the agent kept asking for tools the workflow "
            "does not allow (the driver log has a permission.denied entry for each)"
        )


class ToolCallBudgetExceededError(StopRequestedError):
    """The model kept calling tools past the tool contract's `maxToolCalls`."""

    def __init__(self, tool: str, count: int, limit: int) -> None:
        super().__init__(
            f"the model kept calling tools past the budget of {limit} calls "
            f"({count - limit} calls denied, the last to {tool})"
        )
        self.explanation = (
            f"stopped the session: {self}; none of the calls past the budget ran "
            "(maxToolCalls in the workflow's tool contract sets the budget)"
        )


class SidecarLostError(StopRequestedError):
    """The sidecar died, froze or became unreachable while the run waited on it."""


class StopRequests:
    """Stop signals, the denials guard and a lost sidecar as one event every step is
    raced against."""

    def __init__(self) -> None:
        self.reason: StopRequestedError | None = None
        self._event = asyncio.Event()

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.request, signum)

    def request(self, signum: int) -> None:
        self.stop_for(StopSignalError(signum))

    def lose_sidecar(self, message: str) -> None:
        self.stop_for(SidecarLostError(message))

    def stop_for(self, reason: StopRequestedError) -> None:
        if self.reason is None:  # the first reason is the one reported
            self.reason = reason
            self._event.set()

    async def race(self, step: Awaitable[T], *, timeout: float) -> T:
        """Await `step`; raise the stop reason if one comes first, TimeoutError after `timeout`."""
        if self.reason is not None:
            _close_unawaited(step)
            raise self.reason
        task = asyncio.ensure_future(step)
        stopped = asyncio.ensure_future(self._event.wait())
        try:
            done, _ = await asyncio.wait(
                {task, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopped.cancel()
        # A stop that arrived while the step also ended wins: a signal is
        # processed only when the loop runs again, so it can land together
        # with a step's failure that it caused or that merely came first.
        if task in done and self.reason is None:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if self.reason is not None:
            raise self.reason
        raise TimeoutError(f"no answer within {timeout:g}s")


def _close_unawaited(step: Awaitable[Any]) -> None:
    close = getattr(step, "close", None)
    if callable(close):
        close()
