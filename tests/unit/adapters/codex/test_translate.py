"""CodexTranslator and the failure classes: the spec's event table on the real shapes.

Every notification the table tests feed is first checked against the
generated ServerNotification schema, so the shapes are the app-server's,
and the real transcripts are replayed turn by turn at the end.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.codex.translate import (
    AGENT_MESSAGE_LIMIT,
    CodexTranslator,
    classify_failure,
    error_info_name,
    usage_from,
)
from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import ExitReason
from copilot_driver.vocabulary import AdapterErrorKind

if TYPE_CHECKING:
    from unit.adapters.codex.conftest import CodexSchemas, Transcript

THREAD = "01a1fcc7-01df-72a1-948b-eab62c1c102c"
TURN = "01a1fcc7-01f7-78d2-a31f-a3a44820af92"
OTHER_TURN = "01a1fcc7-0643-77e2-b30c-d826dc29c49c"
PID = 4242


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def mapper(clock: Clock | None = None, **fields: Any) -> CodexTranslator:
    return CodexTranslator(session_id=THREAD, pid=PID, clock=clock or Clock(), **fields)


Feed = Callable[[CodexTranslator, str, Any], list[AgentEvent]]


@pytest.fixture
def feed(codex_schemas: CodexSchemas) -> Feed:
    """Feeds one notification, after checking it is one the app-server can send."""

    def run(target: CodexTranslator, method: str, params: Any) -> list[AgentEvent]:
        problems = codex_schemas.problems_with_server_message({"method": method, "params": params})
        assert problems == [], f"not a real {method}: {problems}"
        return target.feed(method, params)

    return run


def turn(
    status: str = "inProgress", error: dict[str, Any] | None = None, turn_id: str = TURN
) -> dict[str, Any]:
    return {
        "id": turn_id,
        "items": [],
        "status": status,
        "error": error,
        "startedAt": 1795242263,
        "completedAt": None,
        "durationMs": None,
    }


def turn_error(message: str, info: Any, details: str | None = None) -> dict[str, Any]:
    return {"message": message, "codexErrorInfo": info, "additionalDetails": details}


def started(item: dict[str, Any]) -> dict[str, Any]:
    return {"item": item, "threadId": THREAD, "turnId": TURN, "startedAtMs": 1795242265449}


def completed(item: dict[str, Any]) -> dict[str, Any]:
    return {"item": item, "threadId": THREAD, "turnId": TURN, "completedAtMs": 1795242265851}


def command(
    status: str = "inProgress", exit_code: int | None = None, item_id: str = "call_1"
) -> dict[str, Any]:
    return {
        "type": "commandExecution",
        "id": item_id,
        "command": "/bin/bash -lc 'make test'",
        "cwd": "/WORKSPACE",
        "status": status,
        "commandActions": [{"type": "unknown", "command": "make test"}],
        "aggregatedOutput": None,
        "exitCode": exit_code,
        "durationMs": None,
    }


def file_change(status: str = "inProgress", item_id: str = "patch_1") -> dict[str, Any]:
    return {
        "type": "fileChange",
        "id": item_id,
        "status": status,
        "changes": [
            {"path": "/WORKSPACE/a.py", "kind": {"type": "update"}, "diff": "@@ -1 +1 @@"},
            {"path": "/WORKSPACE/b.py", "kind": {"type": "add"}, "diff": "+x"},
        ],
    }


def mcp_call(status: str = "inProgress", item_id: str = "mcp_1") -> dict[str, Any]:
    return {
        "type": "mcpToolCall",
        "id": item_id,
        "server": "tracker",
        "tool": "search",
        "arguments": {"q": "bug"},
        "status": status,
    }


def dynamic_call(status: str = "inProgress", success: bool | None = None) -> dict[str, Any]:
    return {
        "type": "dynamicToolCall",
        "id": "call_fake_2",
        "tool": "lookup_answer",
        "arguments": {"question": "meaning of life"},
        "status": status,
        "success": success,
    }


def usage_params(input_tokens: int, output_tokens: int, cached: int) -> dict[str, Any]:
    total = {
        "totalTokens": input_tokens + output_tokens,
        "inputTokens": input_tokens,
        "cachedInputTokens": cached,
        "outputTokens": output_tokens,
        "reasoningOutputTokens": 3,
    }
    last = {**total, "inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    return {
        "threadId": THREAD,
        "turnId": TURN,
        "tokenUsage": {"total": total, "last": last, "modelContextWindow": 258400},
    }


def error_params(
    message: str, will_retry: bool, info: Any, details: str | None = None
) -> dict[str, Any]:
    return {
        "error": turn_error(message, info, details),
        "willRetry": will_retry,
        "threadId": THREAD,
        "turnId": TURN,
    }


# -- turn/started -------------------------------------------------------------------


def test_the_session_start_names_the_thread_and_the_pid() -> None:
    """The adapter emits it first on a session's first turn (before turn/start,
    so it precedes whatever Codex notifies meanwhile)."""
    event = mapper().session_started()
    assert (event.type, event.message, event.session_id) == (
        EventType.SESSION_STARTED,
        f"codex thread {THREAD}, pid {PID}",
        THREAD,
    )
    without_pid = CodexTranslator(session_id=THREAD).session_started()
    assert without_pid.message == f"codex thread {THREAD}"


def test_turn_started_is_a_notification_and_takes_the_turn_id(feed: Feed) -> None:
    target = mapper()
    events = feed(target, "turn/started", {"threadId": THREAD, "turn": turn()})
    assert [(e.type, e.message, e.raw_type, e.session_id) for e in events] == [
        (EventType.NOTIFICATION, f"turn {TURN} started", "turn/started", THREAD)
    ]
    assert target.turn_id == TURN


def test_turn_started_keeps_the_id_from_turn_start(feed: Feed) -> None:
    target = mapper(turn_id=TURN)
    feed(target, "turn/started", {"threadId": THREAD, "turn": turn(turn_id=OTHER_TURN)})
    assert target.turn_id == TURN


# -- turn/completed and finish() -------------------------------------------------------


def test_a_completed_turn(feed: Feed) -> None:
    target = mapper()
    feed(target, "turn/started", {"threadId": THREAD, "turn": turn()})
    feed(target, "thread/tokenUsage/updated", usage_params(120, 12, 20))
    assert feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("completed")}) == []
    events, result = target.finish()
    usage = TokenUsage(input_tokens=120, output_tokens=12, cached_input_tokens=20)
    assert [(e.type, e.message, e.usage) for e in events] == [
        (EventType.TOKEN_USAGE, "", usage),
        (EventType.TURN_COMPLETED, "turn completed", usage),
    ]
    assert (result.exit_reason, result.error, result.usage, result.session_id) == (
        ExitReason.COMPLETED,
        None,
        usage,
        THREAD,
    )
    assert result.ok


@pytest.mark.parametrize(
    ("error", "kind", "retryable", "message"),
    [
        (
            turn_error("Connection failed", {"httpConnectionFailed": {"httpStatusCode": None}}),
            AdapterErrorKind.TURN_FAILED,
            True,
            "Connection failed [httpConnectionFailed]",
        ),
        (
            turn_error("context is full", "contextWindowExceeded"),
            AdapterErrorKind.TURN_FAILED,
            False,
            "context is full [contextWindowExceeded]",
        ),
        (
            turn_error("401", {"httpConnectionFailed": {"httpStatusCode": 401}}),
            AdapterErrorKind.RESPONSE_ERROR,
            False,
            "401 [httpConnectionFailed]",
        ),
        (
            turn_error("bad key", "unauthorized"),
            AdapterErrorKind.RESPONSE_ERROR,
            False,
            "bad key [unauthorized]",
        ),
        (turn_error("odd", None), AdapterErrorKind.TURN_FAILED, True, "odd"),
        (None, AdapterErrorKind.TURN_FAILED, True, "turn ended as 'failed'"),
    ],
)
def test_a_failed_turn(
    feed: Feed, error: dict[str, Any] | None, kind: AdapterErrorKind, retryable: bool, message: str
) -> None:
    target = mapper()
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("failed", error)})
    events, result = target.finish()
    assert [e.type for e in events] == [EventType.TOKEN_USAGE, EventType.TURN_FAILED]
    assert (events[1].error_kind, events[1].message) == (kind, message)
    assert result.exit_reason is ExitReason.FAILED
    assert result.error is not None
    assert (result.error.kind, result.error.retryable, result.error.message) == (
        kind,
        retryable,
        message,
    )


def test_a_failed_turn_without_error_uses_the_last_error_notification(feed: Feed) -> None:
    target = mapper()
    feed(target, "error", error_params("Reconnecting... 1/5", True, "other"))
    feed(target, "error", error_params("stream broke", False, "other", "after 5 tries"))
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("failed")})
    _, result = target.finish()
    assert result.error is not None
    assert result.error.message == "stream broke (after 5 tries)"


def test_an_interrupted_turn_is_cancelled(feed: Feed) -> None:
    target = mapper(usage_before=TokenUsage(input_tokens=5))
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("interrupted")})
    events, result = target.finish()
    assert [(e.type, e.error_kind) for e in events] == [
        (EventType.TOKEN_USAGE, None),
        (EventType.TURN_CANCELLED, AdapterErrorKind.TURN_CANCELLED),
    ]
    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_CANCELLED
    assert result.usage == TokenUsage(input_tokens=5), "the session's usage so far"


def test_input_required_overrides_the_failure_class(feed: Feed) -> None:
    target = mapper()
    target.input_required = True
    error = turn_error("no answer", {"responseStreamDisconnected": {"httpStatusCode": None}})
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("failed", error)})
    _, result = target.finish()
    assert result.error is not None
    assert (result.error.kind, result.error.retryable) == (
        AdapterErrorKind.TURN_INPUT_REQUIRED,
        False,
    )


def test_turn_completed_of_another_turn_is_not_this_turns_end(feed: Feed) -> None:
    target = mapper(turn_id=TURN)
    other = {"threadId": THREAD, "turn": turn("completed", turn_id=OTHER_TURN)}
    events = feed(target, "turn/completed", other)
    assert [e.type for e in events] == [EventType.OTHER_MESSAGE]
    assert target.completed is None
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("completed")})
    assert target.completed is not None


def test_turn_completed_before_any_turn_id_is_taken(feed: Feed) -> None:
    target = mapper()
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("completed")})
    assert target.completed is not None
    assert target.completed["status"] == "completed"


def test_the_reply_joins_the_agent_messages(feed: Feed) -> None:
    target = mapper()
    for n, text in enumerate(["first part", "", "second part"]):
        item = {"type": "agentMessage", "id": f"msg_{n}", "text": text}
        feed(target, "item/completed", completed(item))
    feed(target, "turn/completed", {"threadId": THREAD, "turn": turn("completed")})
    assert target.finish()[1].reply == "first part\n\nsecond part"


def test_fail_reports_an_adapter_side_failure() -> None:
    target = mapper(usage_before=TokenUsage(output_tokens=3))
    events, result = target.fail(AgentError(AdapterErrorKind.PORT_EXIT, "codex app-server exited"))
    assert [(e.type, e.error_kind, e.message, e.usage) for e in events] == [
        (
            EventType.TURN_FAILED,
            AdapterErrorKind.PORT_EXIT,
            "codex app-server exited",
            TokenUsage(output_tokens=3),
        )
    ]
    assert result.exit_reason is ExitReason.FAILED
    assert result.error is not None
    assert result.error.retryable is True


# -- items ------------------------------------------------------------------------------

TOOL_ITEMS = [
    pytest.param(
        command, "commandExecution", "command started: /bin/bash -lc 'make test'", id="cmd"
    ),
    pytest.param(
        file_change, "fileChange", "file change started: /WORKSPACE/a.py, /WORKSPACE/b.py", id="fc"
    ),
    pytest.param(mcp_call, "tracker/search", "tool tracker/search started", id="mcp"),
]


@pytest.mark.parametrize(("make", "name", "message"), TOOL_ITEMS)
def test_tool_items_become_tool_results_timed_by_the_clock(
    feed: Feed, make: Callable[..., dict[str, Any]], name: str, message: str
) -> None:
    clock = Clock(now=10.0)
    target = mapper(clock=clock)
    events = feed(target, "item/started", started(make()))
    assert [(e.type, e.message, e.tool_name, e.raw_type) for e in events] == [
        (EventType.NOTIFICATION, message, name, "item/started")
    ]
    clock.now = 11.5
    events = feed(target, "item/completed", completed(make("completed")))
    assert [(e.type, e.tool_name, e.tool_duration_ms, e.tool_error, e.message) for e in events] == [
        (EventType.TOOL_RESULT, name, 1500, False, f"{name} completed")
    ]
    again = feed(target, "item/completed", completed(make("completed")))
    assert [e.type for e in again] == [EventType.NOTIFICATION], "a result is reported once"


@pytest.mark.parametrize(
    ("item", "failed"),
    [
        (command("completed", 0), False),
        (command("completed", 2), True),
        (command("failed", 3), True),
        (command("failed", None), True),
        (command("declined", None), True),
        (mcp_call("completed"), False),
        (mcp_call("failed"), True),
        (file_change("completed"), False),
        (file_change("failed"), True),
        (file_change("declined"), True),
        ({**command("completed", 0), "success": False}, True),
    ],
    ids=[
        "cmd-ok",
        "cmd-exit-2",
        "cmd-failed-exit-3",
        "cmd-failed",
        "cmd-declined",
        "mcp-ok",
        "mcp-failed",
        "fc-ok",
        "fc-failed",
        "fc-declined",
        "success-false",
    ],
)
def test_tool_error_from_the_completed_item(feed: Feed, item: dict[str, Any], failed: bool) -> None:
    target = mapper()
    feed(target, "item/started", started({**item, "status": "inProgress", "exitCode": None}))
    (event,) = target.feed("item/completed", completed(item))
    assert event.type is EventType.TOOL_RESULT
    assert event.tool_error is failed
    assert event.message.endswith("failed" if failed else "completed")


def test_a_boolean_exit_code_is_not_an_exit_code() -> None:
    target = mapper()
    target.feed("item/started", started(command()))
    (event,) = target.feed("item/completed", completed({**command("completed"), "exitCode": True}))
    assert event.tool_error is False


def test_dynamic_tool_items_are_only_notifications(feed: Feed) -> None:
    """The adapter reports dynamic tool results itself, from the item/tool/call it answered."""
    target = mapper()
    (begin,) = feed(target, "item/started", started(dynamic_call()))
    assert (begin.type, begin.tool_name, begin.message) == (
        EventType.NOTIFICATION,
        "lookup_answer",
        "tool lookup_answer started",
    )
    (end,) = feed(target, "item/completed", completed(dynamic_call("failed", success=False)))
    assert (end.type, end.message, end.tool_error) == (
        EventType.NOTIFICATION,
        "dynamicToolCall completed",
        None,
    )


def test_interleaved_tool_items_are_matched_by_id(feed: Feed) -> None:
    clock = Clock(now=0.0)
    target = mapper(clock=clock)
    feed(target, "item/started", started(command(item_id="a")))
    clock.now = 1.0
    feed(target, "item/started", started(command(item_id="b")))
    clock.now = 1.25
    (b,) = feed(target, "item/completed", completed(command("failed", 1, item_id="b")))
    clock.now = 3.0
    (a,) = feed(target, "item/completed", completed(command("completed", 0, item_id="a")))
    assert (b.tool_duration_ms, b.tool_error) == (250, True)
    assert (a.tool_duration_ms, a.tool_error) == (3000, False)


@pytest.mark.parametrize(
    ("method", "item", "message"),
    [
        ("item/started", {"type": "reasoning", "id": "r1"}, "reasoning started"),
        ("item/completed", {"type": "reasoning", "id": "r1"}, "reasoning completed"),
        (
            "item/completed",
            {"type": "userMessage", "id": "u1", "content": []},
            "userMessage completed",
        ),
        ("item/started", {"type": "agentMessage", "id": "m1", "text": ""}, "agentMessage started"),
        (
            "item/completed",
            {"type": "agentMessage", "id": "m1", "text": ""},
            "agentMessage completed",
        ),
        ("item/completed", command("completed", 0, "never-started"), "commandExecution completed"),
    ],
)
def test_other_items_are_notifications(
    feed: Feed, method: str, item: dict[str, Any], message: str
) -> None:
    params = started(item) if method == "item/started" else completed(item)
    events = feed(mapper(), method, params)
    assert [(e.type, e.message) for e in events] == [(EventType.NOTIFICATION, message)]


def test_agent_message_text_is_cut_to_200_characters(feed: Feed) -> None:
    target = mapper()
    text = "x" * 150 + " and then some more words " * 20
    (event,) = feed(
        target, "item/completed", completed({"type": "agentMessage", "id": "m", "text": text})
    )
    assert event.type is EventType.NOTIFICATION
    assert len(event.message) == AGENT_MESSAGE_LIMIT == 200
    assert event.message == text[:199] + "…"
    assert target.replies == [text], "the reply keeps the whole text"


def test_a_short_agent_message_is_kept_whole(feed: Feed) -> None:
    item = {"type": "agentMessage", "id": "m", "text": "hi from fake responses model"}
    (event,) = feed(mapper(), "item/completed", completed(item))
    assert event.message == "hi from fake responses model"


@pytest.mark.parametrize("method", ["item/agentMessage/delta", "item/commandExecution/outputDelta"])
def test_deltas_are_bare_notifications(feed: Feed, method: str) -> None:
    params = {"threadId": THREAD, "turnId": TURN, "itemId": "x", "delta": "secret output " * 50}
    events = feed(mapper(), method, params)
    assert [(e.type, e.message, e.raw_type) for e in events] == [
        (EventType.NOTIFICATION, "", method)
    ]


def test_plan_updates(feed: Feed) -> None:
    params = {
        "threadId": THREAD,
        "turnId": TURN,
        "explanation": None,
        "plan": [
            {"step": "Read the code", "status": "completed"},
            {"step": "Fix it", "status": "inProgress"},
        ],
    }
    events = feed(mapper(), "turn/plan/updated", params)
    assert [(e.type, e.message) for e in events] == [
        (EventType.NOTIFICATION, "plan: Read the code; Fix it")
    ]


def test_diff_updates_are_not_events(feed: Feed) -> None:
    params = {"threadId": THREAD, "turnId": TURN, "diff": "--- a\n+++ b\n"}
    assert feed(mapper(), "turn/diff/updated", params) == []


# -- usage, errors, warnings, unknown --------------------------------------------------------


def test_token_usage_is_the_running_total(feed: Feed) -> None:
    target = mapper(usage_before=TokenUsage(input_tokens=1, output_tokens=1))
    (first,) = feed(target, "thread/tokenUsage/updated", usage_params(240, 24, 40))
    (second,) = feed(target, "thread/tokenUsage/updated", usage_params(360, 36, 60))
    expected = TokenUsage(input_tokens=360, output_tokens=36, cached_input_tokens=60)
    assert first.type is second.type is EventType.TOKEN_USAGE
    assert first.usage == TokenUsage(input_tokens=240, output_tokens=24, cached_input_tokens=40)
    assert second.usage == target.usage == expected, "replaced by the total, never added"
    assert expected.total_tokens == 396


@pytest.mark.parametrize(
    "token_usage",
    [None, {}, {"total": None}, {"total": {}}, {"last": {"inputTokens": 5}}, "x", []],
)
def test_usage_without_a_total_is_skipped(token_usage: Any) -> None:
    target = mapper(usage_before=TokenUsage(input_tokens=7))
    assert target.feed("thread/tokenUsage/updated", {"tokenUsage": token_usage}) == []
    assert target.usage == TokenUsage(input_tokens=7)
    assert usage_from(token_usage) is None


def test_usage_ignores_values_that_are_not_counts() -> None:
    total = {"inputTokens": "12", "outputTokens": -3, "cachedInputTokens": True, "x": 1}
    assert usage_from({"total": total}) == TokenUsage()


@pytest.mark.parametrize(
    ("params", "message", "last_error"),
    [
        (
            error_params(
                "Reconnecting... 1/5",
                True,
                {"responseStreamDisconnected": {"httpStatusCode": None}},
                "We are currently experiencing high demand",
            ),
            "retrying: Reconnecting... 1/5 (We are currently experiencing high demand)",
            None,
        ),
        (
            error_params("Connection failed: error sending request", False, "other"),
            "error: Connection failed: error sending request",
            "Connection failed: error sending request",
        ),
        (
            error_params("status 401: denied", False, "unauthorized", "denied"),
            "error: status 401: denied",
            "status 401: denied",
        ),
    ],
    ids=["will-retry", "final", "details-already-in-message"],
)
def test_error_notifications(
    feed: Feed, params: dict[str, Any], message: str, last_error: str | None
) -> None:
    target = mapper()
    events = feed(target, "error", params)
    assert [(e.type, e.message) for e in events] == [(EventType.NOTIFICATION, message)]
    assert target.last_error == last_error
    assert target.completed is None, "an error notification does not end the turn"


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("warning", {"message": "model rerouted", "threadId": None}, "warning: model rerouted"),
        (
            "configWarning",
            {"summary": "Codex could not find bubblewrap on PATH.", "details": None},
            "warning: Codex could not find bubblewrap on PATH.",
        ),
    ],
)
def test_warnings(
    feed: Feed, method: str, params: dict[str, Any], message: str, caplog: pytest.LogCaptureFixture
) -> None:
    (event,) = feed(mapper(), method, params)
    assert (event.type, event.message) == (EventType.NOTIFICATION, message)
    assert message.removeprefix("warning: ") in caplog.text


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("thread/status/changed", {"threadId": THREAD, "status": {"type": "idle"}}),
        ("account/rateLimits/updated", {"rateLimits": {"limitId": "codex"}}),
        ("made/up/method", {"anything": [1, 2]}),
        ("", None),
    ],
)
def test_unknown_methods_are_other_messages(method: str, params: Any) -> None:
    events = mapper().feed(method, params)
    assert [(e.type, e.message, e.raw_type) for e in events] == [
        (EventType.OTHER_MESSAGE, method, method)
    ]


HANDLED = [
    "turn/started",
    "turn/completed",
    "turn/plan/updated",
    "turn/diff/updated",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "item/commandExecution/outputDelta",
    "thread/tokenUsage/updated",
    "error",
    "warning",
    "configWarning",
]
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=15,
)
_shaped = st.fixed_dictionaries(
    {},
    optional={
        "turn": _json | st.fixed_dictionaries({}, optional={"id": _json, "status": _json}),
        "item": _json
        | st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["commandExecution", "agentMessage", "mcpToolCall"])
                | _json,
                "id": _json,
                "text": _json,
                "changes": _json,
                "exitCode": _json,
            },
        ),
        "tokenUsage": _json | st.fixed_dictionaries({"total": _json}),
        "error": _json,
        "willRetry": _json,
        "plan": _json,
    },
)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(HANDLED), _json | _shaped), max_size=8))
def test_the_mapper_never_raises_on_odd_params(steps: list[tuple[str, Any]]) -> None:
    target = mapper()
    for method, params in steps:
        for event in target.feed(method, params):
            assert isinstance(event, AgentEvent)
    events, result = target.finish()
    assert events[-1].type in (
        EventType.TURN_COMPLETED,
        EventType.TURN_FAILED,
        EventType.TURN_CANCELLED,
    )
    assert result.session_id == THREAD


# -- failure classes ------------------------------------------------------------------------

SPEC_FAILURES: dict[tuple[AdapterErrorKind, bool], tuple[str, ...]] = {
    (AdapterErrorKind.RESPONSE_ERROR, False): ("Unauthorized", "BadRequest"),
    (AdapterErrorKind.TURN_FAILED, False): (
        "ContextWindowExceeded",
        "UsageLimitExceeded",
        "SandboxError",
    ),
    (AdapterErrorKind.TURN_FAILED, True): (
        "HttpConnectionFailed",
        "ResponseStreamConnectionFailed",
        "ResponseStreamDisconnected",
        "ResponseTooManyFailedAttempts",
        "InternalServerError",
        "Other",
        "SomethingNew",
    ),
}
"""The spec's codexErrorInfo names by the (kind, retryable) they map to."""


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


INFO_FORMS: dict[str, Callable[[str], Any]] = {
    "pascal": lambda name: name,
    "camel": _camel,
    "object": lambda name: {_camel(name): {"httpStatusCode": None}},
    "pascal-object": lambda name: {name: {}},
}
"""The spellings of one codexErrorInfo: the spec's PascalCase, the wire's camelCase,
a string or a one-key object."""


@pytest.mark.parametrize(
    ("info", "kind", "retryable"),
    [
        pytest.param(form(name), kind, retryable, id=f"{label}-{name}")
        for (kind, retryable), names in SPEC_FAILURES.items()
        for name in names
        for label, form in INFO_FORMS.items()
    ],
)
def test_classify_failure_follows_the_spec_table(
    info: Any, kind: AdapterErrorKind, retryable: bool
) -> None:
    assert classify_failure(info) == (kind, retryable)


@pytest.mark.parametrize(
    ("info", "kind", "retryable"),
    [
        ({"httpConnectionFailed": {"httpStatusCode": 401}}, AdapterErrorKind.RESPONSE_ERROR, False),
        ({"httpConnectionFailed": {"httpStatusCode": 403}}, AdapterErrorKind.RESPONSE_ERROR, False),
        (
            {"responseStreamDisconnected": {"httpStatusCode": 401}},
            AdapterErrorKind.RESPONSE_ERROR,
            False,
        ),
        ({"httpConnectionFailed": {"httpStatusCode": 500}}, AdapterErrorKind.TURN_FAILED, True),
        ({"httpConnectionFailed": {"httpStatusCode": 404}}, AdapterErrorKind.TURN_FAILED, True),
        ({"httpConnectionFailed": {"httpStatusCode": "401"}}, AdapterErrorKind.TURN_FAILED, True),
        ({"httpConnectionFailed": None}, AdapterErrorKind.TURN_FAILED, True),
        ({"a": {}, "b": {}}, AdapterErrorKind.TURN_FAILED, True),
        ({}, AdapterErrorKind.TURN_FAILED, True),
        (None, AdapterErrorKind.TURN_FAILED, True),
        (42, AdapterErrorKind.TURN_FAILED, True),
        ("", AdapterErrorKind.TURN_FAILED, True),
        ("usageLimitExceeded", AdapterErrorKind.TURN_FAILED, False),
    ],
)
def test_classify_failure_details(info: Any, kind: AdapterErrorKind, retryable: bool) -> None:
    assert classify_failure(info) == (kind, retryable)


@pytest.mark.parametrize(
    ("info", "name", "details"),
    [
        ("contextWindowExceeded", "contextWindowExceeded", {}),
        (
            {"httpConnectionFailed": {"httpStatusCode": 401}},
            "httpConnectionFailed",
            {"httpStatusCode": 401},
        ),
        ({"responseStreamDisconnected": None}, "responseStreamDisconnected", {}),
        ({"a": 1, "b": 2}, "", {}),
        (None, "", {}),
        ([], "", {}),
    ],
)
def test_error_info_name(info: Any, name: str, details: dict[str, Any]) -> None:
    assert error_info_name(info) == (name, details)


def test_every_camel_case_name_in_the_schema_is_classified_or_defaulted(
    codex_schemas: CodexSchemas,
) -> None:
    """The string forms the real protocol can send all classify without error,
    and the spec's names all exist in it."""
    definition = codex_schemas.definition("ServerNotification.json", "CodexErrorInfo")
    members = definition["definitions"]["CodexErrorInfo"]["anyOf"]
    strings = {value for member in members for value in member.get("enum", [])}
    objects = {key for member in members for key in member.get("required", [])}
    for name in strings | objects:
        kind, _ = classify_failure(name)
        assert kind in (AdapterErrorKind.TURN_FAILED, AdapterErrorKind.RESPONSE_ERROR)
    spec = {_camel(name) for names in SPEC_FAILURES.values() for name in names} - {"somethingNew"}
    assert spec <= strings | objects


# -- replaying the real transcripts ------------------------------------------------------------


@dataclass(frozen=True)
class Replayed:
    events: list[list[AgentEvent]]
    results: list[Any]


def replay(transcript: Transcript) -> Replayed:
    thread_id = transcript.result_of("thread/start")["thread"]["id"]
    usage = TokenUsage()
    clock = Clock()
    all_events: list[list[AgentEvent]] = []
    results = []
    for index, notifications in enumerate(transcript.turns()):
        target = CodexTranslator(thread_id, usage_before=usage, pid=PID, clock=clock)
        # As the adapter does: session_started first on the session's first turn.
        events: list[AgentEvent] = [target.session_started()] if index == 0 else []
        for method, params in notifications:
            clock.now += 0.01
            events += target.feed(method, params)
        assert target.completed is not None, "each turn ends with its turn/completed"
        final, result = target.finish()
        all_events.append(events + final)
        results.append(result)
        usage = result.usage
    return Replayed(all_events, results)


@dataclass(frozen=True)
class Outcome:
    reasons: tuple[ExitReason, ...]
    kind: AdapterErrorKind | None = None
    retryable: bool | None = None
    message: str = ""


OUTCOMES = {
    "full-session-hi-dynamic-tool-shell": Outcome((ExitReason.COMPLETED,) * 3),
    "shell-command-nonzero-exit": Outcome((ExitReason.COMPLETED,)),
    "model-http-500-default-retries": Outcome(
        (ExitReason.FAILED,), AdapterErrorKind.TURN_FAILED, True, "[internalServerError]"
    ),
    "model-server-down-no-retries": Outcome(
        (ExitReason.FAILED,), AdapterErrorKind.TURN_FAILED, True, "[httpConnectionFailed]"
    ),
    "model-server-down-default-retries-interrupted": Outcome(
        (ExitReason.CANCELLED,), AdapterErrorKind.TURN_CANCELLED, False, "turn interrupted"
    ),
    "no-auth-builtin-openai-provider": Outcome(
        (ExitReason.FAILED,), AdapterErrorKind.RESPONSE_ERROR, False, "401 Unauthorized"
    ),
    "provider-env-key-missing": Outcome(
        (ExitReason.FAILED,),
        AdapterErrorKind.TURN_FAILED,
        True,
        "Missing environment variable: `FAKE_PROVIDER_API_KEY`.",
    ),
}


def test_every_transcript_has_an_expected_outcome(codex_transcripts: dict[str, Transcript]) -> None:
    assert set(OUTCOMES) == set(codex_transcripts)


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_replayed_transcripts_end_as_recorded(
    name: str, codex_transcripts: dict[str, Transcript]
) -> None:
    transcript = codex_transcripts[name]
    outcome = OUTCOMES[name]
    replayed = replay(transcript)
    assert tuple(r.exit_reason for r in replayed.results) == outcome.reasons
    recorded = tuple(transcript.meta.get("turn_statuses", ()))
    if recorded:
        statuses = {"completed": "completed", "failed": "failed", "interrupted": "cancelled"}
        assert tuple(statuses[s] for s in recorded) == tuple(r.value for r in outcome.reasons)
    last = replayed.results[-1]
    if outcome.kind is None:
        assert last.error is None
    else:
        assert last.error is not None
        assert (last.error.kind, last.error.retryable) == (outcome.kind, outcome.retryable)
        assert outcome.message in last.error.message
    for events in replayed.events:
        assert events[-1].type in (
            EventType.TURN_COMPLETED,
            EventType.TURN_FAILED,
            EventType.TURN_CANCELLED,
        )
        assert all(e.session_id == replayed.results[0].session_id for e in events)
    assert replayed.events[0][0].type is EventType.SESSION_STARTED


def test_the_full_session_replay(codex_transcripts: dict[str, Transcript]) -> None:
    replayed = replay(codex_transcripts["full-session-hi-dynamic-tool-shell"])
    usages = [result.usage for result in replayed.results]
    assert usages == [
        TokenUsage(input_tokens=120, output_tokens=12, cached_input_tokens=20),
        TokenUsage(input_tokens=360, output_tokens=36, cached_input_tokens=60),
        TokenUsage(input_tokens=600, output_tokens=60, cached_input_tokens=100),
    ]
    assert [r.reply for r in replayed.results][:2] == [
        "hi from fake responses model",
        "Tool returned: 42. Done.",
    ]
    first, second, third = replayed.events
    assert [e.type for e in first].count(EventType.SESSION_STARTED) == 1
    assert EventType.SESSION_STARTED not in [e.type for e in second + third]
    turn_ids = [t["params"]["turn"]["id"] for t in _turn_starts(codex_transcripts)]
    for events, turn_id in zip(replayed.events, turn_ids, strict=True):
        assert f"turn {turn_id} started" in [e.message for e in events]
    # The dynamic tool call is the adapter's to report; the mapper gives no tool_result.
    assert [e for e in second if e.type is EventType.TOOL_RESULT] == []
    assert "lookup_answer" in [e.tool_name for e in second]
    (shell,) = [e for e in third if e.type is EventType.TOOL_RESULT]
    assert (shell.tool_name, shell.tool_error) == ("commandExecution", False)
    assert shell.tool_duration_ms is not None
    assert shell.tool_duration_ms > 0
    for events in replayed.events:
        other = {e.raw_type for e in events if e.type is EventType.OTHER_MESSAGE}
        assert other <= {
            "thread/started",
            "thread/status/changed",
            "account/rateLimits/updated",
            "thread/readState/changed",
        }


def _turn_starts(codex_transcripts: dict[str, Transcript]) -> list[dict[str, Any]]:
    transcript = codex_transcripts["full-session-hi-dynamic-tool-shell"]
    return [m for d, m in transcript.rows if d == "in" and m.get("method") == "turn/started"]


def test_the_nonzero_exit_replay(codex_transcripts: dict[str, Transcript]) -> None:
    (events,) = replay(codex_transcripts["shell-command-nonzero-exit"]).events
    (shell,) = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert (shell.tool_name, shell.tool_error, shell.message) == (
        "commandExecution",
        True,
        "commandExecution failed",
    )
    assert events[-1].type is EventType.TURN_COMPLETED


@pytest.mark.parametrize(
    ("name", "retries"),
    [
        ("model-http-500-default-retries", 5),
        ("model-server-down-default-retries-interrupted", 5),
        ("no-auth-builtin-openai-provider", 9),
        ("model-server-down-no-retries", 0),
    ],
)
def test_retried_errors_are_notifications(
    name: str, retries: int, codex_transcripts: dict[str, Transcript]
) -> None:
    (events,) = replay(codex_transcripts[name]).events
    retrying = [e for e in events if e.message.startswith("retrying: ")]
    assert len(retrying) == retries
    assert all(e.type is EventType.NOTIFICATION for e in retrying)
    assert [e.type for e in events].count(EventType.TURN_FAILED) <= 1


def test_the_transcripts_speak_the_schema(
    codex_transcripts: dict[str, Transcript], codex_schemas: CodexSchemas
) -> None:
    """The schema subset describes what the real server sent (so the table tests,
    checked against it, use real shapes)."""
    for transcript in codex_transcripts.values():
        for direction, message in transcript.rows:
            if direction == "in" and "method" in message:
                problems = codex_schemas.problems_with_server_message(message)
                assert problems == [], f"{transcript.name} {message['method']}: {problems}"


def test_transcript_lines_are_json_rpc_without_the_version_field(
    codex_transcripts: dict[str, Transcript],
) -> None:
    for transcript in codex_transcripts.values():
        for direction, message in transcript.rows:
            assert direction in ("in", "out")
            if direction == "in":
                assert "jsonrpc" not in message
            json.dumps(message)
