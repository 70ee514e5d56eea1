"""Codex app-server notifications -> domain events, and failure classes (pure).

`CodexTranslator` sees the notifications of one turn in order. It never
raises on input: wrong types are ignored, unknown methods become
`other_message`. As the app-server (0.169) sends them: usage arrives in
`thread/tokenUsage/updated` (`tokenUsage.total` is the thread's running
total), not in `turn/completed`; `codexErrorInfo` is camelCase, a string or
a one-key object; mid-turn failures also arrive as `error` notifications,
retried ones with `willRetry: true`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage, shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.payload import as_count, as_list, as_mapping, as_str
from copilot_driver.adapters.core.session import TurnResult
from copilot_driver.adapters.core.turn import Handler, TurnTranslator
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

TOOL_ITEMS = frozenset({"commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall"})
REPORTED_BY_ADAPTER = frozenset({"dynamicToolCall"})
"""Tool items whose `tool_result` the adapter emits itself, from the `item/tool/call`
it answered (it knows the error text); the item's completion is only a notification."""
AGENT_MESSAGE_LIMIT = 200

_DEBUG_ONLY = frozenset({"turn/diff/updated", "thread/started"})
"""`thread/started` says what `session_started` already says."""

# codexErrorInfo -> (kind, retryable); anything else is a retryable turn_failed.
_FAILURES: dict[str, tuple[AdapterErrorKind, bool]] = {
    "unauthorized": (AdapterErrorKind.RESPONSE_ERROR, False),
    "badRequest": (AdapterErrorKind.RESPONSE_ERROR, False),
    "contextWindowExceeded": (AdapterErrorKind.TURN_FAILED, False),
    "usageLimitExceeded": (AdapterErrorKind.TURN_FAILED, False),
    "sandboxError": (AdapterErrorKind.TURN_FAILED, False),
    "httpConnectionFailed": (AdapterErrorKind.TURN_FAILED, True),
    "responseStreamConnectionFailed": (AdapterErrorKind.TURN_FAILED, True),
    "responseStreamDisconnected": (AdapterErrorKind.TURN_FAILED, True),
    "responseTooManyFailedAttempts": (AdapterErrorKind.TURN_FAILED, True),
    "internalServerError": (AdapterErrorKind.TURN_FAILED, True),
    "other": (AdapterErrorKind.TURN_FAILED, True),
}
_AUTH_STATUSES = frozenset({401, 403})


def error_info_name(info: Any) -> tuple[str, Mapping[str, Any]]:
    """`"contextWindowExceeded"` or `{"httpConnectionFailed": {...}}` -> (name, details)."""
    if isinstance(info, str):
        return info, {}
    if isinstance(info, dict) and len(info) == 1:
        ((name, details),) = info.items()
        return str(name), details if isinstance(details, dict) else {}
    return "", {}


def classify_failure(info: Any) -> tuple[AdapterErrorKind, bool]:
    """The error kind and retry hint of a failed turn's `codexErrorInfo`.

    An HTTP 401/403 behind a connection failure is a credential problem:
    a retry cannot fix it.
    """
    name, details = error_info_name(info)
    name = name[:1].lower() + name[1:]  # PascalCase spellings name the same failures
    if details.get("httpStatusCode") in _AUTH_STATUSES:
        return AdapterErrorKind.RESPONSE_ERROR, False
    return _FAILURES.get(name, (AdapterErrorKind.TURN_FAILED, True))


def usage_from(token_usage: Any) -> TokenUsage | None:
    total = as_mapping(as_mapping(token_usage).get("total"))
    if not total:
        return None
    return TokenUsage(
        input_tokens=as_count(total.get("inputTokens")),
        output_tokens=as_count(total.get("outputTokens")),
        cached_input_tokens=as_count(total.get("cachedInputTokens")),
    )


@dataclass
class CodexTranslator(TurnTranslator):
    """One turn of a Codex thread; the session id is the thread id."""

    agent_name: str = "codex"
    pid: int | None = None
    clock: Callable[[], float] = time.monotonic

    turn_id: str = ""
    completed: Mapping[str, Any] | None = None
    """The `turn` of this turn's `turn/completed`, once it arrived."""
    last_error: str | None = None
    input_required: bool = False
    _in_flight: dict[str, tuple[str, float]] = field(default_factory=dict)

    def feed(self, method: str, params: Any) -> list[AgentEvent]:
        return self.dispatch(method, as_mapping(params), _HANDLERS, debug_only=_DEBUG_ONLY)

    def _turn_started(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        turn_id = as_str(as_mapping(data.get("turn")).get("id"))
        if turn_id and not self.turn_id:
            self.turn_id = turn_id
        return [self.event(EventType.NOTIFICATION, f"turn {turn_id} started")]

    def session_started(self) -> AgentEvent:
        """The first event of a session's first turn (emitted by the adapter before
        `turn/start`, so it comes first whatever Codex notifies meanwhile)."""
        pid = f", pid {self.pid}" if self.pid else ""
        return self.event(EventType.SESSION_STARTED, f"codex thread {self.session_id}{pid}")

    def _turn_completed(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        turn = as_mapping(data.get("turn"))
        if self.turn_id and as_str(turn.get("id")) not in ("", self.turn_id):
            return [self.event(EventType.OTHER_MESSAGE, "turn/completed of another turn")]
        self.completed = turn
        return []

    def _plan(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        steps = [
            as_str(as_mapping(step).get("step"))
            for step in as_list(data.get("plan"))
            if isinstance(step, dict)
        ]
        return [self.event(EventType.NOTIFICATION, "plan: " + "; ".join(s for s in steps if s))]

    def _item_started(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        item = as_mapping(data.get("item"))
        kind = as_str(item.get("type")) or "item"
        if kind in TOOL_ITEMS:
            name = _tool_name(item)
            if kind not in REPORTED_BY_ADAPTER:
                self._in_flight[as_str(item.get("id"))] = (name, self.clock())
            return [self.event(EventType.NOTIFICATION, _tool_summary(item), tool_name=name)]
        return [self.event(EventType.NOTIFICATION, f"{kind} started")]

    def _item_completed(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        item = as_mapping(data.get("item"))
        kind = as_str(item.get("type"))
        started = self._in_flight.pop(as_str(item.get("id")), None)
        if started is not None:
            name, at = started
            failed = _item_failed(item)
            return [
                self.event(
                    EventType.TOOL_RESULT,
                    f"{name} {'failed' if failed else 'completed'}",
                    tool_name=name,
                    tool_duration_ms=round((self.clock() - at) * 1000),
                    tool_error=failed,
                )
            ]
        if kind == "agentMessage":
            text = as_str(item.get("text"))
            if text:
                self.replies.append(text)
                return [self.event(EventType.NOTIFICATION, shorten(text, AGENT_MESSAGE_LIMIT))]
        return [self.event(EventType.NOTIFICATION, f"{kind or 'item'} completed")]

    def _progress(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        return [self.event(EventType.NOTIFICATION)]

    def _token_usage(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        usage = usage_from(data.get("tokenUsage"))
        if usage is None:
            return []
        self.replace_usage(usage)
        return [self.event(EventType.TOKEN_USAGE, usage=self.usage)]

    def _error(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        error = as_mapping(data.get("error"))
        message = as_str(error.get("message")) or "error"
        details = as_str(error.get("additionalDetails"))
        text = f"{message} ({details})" if details and details not in message else message
        if data.get("willRetry") is True:
            return [self.event(EventType.NOTIFICATION, f"retrying: {text}")]
        self.last_error = text
        return [self.event(EventType.NOTIFICATION, f"error: {text}")]

    def _warning(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        text = as_str(data.get("summary")) or as_str(data.get("message")) or "warning"
        log.warning("codex: %s", shorten(text, 300))
        return [self.event(EventType.NOTIFICATION, f"warning: {text}")]

    # -- the end of the turn ----------------------------------------------

    def finish(self) -> tuple[list[AgentEvent], TurnResult]:
        """The final events and result, once `turn/completed` arrived."""
        turn = self.completed or {}
        status = as_str(turn.get("status"))
        usage_event = self.event(EventType.TOKEN_USAGE, usage=self.usage)
        if status == "completed":
            final, result = self.complete()
            return [usage_event, final], result
        if status == "interrupted":
            events, result = self.fail(
                AgentError(AdapterErrorKind.TURN_CANCELLED, "turn interrupted")
            )
            return [usage_event, *events], result
        error = as_mapping(turn.get("error"))
        message = as_str(error.get("message")) or self.last_error or f"turn ended as {status!r}"
        kind, retryable = classify_failure(error.get("codexErrorInfo"))
        if self.input_required:
            kind, retryable = AdapterErrorKind.TURN_INPUT_REQUIRED, False
        info, _ = error_info_name(error.get("codexErrorInfo"))
        if info:
            message = f"{message} [{info}]"
        final_events, result = self.fail(AgentError(kind, message, retryable=retryable))
        return [usage_event, *final_events], result


_HANDLERS: dict[str, Handler] = {
    "turn/started": CodexTranslator._turn_started,
    "turn/completed": CodexTranslator._turn_completed,
    "turn/plan/updated": CodexTranslator._plan,
    "item/started": CodexTranslator._item_started,
    "item/completed": CodexTranslator._item_completed,
    "item/agentMessage/delta": CodexTranslator._progress,
    "item/commandExecution/outputDelta": CodexTranslator._progress,
    "thread/tokenUsage/updated": CodexTranslator._token_usage,
    "error": CodexTranslator._error,
    "warning": CodexTranslator._warning,
    "configWarning": CodexTranslator._warning,
}


def _tool_name(item: Mapping[str, Any]) -> str:
    kind = as_str(item.get("type"))
    if kind == "dynamicToolCall":
        return as_str(item.get("tool")) or "dynamicToolCall"
    if kind == "mcpToolCall":
        server, tool = as_str(item.get("server")), as_str(item.get("tool"))
        return f"{server}/{tool}" if server and tool else tool or "mcpToolCall"
    return kind


def _tool_summary(item: Mapping[str, Any]) -> str:
    if item.get("type") == "commandExecution":
        return f"command started: {as_str(item.get('command'))}"
    if item.get("type") == "fileChange":
        paths = [as_str(as_mapping(c).get("path")) for c in as_list(item.get("changes"))]
        return "file change started: " + ", ".join(p for p in paths if p)
    return f"tool {_tool_name(item)} started"


def _item_failed(item: Mapping[str, Any]) -> bool:
    if item.get("success") is False:
        return True
    if as_str(item.get("status")) in ("failed", "declined"):
        return True
    exit_code = item.get("exitCode")
    return isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0
