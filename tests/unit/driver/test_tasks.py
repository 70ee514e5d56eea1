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


def _completions_of_a_cancelled_future(completion: str) -> str:
    """Runs `run_to_the_end` while a reply lands, from another thread the way the
    SDK's reader delivers it, on a request that was just cancelled."""

    async def main() -> str:
        loop = asyncio.get_running_loop()
        request: asyncio.Future[object] = loop.create_future()
        request.cancel()
        reply = RuntimeError("late") if completion == "set_exception" else {"version": "1"}
        delivered = asyncio.Event()
        deliver = getattr(request, completion)
        await asyncio.to_thread(loop.call_soon_threadsafe, deliver, reply)
        loop.call_soon(delivered.set)  # runs after the completion scheduled above
        await delivered.wait()
        return "done"

    return run_to_the_end(main(), 1)


@pytest.mark.parametrize("completion", ["set_result", "set_exception"])
def test_a_late_reply_to_a_cancelled_request_is_not_reported(
    completion: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert _completions_of_a_cancelled_future(completion) == "done"
    assert [record.getMessage() for record in caplog.records] == []


def test_any_other_error_in_a_loop_callback_is_still_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[object] = loop.create_future()
        done.set_result("first")  # completing it twice is a bug, not a late reply
        loop.call_soon(done.set_result, "second")
        loop.call_soon(lambda: 1 / 0)
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    run_to_the_end(main(), 1)
    reported = [type(record.exc_info[1]).__name__ for record in caplog.records if record.exc_info]
    assert reported == ["InvalidStateError", "ZeroDivisionError"]
