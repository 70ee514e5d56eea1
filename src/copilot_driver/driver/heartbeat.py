"""Keeping the log alive while the run waits: gh-aw's harness ends a silent driver.

gh-aw's harness arms a post-result watchdog once the safe-outputs file it names
(`GH_AW_SAFE_OUTPUTS`) holds a terminal result: a driver that then writes nothing for
`GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS` (2 minutes unless set) is sent SIGTERM, though the
agent may still be working (a slow model, a long build). So under that harness, while
the prompt is in flight, the driver writes a `driver.waiting` entry whenever its log
has been silent for a quarter of that time. Elsewhere no watchdog can arm and the
driver stays quiet. The interval is a setting (`settings.keep_alive_interval_s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable


class Heartbeat:
    """Calls `beat(silent_s)` each time the log has been silent for `interval_s`.

    `last_output()` is the monotonic time of the log's latest entry; a beat is itself
    an entry, and the beat's own time counts too, so a beat that writes nothing never
    makes the loop spin.
    """

    def __init__(
        self,
        interval_s: float,
        last_output: Callable[[], float],
        beat: Callable[[float], None],
    ) -> None:
        self._interval_s = interval_s
        self._last_output = last_output
        self._beat = beat
        self._last_beat = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._last_beat = time.monotonic()
            self._task = asyncio.create_task(self._run(), name="driver-heartbeat")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    async def _run(self) -> None:
        while True:
            quiet_since = max(self._last_output(), self._last_beat)
            silent = time.monotonic() - quiet_since
            if silent < self._interval_s:
                await asyncio.sleep(self._interval_s - silent)
                continue
            self._last_beat = time.monotonic()
            with contextlib.suppress(Exception):  # a keep-alive line never ends the run
                self._beat(silent)
