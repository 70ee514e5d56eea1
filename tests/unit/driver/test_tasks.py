"""Deadlines that hold even when a task ignores its cancellation."""

from __future__ import annotations

import asyncio
import time

import pytest

from copilot_driver.driver.tasks import StepAbandonedError, bounded, run_to_the_end


async def _stubborn(release: asyncio.Event) -> None:
    """Ignores cancellation until released, as a stalled SDK request can."""
    while not release.is_set():
        try:
            await release.wait()
        except asyncio.CancelledError:
            continue


async def test_a_step_that_ignores_its_cancellation_is_abandoned_at_its_deadline() -> None:
    release = asyncio.Event()
    started = time.monotonic()
    with pytest.raises(StepAbandonedError):
        await bounded(_stubborn(release), 0.05)
    assert time.monotonic() - started < 5  # a hang, not a speed target
    release.set()


async def test_a_step_failure_is_raised_and_its_cancellation_is_not() -> None:
    async def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await bounded(fails(), 1)

    async def cancelled() -> None:
        raise asyncio.CancelledError

    await bounded(cancelled(), 1)


def test_run_to_the_end_drops_a_leftover_task_that_ignores_its_cancellation() -> None:
    leftovers: list[asyncio.Future[None]] = []

    async def main() -> str:
        leftovers.append(asyncio.ensure_future(_stubborn(asyncio.Event())))
        await asyncio.sleep(0)
        return "answer"

    started = time.monotonic()
    assert run_to_the_end(main(), 0.05) == "answer"
    assert time.monotonic() - started < 5  # a hang, not a speed target
