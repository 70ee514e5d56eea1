"""The sidecar watchdog, on a fake ping with short intervals."""

from __future__ import annotations

import asyncio
import contextlib
import time

from copilot_driver.driver.liveness import SidecarWatchdog


def _watchdog(ping_delay: float | None, connected: list[bool], lost: list[str]) -> SidecarWatchdog:
    async def ping() -> None:
        if ping_delay is None:
            raise RuntimeError("Client not connected")
        await asyncio.sleep(ping_delay)

    return SidecarWatchdog(
        ping,
        lambda: connected[0],
        lost.append,
        interval_s=0.02,
        timeout_s=0.05,
        silence_limit_s=0.2,
    )


async def _until(lost: list[str], limit: float) -> float:
    started = time.monotonic()
    while not lost and time.monotonic() - started < limit:
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def test_a_closed_connection_is_reported_at_the_next_check() -> None:
    lost: list[str] = []
    connected = [True]
    watchdog = _watchdog(0.0, connected, lost)
    watchdog.start()
    connected[0] = False
    await _until(lost, 2)
    await watchdog.stop()
    assert lost == ["its connection was closed"]


async def test_unanswered_pings_are_reported_after_the_silence_limit() -> None:
    lost: list[str] = []
    watchdog = _watchdog(10.0, [True], lost)
    watchdog.start()
    waited = await _until(lost, 5)
    await watchdog.stop()
    assert len(lost) == 1
    assert lost[0].startswith("it has not answered for ")
    assert waited >= 0.2


async def test_failing_pings_on_a_live_connection_count_as_silence() -> None:
    lost: list[str] = []
    watchdog = _watchdog(None, [True], lost)
    watchdog.start()
    await _until(lost, 5)
    await watchdog.stop()
    assert len(lost) == 1
    assert "not answered" in lost[0]


async def test_an_answering_sidecar_is_never_reported_and_stop_ends_the_watch() -> None:
    lost: list[str] = []
    watchdog = _watchdog(0.001, [True], lost)
    watchdog.start()
    await asyncio.sleep(0.5)
    await watchdog.stop()
    await watchdog.stop()  # idempotent
    assert lost == []


async def test_stop_ends_the_watch_even_when_a_ping_answers_at_that_moment() -> None:
    """The ping's answer and the cancellation land in the same loop turn.

    `asyncio.wait_for` (Python 3.11) then returned the answer and swallowed the
    cancellation: the watch went on pinging and `stop()` never returned (a
    hang seen in the test suite on a loaded machine).
    """
    pending: list[asyncio.Future[None]] = []

    async def ping() -> None:
        answer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        pending.append(answer)
        await answer

    lost: list[str] = []
    watchdog = SidecarWatchdog(ping, lambda: True, lost.append, interval_s=0.0, timeout_s=5.0)
    watchdog.start()
    while not pending:
        await asyncio.sleep(0)
    pending[-1].set_result(None)  # the answer arrives ...
    async with asyncio.timeout(2.0):
        await watchdog.stop()  # ... as the watch is cancelled, in the same loop turn
    assert len(pending) == 1, "the watch pinged again after stop()"


async def test_stop_lets_a_cancellation_of_its_caller_through() -> None:
    """A cleanup step that is itself cancelled (its own bound) must not be held in stop()."""

    async def ping() -> None:
        await asyncio.sleep(0.001)

    lost: list[str] = []
    watchdog = SidecarWatchdog(ping, lambda: True, lost.append, interval_s=0.01, timeout_s=1.0)
    watchdog.start()
    await asyncio.sleep(0.05)
    caller = asyncio.ensure_future(watchdog.stop())
    await asyncio.sleep(0)
    caller.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await caller
    assert caller.cancelled()


async def test_a_sidecar_that_keeps_sending_events_is_alive_though_its_pings_lag() -> None:
    """A sidecar busy with a burst of tool calls on a loaded machine answers pings late
    but keeps sending events: not lost while it does, lost once it goes quiet."""
    lost: list[str] = []
    watchdog = _watchdog(10.0, [True], lost)  # no ping is ever answered in time
    watchdog.start()
    started = time.monotonic()
    while time.monotonic() - started < 0.6:  # three silence limits of events
        watchdog.heard()
        await asyncio.sleep(0.02)
    assert lost == [], "given up while it was sending events"
    waited = await _until(lost, 5)
    await watchdog.stop()
    assert len(lost) == 1
    assert lost[0].startswith("it has not answered for ")
    assert waited >= 0.2
