"""Loop events -> the normalised AgentEvents and the turn's result."""

from __future__ import annotations

from copilot_driver.adapters.core.agent_events import EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import ExitReason
from copilot_driver.adapters.tool_loop.loop import (
    CallUsage,
    FileModified,
    FinalReply,
    LoopFailed,
    TextDelta,
    ToolDone,
    ToolStart,
)
from copilot_driver.adapters.tool_loop.translate import TEXT_BATCH_CHARS, ToolLoopTranslator
from copilot_driver.vocabulary import AdapterErrorKind


def mapper() -> ToolLoopTranslator:
    return ToolLoopTranslator("tool-loop-1", usage_before=TokenUsage(100, 10, model="m"), model="m")


def test_text_is_batched_by_line_not_sent_per_token() -> None:
    events = mapper()
    assert events.feed(TextDelta("Hel")) == []
    assert events.feed(TextDelta("lo")) == []
    (line,) = events.feed(TextDelta(" world\n"))
    assert line.type is EventType.NOTIFICATION
    assert line.message == "Hello world\n"
    assert line.session_id == "tool-loop-1"


def test_a_long_run_of_text_without_newline_is_flushed_at_the_batch_size() -> None:
    events = mapper()
    out = [e for _ in range(TEXT_BATCH_CHARS) for e in events.feed(TextDelta("x"))]
    assert [e.message for e in out] == ["x" * TEXT_BATCH_CHARS]


def test_pending_text_goes_out_before_the_next_event() -> None:
    events = mapper()
    events.feed(TextDelta("Reading it"))
    text, start = events.feed(ToolStart("c1", "read_file", "a.txt"))
    assert text.message == "Reading it"
    assert start.type is EventType.NOTIFICATION
    assert start.message == "tool read_file started: a.txt"
    assert start.tool_name == "read_file"


def test_tool_done_is_a_tool_result_with_name_duration_and_error_flag() -> None:
    (ok,) = mapper().feed(ToolDone("c1", "edit_file", "edited a.txt", False, 12))
    assert ok.type is EventType.TOOL_RESULT
    assert (ok.tool_name, ok.tool_duration_ms, ok.tool_error) == ("edit_file", 12, False)
    assert ok.message == "tool edit_file succeeded: edited a.txt"
    (failed,) = mapper().feed(ToolDone("c2", "edit_file", "error: 0 matches", True, 3))
    assert failed.tool_error is True
    assert failed.message == "tool edit_file failed: 0 matches"


def test_file_modified_is_a_notification_naming_the_path() -> None:
    (event,) = mapper().feed(FileModified("src/a.py"))
    assert event.type is EventType.NOTIFICATION
    assert event.message == "file modified: src/a.py"
    assert event.raw_type == "file.modified"


def test_usage_is_reported_as_the_sessions_running_total() -> None:
    events = mapper()
    events.feed(CallUsage(TokenUsage(10, 5)))
    (second,) = events.feed(CallUsage(TokenUsage(20, 1, 4, "m-2024")))
    assert second.type is EventType.TOKEN_USAGE
    assert second.usage == TokenUsage(130, 16, 4, "m-2024")


def test_done_completes_the_turn_with_the_reply() -> None:
    events = mapper()
    events.feed(CallUsage(TokenUsage(1, 1)))
    events.feed(TextDelta("All done"))
    text, final = events.feed(FinalReply("All done", rounds=2, api_duration_ms=40))
    assert text.message == "All done"
    assert final.type is EventType.TURN_COMPLETED
    assert final.message == "All done"
    assert final.api_duration_ms == 40
    assert events.result is not None
    assert events.result.exit_reason is ExitReason.COMPLETED
    assert events.result.reply == "All done"
    assert events.result.usage == TokenUsage(101, 11, model="m")


def test_an_error_fails_the_turn_with_its_kind() -> None:
    events = mapper()
    error = AgentError(AdapterErrorKind.TURN_FAILED, "still calling tools after 20 rounds")
    (final,) = events.feed(LoopFailed(error, rounds=20, api_duration_ms=7))
    assert final.type is EventType.TURN_FAILED
    assert final.error_kind is AdapterErrorKind.TURN_FAILED
    assert final.message == "still calling tools after 20 rounds"
    assert events.result is not None
    assert events.result.error is error
    assert events.result.exit_reason is ExitReason.FAILED


def test_a_cancellation_is_turn_cancelled() -> None:
    events = mapper()
    (final,), _ = events.fail(AgentError(AdapterErrorKind.TURN_CANCELLED, "stalled"))
    assert final.type is EventType.TURN_CANCELLED
    assert events.result is not None
    assert events.result.exit_reason is ExitReason.CANCELLED
