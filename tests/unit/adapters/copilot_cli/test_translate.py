"""Copilot CLI JSON Lines -> normalised events, and the turn's outcome.

The spec's "Event type mapping", "Token accounting", "Tool call tracking" and
"Exit code mapping" tables, row by row, then every real CLI transcript in
tests/data/copilot-cli replayed through the parser.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.copilot_cli.translate import (
    CopilotCliTranslator,
    ResultLine,
    usage_from_report,
)
from copilot_driver.adapters.core.agent_events import (
    MESSAGE_LIMIT,
    AgentEvent,
    EventType,
    TokenUsage,
)
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import ExitReason, TurnResult
from copilot_driver.vocabulary import AdapterErrorKind

DATA = Path(__file__).resolve().parents[3] / "data" / "copilot-cli"
FIXTURES = sorted(DATA.glob("*.jsonl"))
USAGE_REPORT = DATA / "plain-prompt-with-usage-output-file.usage.json"
EVENTS_LOGGER = "copilot_driver.adapters.copilot_cli.translate"

DEBUG_ONLY = (
    "session.mcp_server_status_changed",
    "session.mcp_servers_loaded",
    "session.tools_updated",
    "user.message",
)
HANDLED = (
    "assistant.message_delta",
    "assistant.message",
    "assistant.usage",
    "assistant.turn_start",
    "assistant.turn_end",
    "tool.execution_start",
    "tool.execution_complete",
    "session.warning",
    "session.info",
    "session.task_complete",
    "session.error",
)


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def line(kind: str, data: Any = None, **top: Any) -> str:
    raw: dict[str, Any] = {"type": kind, **top}
    if data is not None:
        raw["data"] = data
    return json.dumps(raw)


def result_line(
    session_id: str = "sid-1", exit_code: Any = 0, api_ms: int | None = 42, **extra: Any
) -> str:
    raw: dict[str, Any] = {"type": "result", "sessionId": session_id, **extra}
    if exit_code is not None:
        raw["exitCode"] = exit_code
    if api_ms is not None:
        raw["usage"] = {"premiumRequests": 0, "totalApiDurationMs": api_ms}
    return json.dumps(raw)


def feed_all(parser: CopilotCliTranslator, lines: list[str]) -> list[AgentEvent]:
    return [event for text in lines for event in parser.feed(text)]


def only(events: list[AgentEvent]) -> AgentEvent:
    assert len(events) == 1, events
    return events[0]


# -- the event mapping table -------------------------------------------------


def test_message_delta_is_a_notification_with_the_streamed_text() -> None:
    event = only(
        CopilotCliTranslator(session_id="s").feed(
            line("assistant.message_delta", {"deltaContent": "hel"})
        )
    )
    assert event.type is EventType.NOTIFICATION
    assert event.message == "hel"
    assert event.raw_type == "assistant.message_delta"
    assert event.session_id == "s"


def test_assistant_message_gives_token_usage_then_a_notification() -> None:
    parser = CopilotCliTranslator()
    events = parser.feed(line("assistant.message", {"content": "hello", "outputTokens": 5}))
    assert [e.type for e in events] == [EventType.TOKEN_USAGE, EventType.NOTIFICATION]
    assert events[0].usage == TokenUsage(output_tokens=5)
    assert events[1].message == "hello"
    assert {e.raw_type for e in events} == {"assistant.message"}


def test_output_tokens_accumulate_on_top_of_the_sessions_earlier_usage() -> None:
    before = TokenUsage(input_tokens=100, output_tokens=7, cached_input_tokens=3, model="m")
    parser = CopilotCliTranslator(usage_before=before)
    first = parser.feed(line("assistant.message", {"content": "a", "outputTokens": 5}))[0]
    second = parser.feed(line("assistant.message", {"content": "b", "outputTokens": 3}))[0]
    assert first.usage == TokenUsage(100, 12, 3, "m")
    assert second.usage == TokenUsage(100, 15, 3, "m")
    assert parser.turn_usage.output_tokens == 8
    assert parser.usage.total_tokens == 115


@pytest.mark.parametrize("bad", [None, "5", -3, 2.5, True, [5], {"n": 5}])
def test_missing_or_invalid_output_tokens_add_nothing(bad: Any) -> None:
    parser = CopilotCliTranslator()
    data: dict[str, Any] = {"content": "x"}
    if bad is not None:
        data["outputTokens"] = bad
    events = parser.feed(line("assistant.message", data))
    assert events[0].type is EventType.TOKEN_USAGE
    assert events[0].usage == TokenUsage()


@pytest.mark.parametrize(
    ("data", "summary"),
    [
        ({"content": "  hi there  "}, "hi there"),
        (
            {"content": "running", "toolRequests": [{"name": "bash"}, {"name": "view"}]},
            "running [tool requests: bash, view]",
        ),
        ({"content": "", "toolRequests": [{"name": "bash"}]}, "[tool requests: bash]"),
        ({"toolRequests": [{"toolCallId": "c1"}]}, "[tool requests: ?]"),
        ({"toolRequests": [{"name": "bash"}, "junk", 3]}, "[tool requests: bash]"),
        ({"content": "x", "toolRequests": []}, "x"),
        ({}, ""),
    ],
)
def test_assistant_message_notification_summarises_content_and_tool_requests(
    data: dict[str, Any], summary: str
) -> None:
    events = CopilotCliTranslator().feed(line("assistant.message", data))
    assert events[1].type is EventType.NOTIFICATION
    assert events[1].message == summary


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("assistant.turn_start", {"turnId": "0"}, "assistant turn 0 started"),
        ("assistant.turn_end", {"turnId": "3"}, "assistant turn 3 ended"),
        ("assistant.turn_start", {}, "assistant turn started"),
        ("assistant.turn_end", {"turnId": 7}, "assistant turn ended"),
    ],
)
def test_turn_boundaries_are_notifications(kind: str, data: dict[str, Any], message: str) -> None:
    event = only(CopilotCliTranslator().feed(line(kind, data)))
    assert event.type is EventType.NOTIFICATION
    assert event.message == message
    assert event.raw_type == kind


def test_tool_start_is_a_notification_naming_the_tool() -> None:
    parser = CopilotCliTranslator()
    event = only(
        parser.feed(line("tool.execution_start", {"toolCallId": "c1", "toolName": "bash"}))
    )
    assert event.type is EventType.NOTIFICATION
    assert event.tool_name == "bash"
    assert event.message == "tool bash started"
    assert event.tool_duration_ms is None


def test_tool_complete_correlates_with_its_start_for_name_and_duration() -> None:
    clock = FakeClock(10.0)
    parser = CopilotCliTranslator(clock=clock)
    parser.feed(line("tool.execution_start", {"toolCallId": "c1", "toolName": "bash"}))
    clock.now = 10.25
    event = only(
        parser.feed(line("tool.execution_complete", {"toolCallId": "c1", "success": True}))
    )
    assert event.type is EventType.TOOL_RESULT
    assert event.tool_name == "bash"
    assert event.tool_duration_ms == 250
    assert event.tool_error is False
    assert event.message == "tool bash succeeded"
    assert event.raw_type == "tool.execution_complete"


def test_interleaved_tool_calls_are_correlated_by_call_id() -> None:
    clock = FakeClock(0.0)
    parser = CopilotCliTranslator(clock=clock)
    parser.feed(line("tool.execution_start", {"toolCallId": "a", "toolName": "view"}))
    clock.now = 1.0
    parser.feed(line("tool.execution_start", {"toolCallId": "b", "toolName": "bash"}))
    clock.now = 1.5
    done_b = only(
        parser.feed(line("tool.execution_complete", {"toolCallId": "b", "success": True}))
    )
    clock.now = 3.0
    done_a = only(
        parser.feed(line("tool.execution_complete", {"toolCallId": "a", "success": True}))
    )
    assert (done_b.tool_name, done_b.tool_duration_ms) == ("bash", 500)
    assert (done_a.tool_name, done_a.tool_duration_ms) == ("view", 3000)


@pytest.mark.parametrize(
    ("success", "tool_error"),
    [(True, False), (False, True), ("missing", True), ("true", True), (1, True), (None, True)],
)
def test_tool_error_is_not_success(success: Any, tool_error: bool) -> None:
    parser = CopilotCliTranslator(clock=FakeClock())
    parser.feed(line("tool.execution_start", {"toolCallId": "c", "toolName": "bash"}))
    data: dict[str, Any] = {"toolCallId": "c"}
    if success != "missing":
        data["success"] = success
    event = only(parser.feed(line("tool.execution_complete", data)))
    assert event.tool_error is tool_error
    assert event.message.endswith("failed" if tool_error else "succeeded")


def test_failed_tool_message_carries_the_error_text() -> None:
    parser = CopilotCliTranslator(clock=FakeClock())
    parser.feed(line("tool.execution_start", {"toolCallId": "c", "toolName": "edit"}))
    event = only(
        parser.feed(
            line(
                "tool.execution_complete",
                {"toolCallId": "c", "success": False, "error": {"message": "no such file"}},
            )
        )
    )
    assert event.tool_error is True
    assert event.message == "tool edit failed: no such file"


def test_unmatched_tool_complete_is_a_tool_result_without_duration() -> None:
    event = only(
        CopilotCliTranslator(clock=FakeClock()).feed(
            line("tool.execution_complete", {"toolCallId": "ghost", "success": True})
        )
    )
    assert event.type is EventType.TOOL_RESULT
    assert event.tool_name is None
    assert event.tool_duration_ms is None
    assert event.tool_error is False
    assert event.message == "tool unknown succeeded"


def test_unmatched_tool_complete_uses_a_tool_name_it_carries() -> None:
    event = only(
        CopilotCliTranslator().feed(
            line(
                "tool.execution_complete", {"toolCallId": "x", "toolName": "grep", "success": False}
            )
        )
    )
    assert event.tool_name == "grep"
    assert event.tool_error is True


def test_a_tool_call_completes_only_once() -> None:
    parser = CopilotCliTranslator(clock=FakeClock())
    parser.feed(line("tool.execution_start", {"toolCallId": "c", "toolName": "bash"}))
    parser.feed(line("tool.execution_complete", {"toolCallId": "c", "success": True}))
    again = only(parser.feed(line("tool.execution_complete", {"toolCallId": "c", "success": True})))
    assert again.tool_duration_ms is None
    assert again.tool_name is None


def test_tool_start_without_call_id_is_not_correlated() -> None:
    parser = CopilotCliTranslator(clock=FakeClock())
    parser.feed(line("tool.execution_start", {"toolName": "bash"}))
    event = only(parser.feed(line("tool.execution_complete", {"success": True})))
    assert event.tool_duration_ms is None


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("session.warning", {"message": "rate limited"}, "rate limited"),
        ("session.info", {"infoType": "model_retry", "message": "Retrying..."}, "Retrying..."),
        ("session.task_complete", {"summary": "Replied.", "success": True}, "Replied."),
        ("session.info", {}, ""),
    ],
)
def test_session_messages_are_notifications_with_their_text(
    kind: str, data: dict[str, Any], message: str
) -> None:
    event = only(CopilotCliTranslator().feed(line(kind, data)))
    assert event.type is EventType.NOTIFICATION
    assert event.message == message
    assert event.raw_type == kind


def test_session_warning_is_logged_at_warning_level(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=EVENTS_LOGGER):
        CopilotCliTranslator().feed(line("session.warning", {"message": "disk almost full"}))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("disk almost full" in r.getMessage() for r in warnings)


@pytest.mark.parametrize(
    ("data", "remembered"),
    [
        ({"errorType": "query", "message": "Could not connect"}, "Could not connect"),
        ({"errorType": "query"}, "query"),
        ({}, "session error"),
    ],
)
def test_session_error_is_a_notification_and_is_remembered_for_the_outcome(
    data: dict[str, Any], remembered: str
) -> None:
    parser = CopilotCliTranslator()
    event = only(parser.feed(line("session.error", data)))
    assert event.type is EventType.NOTIFICATION
    assert event.message == f"error: {remembered}"
    assert parser.last_error == remembered


@pytest.mark.parametrize("kind", DEBUG_ONLY)
def test_debug_only_events_produce_no_event(kind: str) -> None:
    assert CopilotCliTranslator().feed(line(kind, {"servers": [], "content": "hi"})) == []


def test_assistant_usage_adds_input_output_and_cached_tokens() -> None:
    parser = CopilotCliTranslator(usage_before=TokenUsage(1, 1, 1))
    data = {"inputTokens": 10, "outputTokens": 4, "cacheReadTokens": 2, "model": "gpt-4.1"}
    event = only(parser.feed(line("assistant.usage", data)))
    assert event.type is EventType.TOKEN_USAGE
    assert event.usage == TokenUsage(11, 5, 3, "gpt-4.1")


def test_result_line_produces_no_event_but_records_session_and_result() -> None:
    parser = CopilotCliTranslator()
    text = json.dumps(
        {
            "type": "result",
            "sessionId": "d28a6049",
            "exitCode": 0,
            "usage": {
                "premiumRequests": 2,
                "totalApiDurationMs": 17,
                "sessionDurationMs": 201,
                "codeChanges": {"filesModified": ["a.py", 3, "b.py"]},
            },
        }
    )
    assert parser.feed(text) == []
    assert parser.session_id == "d28a6049"
    assert parser.result == ResultLine(
        session_id="d28a6049",
        exit_code=0,
        api_duration_ms=17,
        premium_requests=2,
        session_duration_ms=201,
        files_modified=("a.py", "b.py"),
    )
    later = only(parser.feed(line("session.info", {"message": "x"})))
    assert later.session_id == "d28a6049"


def test_result_line_without_session_id_keeps_the_known_one() -> None:
    parser = CopilotCliTranslator(session_id="known")
    parser.feed(json.dumps({"type": "result", "exitCode": "zero", "usage": "n/a"}))
    assert parser.session_id == "known"
    assert parser.result is not None
    assert parser.result.exit_code is None
    assert parser.result.api_duration_ms is None


@pytest.mark.parametrize(
    "kind", ["session.skills_loaded", "model.call_start", "assistant.idle", "brand.new_event"]
)
def test_unknown_event_type_is_other_message_with_its_raw_type(kind: str) -> None:
    event = only(CopilotCliTranslator().feed(line(kind, {"anything": 1})))
    assert event.type is EventType.OTHER_MESSAGE
    assert event.raw_type == kind
    assert event.message == kind


@pytest.mark.parametrize(
    "text",
    [
        "not json at all",
        "{broken",
        "[1, 2, 3]",
        '["assistant.message"]',
        '"just a string"',
        "42",
        "null",
        '{"data": {"content": "x"}}',
        '{"type": 5}',
        '{"type": null}',
        '{"type": ["assistant.message"]}',
    ],
)
def test_lines_that_are_not_typed_json_objects_are_malformed(text: str) -> None:
    event = only(CopilotCliTranslator(session_id="s").feed(text))
    assert event.type is EventType.MALFORMED
    assert event.message == text
    assert event.session_id == "s"


def test_malformed_line_is_truncated_to_500_characters() -> None:
    text = "x" * 5000
    event = only(CopilotCliTranslator().feed(text))
    assert event.type is EventType.MALFORMED
    assert MESSAGE_LIMIT == 500
    assert len(event.message) == 500
    assert event.message.startswith("x" * 499)
    assert event.message.endswith("…")


@pytest.mark.parametrize("text", ["", " ", "\n", "\t \r\n"])
def test_blank_lines_are_ignored(text: str) -> None:
    assert CopilotCliTranslator().feed(text) == []


def test_line_with_trailing_newline_parses() -> None:
    event = only(CopilotCliTranslator().feed(line("session.info", {"message": "ok"}) + "\n"))
    assert event.message == "ok"


def test_overflowing_line_is_reported_as_malformed_with_its_size() -> None:
    event = only(CopilotCliTranslator(session_id="s").overflow(12_345_678))
    assert event.type is EventType.MALFORMED
    assert "12345678 bytes" in event.message
    assert event.session_id == "s"


def test_non_object_data_is_treated_as_empty() -> None:
    event = only(CopilotCliTranslator().feed(line("session.info", ["message", "x"])))
    assert event.type is EventType.NOTIFICATION
    assert event.message == ""


# Found by the property tests at the end of this file: these must not raise (the module promises
# "It never raises on input"), but `_message` iterates `toolRequests` blindly
# and json.loads raises RecursionError (not ValueError) on deep nesting.


@pytest.mark.parametrize("requests", [1, True, 2.5])
def test_non_iterable_tool_requests_do_not_crash_the_parser(requests: Any) -> None:
    events = CopilotCliTranslator().feed(
        line("assistant.message", {"content": "hi", "toolRequests": requests})
    )
    assert [e.type for e in events] == [EventType.TOKEN_USAGE, EventType.NOTIFICATION]
    assert events[1].message == "hi"


def test_deeply_nested_json_is_malformed_not_a_crash() -> None:
    text = "[" * 100_000
    event = only(CopilotCliTranslator().feed(text))
    assert event.type is EventType.MALFORMED


# -- the exit code mapping table ---------------------------------------------

ASSISTANT_REPLY = line("assistant.message", {"content": "done", "outputTokens": 4})
SESSION_ERROR = line("session.error", {"errorType": "query", "message": "model unreachable"})
AUTH_STDERR = (
    "Error: No authentication information found.\n\n"
    "Copilot can be authenticated with GitHub using an OAuth Token.\n"
)

# (id, stdout lines, returncode, ssh_host, stderr,
#  exit reason, error kind (None = completed), final event type, message fragments)
EXIT_TABLE: list[tuple[Any, ...]] = [
    ("sigterm", [ASSISTANT_REPLY], -15, None, "", ExitReason.CANCELLED,
     AdapterErrorKind.TURN_CANCELLED, EventType.TURN_CANCELLED, ["stopped by SIGTERM"]),
    ("sigkill-after-result", [result_line()], -9, None, "", ExitReason.CANCELLED,
     AdapterErrorKind.TURN_CANCELLED, EventType.TURN_CANCELLED, ["SIGKILL"]),
    ("unknown-signal", [], -200, None, "", ExitReason.CANCELLED,
     AdapterErrorKind.TURN_CANCELLED, EventType.TURN_CANCELLED, ["signal 200"]),
    ("127-local", [], 127, None, "sh: 1: copilot: not found\n", ExitReason.FAILED,
     AdapterErrorKind.AGENT_NOT_FOUND, EventType.TURN_FAILED,
     ["copilot not found on PATH (exit 127)", "copilot: not found"]),
    ("127-ssh", [], 127, "build-1", "bash: copilot: command not found", ExitReason.FAILED,
     AdapterErrorKind.AGENT_NOT_FOUND, EventType.TURN_FAILED, ["copilot not found on build-1"]),
    ("ssh-255", [], 255, "build-1", "ssh: connect to host build-1 port 22: Connection refused",
     ExitReason.FAILED, AdapterErrorKind.PORT_EXIT, EventType.TURN_FAILED,
     ["ssh to build-1 failed (exit 255)", "Connection refused"]),
    ("255-without-ssh", [], 255, None, "", ExitReason.FAILED, AdapterErrorKind.PORT_EXIT,
     EventType.TURN_FAILED, ["exited with status 255 before reporting a result"]),
    ("0-no-result", [ASSISTANT_REPLY], 0, None, "", ExitReason.COMPLETED, None,
     EventType.TURN_COMPLETED, ["turn completed"]),
    ("0-result-exit-0", [ASSISTANT_REPLY, result_line()], 0, None, "", ExitReason.COMPLETED,
     None, EventType.TURN_COMPLETED, ["turn completed"]),
    ("0-result-exit-2", [SESSION_ERROR, result_line(exit_code=2)], 0, None, "",
     ExitReason.FAILED, AdapterErrorKind.TURN_FAILED, EventType.TURN_FAILED,
     ["reported exit code 2", "model unreachable"]),
    ("1-result-with-session-error", [SESSION_ERROR, result_line(exit_code=1)], 1, None, "",
     ExitReason.FAILED, AdapterErrorKind.TURN_FAILED, EventType.TURN_FAILED,
     ["copilot reported exit code 1: model unreachable"]),
    ("1-result-no-error-uses-stderr", [result_line(exit_code=1)], 1, None, "Error: boom\n",
     ExitReason.FAILED, AdapterErrorKind.TURN_FAILED, EventType.TURN_FAILED, ["Error: boom"]),
    ("1-result-nothing-known", [result_line(exit_code=1)], 1, None, "", ExitReason.FAILED,
     AdapterErrorKind.TURN_FAILED, EventType.TURN_FAILED, ["no error message"]),
    ("1-no-result", [], 1, None, AUTH_STDERR, ExitReason.FAILED, AdapterErrorKind.PORT_EXIT,
     EventType.TURN_FAILED,
     ["exited with status 1 before reporting a result",
      "Error: No authentication information found."]),
    ("result-without-exitcode-0", [result_line(exit_code=None)], 0, None, "",
     ExitReason.COMPLETED, None, EventType.TURN_COMPLETED, ["turn completed"]),
    ("result-without-exitcode-3", [result_line(exit_code=None)], 3, None, "",
     ExitReason.FAILED, AdapterErrorKind.TURN_FAILED, EventType.TURN_FAILED,
     ["reported exit code 3"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("lines", "returncode", "ssh_host", "stderr", "reason", "kind", "final", "fragments"),
    [pytest.param(*row[1:], id=row[0]) for row in EXIT_TABLE],
)
def test_exit_status_maps_to_the_specs_outcome(
    lines: list[str],
    returncode: int,
    ssh_host: str | None,
    stderr: str,
    reason: ExitReason,
    kind: AdapterErrorKind | None,
    final: EventType,
    fragments: list[str],
) -> None:
    parser = CopilotCliTranslator(ssh_host=ssh_host)
    feed_all(parser, lines)
    events, result = parser.finish(returncode, stderr=stderr)
    last = events[-1]
    assert last.type is final
    assert result.exit_reason is reason
    assert last.error_kind is kind
    if kind is None:
        assert result.error is None
        assert result.ok
    else:
        assert result.error is not None
        assert result.error.kind is kind
        assert not result.ok
        assert result.error.message == last.message
    for fragment in fragments:
        assert fragment in last.message


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [
        (AdapterErrorKind.PORT_EXIT, True),
        (AdapterErrorKind.TURN_FAILED, True),
        (AdapterErrorKind.AGENT_NOT_FOUND, False),
        (AdapterErrorKind.TURN_CANCELLED, False),
    ],
)
def test_outcome_errors_carry_the_kinds_default_retryability(
    kind: AdapterErrorKind, retryable: bool
) -> None:
    row = next(r for r in EXIT_TABLE if r[6] is kind)
    parser = CopilotCliTranslator(ssh_host=row[3])
    feed_all(parser, row[1])
    _, result = parser.finish(row[2], stderr=row[4])
    assert result.error is not None
    assert result.error.kind is kind
    assert result.error.retryable is retryable
    assert AgentError(kind, "x").retryable is retryable


def test_completed_turn_carries_the_result_lines_api_duration() -> None:
    parser = CopilotCliTranslator()
    feed_all(parser, [ASSISTANT_REPLY, result_line(session_id="s-9", api_ms=1234)])
    events, result = parser.finish(0)
    assert events[-1].api_duration_ms == 1234
    assert result == TurnResult(
        session_id="s-9",
        exit_reason=ExitReason.COMPLETED,
        usage=TokenUsage(output_tokens=4),
        reply="done",
        api_duration_ms=1234,
    )
    assert events[-1].session_id == "s-9"
    assert events[-1].usage == TokenUsage(output_tokens=4)


def test_completed_turn_without_result_has_no_api_duration() -> None:
    events, result = CopilotCliTranslator(session_id="old").finish(0)
    assert events[-1].api_duration_ms is None
    assert result.api_duration_ms is None
    assert result.session_id == "old"


def test_failed_turn_with_result_carries_api_duration_and_session() -> None:
    parser = CopilotCliTranslator()
    feed_all(parser, [SESSION_ERROR, result_line(session_id="s-f", exit_code=1, api_ms=77)])
    events, result = parser.finish(1)
    assert result.api_duration_ms == 77
    assert events[-1].api_duration_ms == 77
    assert result.session_id == "s-f"


def test_stderr_error_line_is_preferred_over_other_stderr_lines() -> None:
    stderr = "warming up\nError: Authentication token found but could not be validated.\nbye\n"
    _, result = CopilotCliTranslator().finish(1, stderr=stderr)
    assert result.error is not None
    assert result.error.message.endswith(
        ": Error: Authentication token found but could not be validated."
    )


def test_reply_joins_the_non_empty_assistant_messages() -> None:
    parser = CopilotCliTranslator()
    feed_all(
        parser,
        [
            line("assistant.message", {"content": "first"}),
            line("assistant.message", {"content": "   ", "toolRequests": [{"name": "bash"}]}),
            line("assistant.message", {"toolRequests": [{"name": "bash"}]}),
            line("assistant.message", {"content": "second"}),
        ],
    )
    _, result = parser.finish(0)
    assert result.reply == "first\n\nsecond"


def test_failed_turn_still_reports_the_reply_and_usage() -> None:
    parser = CopilotCliTranslator()
    feed_all(parser, [ASSISTANT_REPLY, SESSION_ERROR, result_line(exit_code=1)])
    _, result = parser.finish(1)
    assert result.reply == "done"
    assert result.usage == TokenUsage(output_tokens=4)


# -- the usage report (--usage-output-file) -----------------------------------


def load_report() -> Any:
    return json.loads(USAGE_REPORT.read_text(encoding="utf-8"))


def test_usage_report_fixture_gives_input_output_and_model() -> None:
    assert usage_from_report(load_report()) == TokenUsage(
        input_tokens=10, output_tokens=5, cached_input_tokens=0, model="gpt-4.1"
    )


def test_usage_report_sums_several_models_without_naming_one() -> None:
    report = {
        "modelMetrics": {
            "a": {"usage": {"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 3}},
            "b": {"usage": {"inputTokens": 10, "outputTokens": 20}},
        }
    }
    assert usage_from_report(report) == TokenUsage(11, 22, 3, "")


@pytest.mark.parametrize("report", [None, {}, {"modelMetrics": {}}, "junk", [1], {"x": 1}])
def test_usage_report_without_model_metrics_gives_none(report: Any) -> None:
    assert usage_from_report(report) is None


def test_usage_report_tolerates_bad_metric_values() -> None:
    report = {"modelMetrics": {"m": {"usage": {"inputTokens": "10", "outputTokens": -1}}}}
    assert usage_from_report(report) == TokenUsage(model="m")


def test_usage_report_replaces_the_turns_running_output_tokens() -> None:
    parser = CopilotCliTranslator()
    feed_all(parser, [line("assistant.message", {"content": "hi", "outputTokens": 99})])
    events, result = parser.finish(0, usage_report=load_report())
    report_usage = TokenUsage(10, 5, 0, "gpt-4.1")
    assert result.usage == report_usage
    assert [e.type for e in events] == [EventType.TOKEN_USAGE, EventType.TURN_COMPLETED]
    assert events[0].usage == report_usage
    assert events[-1].usage == report_usage


def test_usage_report_is_added_to_earlier_usage_for_a_new_session() -> None:
    before = TokenUsage(input_tokens=100, output_tokens=50, model="gpt-4.1")
    parser = CopilotCliTranslator(usage_before=before)
    feed_all(parser, [line("assistant.message", {"outputTokens": 99})])
    _, result = parser.finish(0, usage_report=load_report())
    assert result.usage == TokenUsage(110, 55, 0, "gpt-4.1")


def test_usage_report_covering_the_session_replaces_the_session_total() -> None:
    before = TokenUsage(input_tokens=100, output_tokens=50, cached_input_tokens=8, model="old")
    parser = CopilotCliTranslator(usage_before=before, report_covers_session=True)
    feed_all(parser, [line("assistant.message", {"outputTokens": 99})])
    _, result = parser.finish(0, usage_report=load_report())
    assert result.usage == TokenUsage(10, 5, 0, "gpt-4.1")
    assert parser.usage == result.usage


def test_usage_report_without_metrics_keeps_the_running_totals() -> None:
    parser = CopilotCliTranslator(
        usage_before=TokenUsage(output_tokens=1), report_covers_session=True
    )
    feed_all(parser, [line("assistant.message", {"outputTokens": 4})])
    events, result = parser.finish(0, usage_report={"totalApiDurationMs": 3})
    assert result.usage == TokenUsage(output_tokens=5)
    assert [e.type for e in events] == [EventType.TURN_COMPLETED]


def test_usage_report_also_applies_to_a_failed_turn() -> None:
    parser = CopilotCliTranslator()
    feed_all(parser, [SESSION_ERROR, result_line(exit_code=1)])
    events, result = parser.finish(1, usage_report=load_report())
    assert result.exit_reason is ExitReason.FAILED
    assert result.usage == TokenUsage(10, 5, 0, "gpt-4.1")
    assert events[-1].usage == result.usage


# -- replaying the real CLI transcripts --------------------------------------

COMPLETED = (EventType.TURN_COMPLETED, None)
FAILED = (EventType.TURN_FAILED, AdapterErrorKind.TURN_FAILED)
PORT_EXIT = (EventType.TURN_FAILED, AdapterErrorKind.PORT_EXIT)
EXPECTED_OUTCOME = {
    "continue-most-recent": COMPLETED,
    "model-http-500": FAILED,
    "model-server-down": FAILED,
    "no-auth": PORT_EXIT,
    "offline-without-provider": PORT_EXIT,
    "plain-prompt": COMPLETED,
    "plain-prompt-autopilot-cap-reached": COMPLETED,
    "plain-prompt-with-usage-output-file": COMPLETED,
    "plain-prompt-without-silent-flag": COMPLETED,
    "resume-by-session-id": COMPLETED,
    "shell-tool-call": COMPLETED,
}


def fixture_name(path: Path) -> str:
    return path.name.removesuffix(".jsonl")


def replay(path: Path) -> tuple[list[AgentEvent], list[AgentEvent], TurnResult, dict[str, Any]]:
    """Feed one transcript and finish with its recorded exit status."""
    meta = json.loads(path.with_name(fixture_name(path) + ".meta.json").read_text("utf-8"))
    usage_path = path.with_name(fixture_name(path) + ".usage.json")
    report = json.loads(usage_path.read_text("utf-8")) if usage_path.exists() else None
    parser = CopilotCliTranslator(clock=FakeClock())
    fed = feed_all(parser, path.read_text(encoding="utf-8").splitlines())
    final, result = parser.finish(meta["exit_code"], stderr=meta["stderr"], usage_report=report)
    return fed, final, result, meta


def session_error_text(path: Path) -> str:
    for text in reversed(path.read_text(encoding="utf-8").splitlines()):
        raw = json.loads(text)
        if raw["type"] == "session.error":
            return str(raw["data"]["message"])
    raise AssertionError(f"{path.name} has no session.error")


def stderr_error_line(stderr: str) -> str:
    lines = [text.strip() for text in stderr.splitlines() if text.strip()]
    return next((text for text in lines if text.startswith("Error:")), lines[0])


def test_every_transcript_has_an_expected_outcome() -> None:
    assert FIXTURES
    assert {fixture_name(p) for p in FIXTURES} == set(EXPECTED_OUTCOME)


@pytest.mark.parametrize("path", FIXTURES, ids=fixture_name)
def test_transcript_replays_to_the_expected_outcome(path: Path) -> None:
    fed, final, result, meta = replay(path)
    assert all(isinstance(event, AgentEvent) for event in [*fed, *final])
    assert not [e for e in fed if e.type is EventType.MALFORMED]
    final_type, kind = EXPECTED_OUTCOME[fixture_name(path)]
    assert final[-1].type is final_type
    assert final[-1].error_kind is kind
    if kind is None:
        assert result.exit_reason is ExitReason.COMPLETED
        assert result.error is None
        assert result.session_id == meta["session_id"]
        assert final[-1].session_id == meta["session_id"]
        assert result.api_duration_ms == meta["result_line"]["usage"]["totalApiDurationMs"]
        assert "hello from fake model" in result.reply or "shell" in fixture_name(path)
    else:
        assert result.exit_reason is ExitReason.FAILED
        assert result.error is not None
        assert result.error.kind is kind
        assert result.error.retryable is True


@pytest.mark.parametrize(
    "name", [n for n, outcome in EXPECTED_OUTCOME.items() if outcome == FAILED]
)
def test_failed_transcripts_quote_the_session_error(name: str) -> None:
    path = DATA / f"{name}.jsonl"
    _, final, result, meta = replay(path)
    assert result.error is not None
    assert session_error_text(path) in result.error.message
    assert session_error_text(path) in final[-1].message
    assert result.session_id == meta["session_id"]
    assert result.error.message.startswith("copilot reported exit code 1: ")


@pytest.mark.parametrize(
    "name", [n for n, outcome in EXPECTED_OUTCOME.items() if outcome == PORT_EXIT]
)
def test_transcripts_without_stdout_quote_the_stderr_error_line(name: str) -> None:
    _, final, result, meta = replay(DATA / f"{name}.jsonl")
    assert meta["exit_code"] == 1
    assert result.error is not None
    assert stderr_error_line(meta["stderr"]) in result.error.message
    assert stderr_error_line(meta["stderr"]) in final[-1].message
    assert result.session_id == ""


def test_no_auth_transcript_quotes_the_authentication_error() -> None:
    _, _, result, _ = replay(DATA / "no-auth.jsonl")
    assert result.error is not None
    assert "Error: No authentication information found." in result.error.message


def test_shell_tool_call_transcript_yields_a_successful_bash_tool_result() -> None:
    fed, _, result, _ = replay(DATA / "shell-tool-call.jsonl")
    tool_results = [e for e in fed if e.type is EventType.TOOL_RESULT]
    bash = [e for e in tool_results if e.tool_name == "bash"]
    assert len(bash) == 1
    assert bash[0].tool_error is False
    assert bash[0].tool_duration_ms == 0  # the injected clock never moved
    assert {e.tool_name for e in tool_results} == {"bash", "task_complete"}
    assert result.ok


def test_transcript_token_usage_events_follow_each_assistant_message() -> None:
    path = DATA / "plain-prompt.jsonl"
    fed, _, _, _ = replay(path)
    messages = sum(
        json.loads(text)["type"] == "assistant.message"
        for text in path.read_text("utf-8").splitlines()
    )
    assert messages > 0
    assert sum(e.type is EventType.TOKEN_USAGE for e in fed) == messages


def test_usage_report_transcript_ends_with_the_reports_totals() -> None:
    _, final, result, _ = replay(DATA / "plain-prompt-with-usage-output-file.jsonl")
    assert result.usage == TokenUsage(10, 5, 0, "gpt-4.1")
    assert final[0].type is EventType.TOKEN_USAGE


# -- properties: feed() never raises ----------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
DATA_KEYS = (
    "content",
    "deltaContent",
    "toolRequests",
    "outputTokens",
    "inputTokens",
    "cacheReadTokens",
    "model",
    "turnId",
    "toolCallId",
    "toolName",
    "success",
    "error",
    "message",
    "summary",
    "errorType",
)
handler_fields = st.fixed_dictionaries({}, optional=dict.fromkeys(DATA_KEYS, json_value))
"""The fields the handlers read, each present or not, each with any JSON value."""
event_data = st.one_of(
    handler_fields,
    st.dictionaries(st.text(max_size=8), json_value, max_size=4),
    json_value,
)
event_object = st.fixed_dictionaries(
    {
        "type": st.sampled_from((*HANDLED, *DEBUG_ONLY, "result", "brand.new")),
        "data": event_data,
    },
    optional={"sessionId": json_value, "exitCode": json_value, "usage": json_value},
)


@given(text=st.text())
def test_feed_never_raises_on_arbitrary_text(text: str) -> None:
    events = CopilotCliTranslator(clock=FakeClock()).feed(text)
    assert isinstance(events, list)
    assert all(isinstance(event, AgentEvent) for event in events)


@settings(max_examples=500)
@given(kind=st.sampled_from(HANDLED), data=handler_fields)
def test_feed_never_raises_on_any_data_for_a_handled_event_type(
    kind: str, data: dict[str, Any]
) -> None:
    events = CopilotCliTranslator(clock=FakeClock()).feed(json.dumps({"type": kind, "data": data}))
    assert events
    assert all(isinstance(event, AgentEvent) for event in events)
    assert all(event.raw_type == kind for event in events)


@settings(max_examples=300)
@given(objects=st.lists(event_object, max_size=8), returncode=st.integers(-64, 255))
def test_feed_and_finish_never_raise_on_arbitrary_event_objects(
    objects: list[dict[str, Any]], returncode: int
) -> None:
    parser = CopilotCliTranslator(clock=FakeClock())
    for obj in objects:
        events = parser.feed(json.dumps(obj))
        assert all(isinstance(event, AgentEvent) for event in events)
        assert all(len(event.message) <= MESSAGE_LIMIT for event in events)
    final, result = parser.finish(returncode)
    assert final[-1].type in {
        EventType.TURN_COMPLETED,
        EventType.TURN_FAILED,
        EventType.TURN_CANCELLED,
    }
    assert isinstance(result, TurnResult)
