"""Stop requests: signals, the guard and a lost sidecar, raced against each step."""

from __future__ import annotations

import asyncio
import signal

import pytest

from copilot_driver.driver.stop import StopRequests, StopSignalError

# -- StopRequests.race ---------------------------------------------------------


async def test_race_returns_the_step_result() -> None:
    async def step() -> str:
        return "done"

    assert await StopRequests().race(step(), timeout=1) == "done"


async def test_race_raises_stop_signal_and_cancels_the_step() -> None:
    stop = StopRequests()
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cancelled.set()

    asyncio.get_running_loop().call_later(0.05, stop.request, signal.SIGTERM)
    with pytest.raises(StopSignalError) as caught:
        await stop.race(forever(), timeout=30)
    assert caught.value.signum == signal.SIGTERM
    assert cancelled.is_set()


async def test_race_times_out_and_cancels_the_step() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cancelled.set()

    with pytest.raises(TimeoutError):
        await StopRequests().race(forever(), timeout=0.05)
    assert cancelled.is_set()


async def test_race_after_a_signal_does_not_start_the_step() -> None:
    stop = StopRequests()
    stop.request(signal.SIGINT)
    started = False

    async def step() -> None:
        nonlocal started
        started = True

    with pytest.raises(StopSignalError):
        await stop.race(step(), timeout=1)
    assert not started


async def test_a_signal_landing_with_the_step_failure_wins() -> None:
    """A signal is handled only when the loop runs again: a step that blocked
    the loop (the SDK import) can fail in the same iteration the signal lands."""
    stop = StopRequests()

    async def step() -> None:
        stop.request(signal.SIGTERM)  # as if processed alongside the failure
        raise ConnectionRefusedError("refused")

    with pytest.raises(StopSignalError):
        await stop.race(step(), timeout=1)


async def test_only_the_first_signal_counts() -> None:
    stop = StopRequests()
    stop.request(signal.SIGINT)
    stop.request(signal.SIGTERM)
    assert isinstance(stop.reason, StopSignalError)
    assert stop.reason.signum == signal.SIGINT
