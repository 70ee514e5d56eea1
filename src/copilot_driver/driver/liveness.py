"""Noticing a dead, frozen or unreachable sidecar while waiting on it.

The SDK waits for a turn's end until the send timeout (up to an hour here,
10 minutes by default upstream), even when the sidecar died a second after
the prompt went out: its connection-closed handler fails no pending wait.
The watchdog pings the sidecar every second while the run waits on it and
trips the run's stop event when the connection is closed or the sidecar has
neither answered a ping nor sent an event for `SILENCE_LIMIT_S`, so a lost
sidecar ends the run within about five seconds, whatever the send timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

PING_INTERVAL_S = 1.0
PING_TIMEOUT_S = 1.0
SILENCE_LIMIT_S = 2.5
"""How long the sidecar may leave pings unanswered before it is given up."""


class SidecarWatchdog:
    def __init__(
        self,
        ping: Callable[[], Awaitable[Any]],
        connected: Callable[[], bool],
        on_lost: Callable[[str], None],
        *,
        interval_s: float = PING_INTERVAL_S,
        timeout_s: float = PING_TIMEOUT_S,
        silence_limit_s: float = SILENCE_LIMIT_S,
    ) -> None:
        self._ping = ping
        self._connected = connected
        self._on_lost = on_lost
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._silence_limit_s = silence_limit_s
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._last_heard = 0.0

    def heard(self) -> None:
        """The sidecar sent something (a session event): it is alive, whatever its pings.
        A sidecar busy with a burst of tool calls on a loaded machine may answer a ping
        late while it keeps sending events; that is not a frozen sidecar."""
        self._last_heard = time.monotonic()

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._watch(), name="sidecar-watchdog")

    async def stop(self) -> None:
        """End the watch; returns once it has ended.

        The flag ends the watch at its next round even if a ping swallows the
        cancellation, and `asyncio.wait` (not `await task`, whose CancelledError
        would be indistinguishable) lets a cancellation of the caller through.
        """
        task, self._task = self._task, None
        if task is not None:
            self._stopping = True
            task.cancel()
            await asyncio.wait({task})

    async def _watch(self) -> None:
        last_answer = time.monotonic()
        while not self._stopping:
            await asyncio.sleep(self._interval_s)
            if not self._connected():
                self._on_lost("its connection was closed")
                return
            try:
                # Not `asyncio.wait_for`: on Python 3.11 it returns the ping's answer
                # and swallows a cancellation that lands in the same loop turn.
                async with asyncio.timeout(self._timeout_s):
                    await self._ping()
            except asyncio.CancelledError:
                raise
            except Exception:  # no answer in time, "not connected", a reset socket
                if not self._connected():
                    self._on_lost("its connection was closed")
                    return
            else:
                last_answer = time.monotonic()
                continue
            silent = time.monotonic() - max(last_answer, self._last_heard)
            if silent >= self._silence_limit_s:
                self._on_lost(f"it has not answered for {silent:.1f}s")
                return
