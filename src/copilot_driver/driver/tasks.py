"""Waiting with a deadline that is kept even when a task is not.

A stalled SDK request may ignore its cancellation; neither a cleanup step nor
the process exit may wait for it. A task given up on is abandoned, and its
late failure is read so it is never reported as unhandled. Nor is a late
reply to a request given up on (`late_reply_to_a_cancelled_request`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from copilot_driver.errors import CopilotDriverError

T = TypeVar("T")

_FUTURE_COMPLETIONS = frozenset({"set_result", "set_exception"})


class StepAbandonedError(CopilotDriverError):
    """The step did not finish within its deadline; it was cancelled and left behind."""


async def bounded(step: Awaitable[Any], timeout: float) -> None:
    """Await `step` for at most `timeout`, then cancel and abandon it
    (StepAbandonedError). Its own failure is raised; its cancellation is not."""
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        task.add_done_callback(settled_quietly)
        raise StepAbandonedError
    error = None if task.cancelled() else task.exception()
    if error is not None:
        raise error


def run_to_the_end(main: Coroutine[Any, Any, T], shutdown_timeout: float) -> T:
    """`asyncio.run`, except that leftover tasks get a bounded time to end.

    `asyncio.run` cancels what is still running and then waits for all of it;
    an abandoned SDK call that does not take its cancellation would hold the
    exit forever. Here such a task is dropped with the loop after
    `shutdown_timeout`, and the late failures of abandoned calls are read, so
    none is reported as unhandled.
    """
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_report_unless_a_late_reply)
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            leftovers = asyncio.all_tasks(loop)
            for task in leftovers:
                task.cancel()
            if leftovers:
                loop.run_until_complete(asyncio.wait(leftovers, timeout=shutdown_timeout))
            for task in leftovers:
                if task.done():
                    settled_quietly(task)
                else:  # it ignored its cancellation: dropped with the loop, silently
                    task._log_destroy_pending = False  # type: ignore[attr-defined]
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def late_reply_to_a_cancelled_request(context: dict[str, Any]) -> bool:
    """Whether the loop's error `context` is a reply that arrived for a request
    whose awaiter had just given up.

    The SDK's reader thread takes the request's future and completes it with
    `call_soon_threadsafe(future.set_result, reply)`; when the request is
    cancelled in between (a stop request, an abandoned step), the completion
    finds the future cancelled and asyncio reports `InvalidStateError` with a
    traceback. Nothing is lost: nobody waits for that reply any more.
    """
    if not isinstance(context.get("exception"), asyncio.InvalidStateError):
        return False
    callback = getattr(context.get("handle"), "_callback", None)
    future = getattr(callback, "__self__", None)
    return (
        isinstance(future, asyncio.Future)
        and future.cancelled()
        and getattr(callback, "__name__", None) in _FUTURE_COMPLETIONS
    )


def _report_unless_a_late_reply(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if not late_reply_to_a_cancelled_request(context):
        loop.default_exception_handler(context)


def settled_quietly(task: asyncio.Future[Any]) -> None:
    """Read an abandoned task's outcome: its late failure is expected, not unhandled."""
    if not task.cancelled():
        task.exception()


async def first_of(*steps: Awaitable[T]) -> tuple[int, T]:
    """(index, result) of the step that finishes first; the others are cancelled and
    abandoned. Its failure is raised. Cancelling this cancels every step."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
                task.add_done_callback(settled_quietly)
    index = next(index for index, task in enumerate(tasks) if task in done)
    return index, tasks[index].result()
