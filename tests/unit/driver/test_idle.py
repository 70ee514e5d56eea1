"""The idle watchdog: an answered session that never goes idle still ends."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from copilot_driver.driver.idle import AnswerWatch


@dataclass
class Event:
    type: str
    data: Any = None


@dataclass
class Data:
    content: str | None = None
    tool_requests: list[Any] = field(default_factory=list)
    tool_call_id: str | None = None


async def test_an_answer_then_quiet_settles_with_the_answer() -> None:
    watch = AnswerWatch(0.05)
    settled = asyncio.ensure_future(watch.settled())
    await asyncio.sleep(0)
    for event in (
        Event("assistant.turn_start", Data()),
        Event("assistant.message", Data(content="the answer")),
        Event("assistant.turn_end", Data()),
    ):
        watch.observe(event)
    assert await asyncio.wait_for(settled, 5) == "the answer"


async def test_no_answer_no_settling() -> None:
    watch = AnswerWatch(0.01)
    settled = asyncio.ensure_future(watch.settled())
    watch.observe(Event("assistant.message", Data(content="", tool_requests=[])))
    watch.observe(Event("assistant.message", Data(content="calling", tool_requests=[{"x": 1}])))
    await asyncio.sleep(0.1)
    assert not settled.done()
    settled.cancel()


async def test_a_running_tool_or_an_open_turn_holds_the_watchdog() -> None:
    watch = AnswerWatch(0.02)
    settled = asyncio.ensure_future(watch.settled())
    await asyncio.sleep(0)
    watch.observe(Event("assistant.message", Data(content="so far")))
    watch.observe(Event("tool.execution_start", Data(tool_call_id="c1")))
    await asyncio.sleep(0.1)
    assert not settled.done(), "a tool is running"
    watch.observe(Event("tool.execution_complete", Data(tool_call_id="c1")))
    watch.observe(Event("assistant.turn_start", Data()))
    await asyncio.sleep(0.1)
    assert not settled.done(), "an assistant turn is open"
    watch.observe(Event("assistant.turn_end", Data()))
    assert await asyncio.wait_for(settled, 5) == "so far"


async def test_an_unreadable_event_never_raises() -> None:
    watch = AnswerWatch(1)
    watch.observe(object())
    watch.observe(Event("assistant.message", object()))
