"""Unit tests for `copilot_driver.adapters.core.runner.TurnRunner`.

A scripted fake adapter emits events at chosen intervals (or hangs) and
records the reason it was cancelled with, so max_turns, the turn timeout,
stall detection, cancellation and redaction are checked without a process.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.runner import RunnerLimits, TurnRunner
from copilot_driver.adapters.core.session import (
    EventCallback,
    ExitReason,
    Session,
    TurnResult,
)
from copilot_driver.redaction import MASK, Redactor
from copilot_driver.vocabulary import AdapterErrorKind

SECRET = "sekret-value-123"
LONG_MS = 60_000


class FakeAdapter:
    """Emits one event after each delay, then returns `result` (or hangs)."""

    kind = "fake"

    def __init__(
        self,
        *,
        delays: Sequence[float] = (),
        hang: bool = False,
        result: TurnResult | None = None,
        messages: Sequence[str] | None = None,
        finish_on_cancel: bool = False,
        cancel_cleanup_s: float = 0.0,
    ) -> None:
        self.delays = list(delays)
        self.hang = hang
        self.result = result
        self.messages = messages
        self.finish_on_cancel = finish_on_cancel
        self.cancel_cleanup_s = cancel_cleanup_s
        self.calls = 0
        self.cancel_reasons: list[object] = []
        self.turn_task: asyncio.Task[object] | None = None
        self.started = asyncio.Event()

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> Session:
        return Session(workspace=Path(workspace), id=resume_session_id or "fake-session")

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult:
        self.calls += 1
        self.turn_task = asyncio.current_task()
        self.started.set()
        try:
            for index, delay in enumerate(self.delays):
                await asyncio.sleep(delay)
                message = self.messages[index] if self.messages else f"event {index}"
                on_event(AgentEvent(EventType.NOTIFICATION, session.id, message))
            if self.hang:
                await asyncio.Event().wait()
        except asyncio.CancelledError as cancel:
            self.cancel_reasons.append(cancel.args[0] if cancel.args else None)
            if self.cancel_cleanup_s:
                await asyncio.sleep(self.cancel_cleanup_s)  # e.g. a graceful process stop
            if self.finish_on_cancel:
                return TurnResult(
                    session.id,
                    ExitReason.CANCELLED,
                    error=AgentError(AdapterErrorKind.TURN_CANCELLED, "the adapter's own words"),
                )
            raise
        if self.result is not None:
            return self.result
        return TurnResult(session.id, ExitReason.COMPLETED, reply=f"done: {prompt}")

    async def stop_session(self, session: Session) -> None:
        return None


def _limits(
    *, max_turns: int = 20, turn_timeout_ms: int = LONG_MS, stall_timeout_ms: int = LONG_MS
) -> RunnerLimits:
    return RunnerLimits(
        max_turns=max_turns, turn_timeout_ms=turn_timeout_ms, stall_timeout_ms=stall_timeout_ms
    )


async def _run(
    runner: TurnRunner, session: Session, prompt: str = "go"
) -> tuple[TurnResult, list[AgentEvent], float]:
    events: list[AgentEvent] = []
    started = time.monotonic()
    result = await asyncio.wait_for(
        runner.run_turn(session, prompt, on_event=events.append), timeout=10
    )
    return result, events, time.monotonic() - started


async def _session(runner: TurnRunner) -> Session:
    return await runner.start_session("/tmp/ws")


def test_default_limits_are_the_specs() -> None:
    assert RunnerLimits() == RunnerLimits(
        max_turns=20, turn_timeout_ms=3_600_000, stall_timeout_ms=300_000
    )


# -- a normal turn -------------------------------------------------------------


async def test_a_normal_result_passes_through_unchanged() -> None:
    expected = TurnResult(
        "fake-session",
        ExitReason.COMPLETED,
        usage=TokenUsage(input_tokens=3, output_tokens=4),
        reply="all good",
        api_duration_ms=17,
    )
    adapter = FakeAdapter(delays=[0, 0], result=expected)
    runner = TurnRunner(adapter, _limits())
    result, events, _ = await _run(runner, await _session(runner))
    assert result == expected
    assert [e.message for e in events] == ["event 0", "event 1"]


async def test_a_normal_result_with_an_active_redactor_keeps_every_field() -> None:
    expected = TurnResult(
        "fake-session",
        ExitReason.FAILED,
        usage=TokenUsage(output_tokens=9, model="gpt-4.1"),
        error=AgentError(AdapterErrorKind.PORT_EXIT, "exit 1", retryable=False),
        reply="partial",
        api_duration_ms=5,
    )
    runner = TurnRunner(FakeAdapter(result=expected), _limits(), redactor=Redactor([SECRET]))
    result, _, _ = await _run(runner, await _session(runner))
    assert result.to_dict() == expected.to_dict()


async def test_start_and_stop_session_are_delegated() -> None:
    runner = TurnRunner(FakeAdapter(), _limits())
    session = await runner.start_session("/tmp/ws", resume_session_id="abc")
    assert session.id == "abc"
    assert session.workspace == Path("/tmp/ws")
    await runner.stop_session(session)


async def test_an_adapter_error_propagates() -> None:
    class Failing(FakeAdapter):
        async def run_turn(
            self, session: Session, prompt: str, *, on_event: EventCallback
        ) -> TurnResult:
            raise AgentError(AdapterErrorKind.AGENT_NOT_FOUND, "no binary")

    runner = TurnRunner(Failing(), _limits())
    with pytest.raises(AgentError) as caught:
        await runner.run_turn(await _session(runner), "go", on_event=lambda _e: None)
    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND


# -- max_turns -----------------------------------------------------------------


@pytest.mark.parametrize("max_turns", [1, 3])
async def test_max_turns_is_enforced(max_turns: int) -> None:
    adapter = FakeAdapter()
    runner = TurnRunner(adapter, _limits(max_turns=max_turns))
    session = await _session(runner)
    for _ in range(max_turns):
        result, _, _ = await _run(runner, session)
        assert result.ok
    with pytest.raises(AgentError) as caught:
        await runner.run_turn(session, "one more", on_event=lambda _e: None)
    assert caught.value.kind is AdapterErrorKind.TURN_FAILED
    assert caught.value.retryable is False
    assert "max_turns" in caught.value.message
    assert adapter.calls == max_turns
    assert session.turns_started == max_turns


async def test_max_turns_counts_the_sessions_turns_started() -> None:
    adapter = FakeAdapter()
    runner = TurnRunner(adapter, _limits(max_turns=5))
    session = await _session(runner)
    session.turns_started = 5
    with pytest.raises(AgentError, match="5 of 5 turns"):
        await runner.run_turn(session, "go", on_event=lambda _e: None)
    assert adapter.calls == 0


async def test_a_failed_turn_still_counts() -> None:
    failed = TurnResult("s", ExitReason.FAILED, error=AgentError(AdapterErrorKind.TURN_FAILED, "x"))
    runner = TurnRunner(FakeAdapter(result=failed), _limits(max_turns=1))
    session = await _session(runner)
    result, _, _ = await _run(runner, session)
    assert not result.ok
    with pytest.raises(AgentError, match="max_turns"):
        await runner.run_turn(session, "again", on_event=lambda _e: None)


# -- the turn timeout ----------------------------------------------------------


async def test_turn_timeout_trips() -> None:
    adapter = FakeAdapter(hang=True)
    runner = TurnRunner(adapter, _limits(turn_timeout_ms=200, stall_timeout_ms=0))
    session = await _session(runner)
    result, _, elapsed = await _run(runner, session)
    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert result.error.retryable is True
    assert "turn timeout" in result.error.message
    assert "0.2 s" in result.error.message
    assert result.session_id == session.id
    assert adapter.cancel_reasons == [result.error.message]  # the adapter saw the reason
    assert 0.19 <= elapsed < 2


async def test_turn_timeout_trips_even_while_events_keep_coming() -> None:
    adapter = FakeAdapter(delays=[0.05] * 60)
    runner = TurnRunner(adapter, _limits(turn_timeout_ms=400, stall_timeout_ms=200))
    result, events, elapsed = await _run(runner, await _session(runner))
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert result.error.message.startswith("turn timeout")
    assert 3 <= len(events) < 60
    assert 0.39 <= elapsed < 2


async def test_an_adapter_that_ends_the_turn_itself_after_the_cancel_still_times_out() -> None:
    adapter = FakeAdapter(hang=True, finish_on_cancel=True)
    runner = TurnRunner(adapter, _limits(turn_timeout_ms=100, stall_timeout_ms=0))
    result, _, _ = await _run(runner, await _session(runner))
    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert adapter.cancel_reasons == [result.error.message]


async def test_the_adapter_may_take_its_time_to_stop_after_the_cancel() -> None:
    adapter = FakeAdapter(hang=True, cancel_cleanup_s=0.3)
    runner = TurnRunner(adapter, _limits(turn_timeout_ms=100, stall_timeout_ms=0))
    result, _, elapsed = await _run(runner, await _session(runner))
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert elapsed >= 0.39  # the runner waited for the adapter's cleanup
    assert adapter.turn_task is not None
    assert adapter.turn_task.done()


# -- stall detection -----------------------------------------------------------


async def test_stall_trips_when_events_stop() -> None:
    adapter = FakeAdapter(delays=[0.1], hang=True)
    runner = TurnRunner(adapter, _limits(stall_timeout_ms=200))
    result, events, elapsed = await _run(runner, await _session(runner))
    assert len(events) == 1
    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert result.error.message == "stalled: no event for 0.2 s"
    assert adapter.cancel_reasons == ["stalled: no event for 0.2 s"]
    assert elapsed >= 0.29  # the event at 0.1 s restarted the 0.2 s stall clock
    assert elapsed < 2


async def test_no_stall_while_events_come_faster_than_the_limit() -> None:
    adapter = FakeAdapter(delays=[0.05] * 12)  # 0.6 s in all, three stall limits
    runner = TurnRunner(adapter, _limits(stall_timeout_ms=200))
    result, events, elapsed = await _run(runner, await _session(runner))
    assert result.ok, result.error
    assert len(events) == 12
    assert adapter.cancel_reasons == []
    assert elapsed >= 0.55


@pytest.mark.parametrize("stall_timeout_ms", [0, -1, -300_000])
async def test_stall_detection_disabled_by_zero_or_negative(stall_timeout_ms: int) -> None:
    adapter = FakeAdapter(delays=[0.4])  # 0.4 s of silence before its only event
    runner = TurnRunner(adapter, _limits(stall_timeout_ms=stall_timeout_ms))
    result, events, _ = await _run(runner, await _session(runner))
    assert result.ok, result.error
    assert len(events) == 1
    assert adapter.cancel_reasons == []


# -- cancellation from outside -------------------------------------------------


async def test_an_outer_cancellation_propagates_and_cancels_the_turn() -> None:
    adapter = FakeAdapter(hang=True)
    runner = TurnRunner(adapter, _limits(stall_timeout_ms=0))
    session = await _session(runner)
    task = asyncio.create_task(runner.run_turn(session, "go", on_event=lambda _e: None))
    await asyncio.wait_for(adapter.started.wait(), timeout=5)
    task.cancel("shutting down")
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)
    assert task.cancelled()
    assert len(adapter.cancel_reasons) == 1
    assert adapter.turn_task is not None
    assert adapter.turn_task.cancelled()


async def test_an_outer_cancellation_after_a_limit_tripped_still_propagates() -> None:
    adapter = FakeAdapter(hang=True, cancel_cleanup_s=1.0)
    runner = TurnRunner(adapter, _limits(turn_timeout_ms=100, stall_timeout_ms=0))
    session = await _session(runner)
    task = asyncio.create_task(runner.run_turn(session, "go", on_event=lambda _e: None))
    while not adapter.cancel_reasons:  # the timeout tripped; the adapter is cleaning up
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)
    assert adapter.cancel_reasons[0] is not None
    assert str(adapter.cancel_reasons[0]).startswith("turn timeout")


# -- redaction -----------------------------------------------------------------


async def test_event_messages_are_redacted() -> None:
    adapter = FakeAdapter(
        delays=[0, 0, 0],
        messages=[f"token is {SECRET}", "nothing here", f"{SECRET}{SECRET}"],
    )
    runner = TurnRunner(adapter, _limits(), redactor=Redactor([SECRET]))
    _, events, _ = await _run(runner, await _session(runner))
    assert [e.message for e in events] == [f"token is {MASK}", "nothing here", MASK * 2]
    assert all(e.type is EventType.NOTIFICATION for e in events)


async def test_result_error_and_reply_are_redacted() -> None:
    leaky = TurnResult(
        "fake-session",
        ExitReason.FAILED,
        usage=TokenUsage(output_tokens=2),
        error=AgentError(
            AdapterErrorKind.TURN_FAILED, f"auth failed for {SECRET}", retryable=False
        ),
        reply=f"I found {SECRET} in the env",
        api_duration_ms=3,
    )
    runner = TurnRunner(FakeAdapter(result=leaky), _limits(), redactor=Redactor([SECRET]))
    result, _, _ = await _run(runner, await _session(runner))
    assert SECRET not in str(result.to_dict())
    assert result.error is not None
    assert result.error.message == f"auth failed for {MASK}"
    assert result.error.kind is AdapterErrorKind.TURN_FAILED
    assert result.error.retryable is False
    assert result.reply == f"I found {MASK} in the env"
    assert (result.session_id, result.exit_reason, result.usage, result.api_duration_ms) == (
        "fake-session",
        ExitReason.FAILED,
        TokenUsage(output_tokens=2),
        3,
    )
