"""Copilot CLI JSON Lines -> domain events, and the turn's outcome (pure).

`CopilotCliTranslator` sees one turn: every stdout line in order, then the
process's exit status. It never raises on input: a line that is not a JSON
object is a `malformed` event, an unknown event type is an `other_message`,
a field of the wrong type is ignored. CLI versions change their stream; a
translator that crashes on a new shape loses the whole turn.

Token accounting: output tokens from `assistant.message.outputTokens` (and
`assistant.usage`, when the CLI emits it) add up while the turn runs; when
the CLI's `--usage-output-file` report is available at the end it replaces
them, as it is the only place with input and cached token counts. (Measured
on CLI 1.0.102: after `--resume`/`--continue` that report holds the whole
session's totals, so it then replaces the session's running total.)
"""

from __future__ import annotations

import json
import logging
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage, shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.payload import (
    as_count,
    as_int_or_none,
    as_list,
    as_mapping,
    as_str,
)
from copilot_driver.adapters.core.session import TurnResult
from copilot_driver.adapters.core.ssh import EXIT_COMMAND_NOT_FOUND, SSH_EXIT_CONNECTION_FAILED
from copilot_driver.adapters.core.turn import Handler, TurnTranslator
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

_DEBUG_ONLY = frozenset(
    {
        "session.mcp_server_status_changed",
        "session.mcp_servers_loaded",
        "session.tools_updated",
        "user.message",
    }
)


@dataclass(frozen=True)
class ResultLine:
    """The CLI's last line: `{type: result, sessionId, exitCode, usage}`."""

    session_id: str
    exit_code: int | None
    """None when the line has none; the process's exit status decides then."""
    api_duration_ms: int | None = None
    premium_requests: int | None = None
    session_duration_ms: int | None = None
    files_modified: tuple[str, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> ResultLine:
        usage = as_mapping(raw.get("usage"))
        changes = as_mapping(usage.get("codeChanges"))
        files = changes.get("filesModified")
        return cls(
            session_id=as_str(raw.get("sessionId")),
            exit_code=as_int_or_none(raw.get("exitCode")),
            api_duration_ms=as_int_or_none(usage.get("totalApiDurationMs")),
            premium_requests=as_int_or_none(usage.get("premiumRequests")),
            session_duration_ms=as_int_or_none(usage.get("sessionDurationMs")),
            files_modified=tuple(f for f in files if isinstance(f, str))
            if isinstance(files, list)
            else (),
        )


def usage_from_report(report: Any) -> TokenUsage | None:
    """Token totals from the CLI's `--usage-output-file` JSON, if it has any."""
    metrics = as_mapping(as_mapping(report).get("modelMetrics"))
    if not metrics:
        return None
    total = TokenUsage()
    for model, metric in metrics.items():
        usage = as_mapping(as_mapping(metric).get("usage"))
        total = total + TokenUsage(
            input_tokens=as_count(usage.get("inputTokens")),
            output_tokens=as_count(usage.get("outputTokens")),
            cached_input_tokens=as_count(usage.get("cacheReadTokens")),
            model=str(model) if len(metrics) == 1 else "",
        )
    return total


@dataclass
class CopilotCliTranslator(TurnTranslator):
    agent_name: str = "copilot"
    report_covers_session: bool = False
    """True when the turn resumed an existing CLI session: the CLI's usage
    report then holds the whole session's totals, not just this turn's."""
    ssh_host: str | None = None
    clock: Callable[[], float] = time.monotonic

    result: ResultLine | None = None
    last_error: str | None = None
    _in_flight: dict[str, tuple[str, float]] = field(default_factory=dict)

    # -- stdout ------------------------------------------------------------

    def feed(self, line: str) -> list[AgentEvent]:
        if not line.strip():
            return []
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            raw = None
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            return [self.event(EventType.MALFORMED, line)]
        kind: str = raw["type"]
        data = as_mapping(raw.get("data"))
        if kind == "result":
            self.result = ResultLine.parse(raw)
            if self.result.session_id:
                self.session_id = self.result.session_id
            return []
        return self.dispatch(kind, data, _HANDLERS, debug_only=_DEBUG_ONLY)

    def overflow(self, size: int) -> list[AgentEvent]:
        return [
            self.event(
                EventType.MALFORMED,
                f"stdout line of {size} bytes exceeds the line limit and was skipped",
            )
        ]

    def _message_delta(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        return [self.event(EventType.NOTIFICATION, as_str(data.get("deltaContent")))]

    def _message(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        content = as_str(data.get("content"))
        if content.strip():
            self.replies.append(content)
        self.turn_usage = self.turn_usage + TokenUsage(
            output_tokens=as_count(data.get("outputTokens"))
        )
        tools = [
            as_str(as_mapping(request).get("name")) or "?"
            for request in as_list(data.get("toolRequests"))
            if isinstance(request, dict)
        ]
        summary = content.strip()
        if tools:
            summary = f"{summary} [tool requests: {', '.join(tools)}]".strip()
        return [
            self.event(EventType.TOKEN_USAGE, usage=self.usage),
            self.event(EventType.NOTIFICATION, summary),
        ]

    def _usage(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        self.turn_usage = self.turn_usage + TokenUsage(
            input_tokens=as_count(data.get("inputTokens")),
            output_tokens=as_count(data.get("outputTokens")),
            cached_input_tokens=as_count(data.get("cacheReadTokens")),
            model=as_str(data.get("model")),
        )
        return [self.event(EventType.TOKEN_USAGE, usage=self.usage)]

    def _turn_boundary(self, data: Mapping[str, Any], what: str) -> list[AgentEvent]:
        turn = as_str(data.get("turnId"))
        return [
            self.event(EventType.NOTIFICATION, f"assistant turn {turn} {what}".replace("  ", " "))
        ]

    def _tool_start(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        name = as_str(data.get("toolName")) or "unknown"
        call_id = as_str(data.get("toolCallId"))
        if call_id:
            self._in_flight[call_id] = (name, self.clock())
        return [self.event(EventType.NOTIFICATION, f"tool {name} started", tool_name=name)]

    def _tool_complete(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        started = self._in_flight.pop(as_str(data.get("toolCallId")), None)
        name = started[0] if started else (as_str(data.get("toolName")) or None)
        duration = round((self.clock() - started[1]) * 1000) if started else None
        failed = data.get("success") is not True
        message = f"tool {name or 'unknown'} {'failed' if failed else 'succeeded'}"
        error = as_str(as_mapping(data.get("error")).get("message"))
        if failed and error:
            message += f": {error}"
        return [
            self.event(
                EventType.TOOL_RESULT,
                message,
                tool_name=name,
                tool_duration_ms=duration,
                tool_error=failed,
            )
        ]

    def _text(self, data: Mapping[str, Any], key: str, *, warn: bool = False) -> list[AgentEvent]:
        text = as_str(data.get(key))
        if warn:
            log.warning("copilot warning: %s", shorten(text))
        return [self.event(EventType.NOTIFICATION, text)]

    def _session_error(self, data: Mapping[str, Any]) -> list[AgentEvent]:
        self.last_error = (
            as_str(data.get("message")) or as_str(data.get("errorType")) or "session error"
        )
        return [self.event(EventType.NOTIFICATION, f"error: {self.last_error}")]

    # -- the end of the turn ----------------------------------------------

    def finish(
        self, returncode: int, *, stderr: str = "", usage_report: Any = None
    ) -> tuple[list[AgentEvent], TurnResult]:
        """The turn's last events and result, from the exit status and the result line."""
        events: list[AgentEvent] = []
        reported = usage_from_report(usage_report) if usage_report is not None else None
        if reported is not None:
            if self.report_covers_session:
                self.replace_usage(reported)
            else:
                self.turn_usage = reported
            events.append(self.event(EventType.TOKEN_USAGE, usage=self.usage))
        api_ms = self.result.api_duration_ms if self.result else None

        if returncode < 0:
            name = _signal_name(-returncode)
            return self._end(
                events, AdapterErrorKind.TURN_CANCELLED, f"{self.agent_name} was stopped by {name}"
            )
        if returncode == EXIT_COMMAND_NOT_FOUND:
            where = f"on {self.ssh_host}" if self.ssh_host else "on PATH"
            return self._end(
                events,
                AdapterErrorKind.AGENT_NOT_FOUND,
                f"{self.agent_name} not found {where} (exit 127){_detail(stderr)}",
            )
        if self.ssh_host and returncode == SSH_EXIT_CONNECTION_FAILED:
            return self._end(
                events,
                AdapterErrorKind.PORT_EXIT,
                f"ssh to {self.ssh_host} failed (exit 255){_detail(stderr)}",
            )
        result_code = self.result.exit_code if self.result else None
        if self.result is not None and (result_code or returncode):
            code = result_code or returncode
            cause = self.last_error or _first_error_line(stderr) or "no error message"
            return self._end(
                events,
                AdapterErrorKind.TURN_FAILED,
                f"{self.agent_name} reported exit code {code}: {cause}",
                api_ms=api_ms,
            )
        if self.result is None and returncode != 0:
            return self._end(
                events,
                AdapterErrorKind.PORT_EXIT,
                f"{self.agent_name} exited with status {returncode} before reporting a result"
                f"{_detail(stderr)}",
            )
        final, result = self.complete(api_duration_ms=api_ms)
        return [*events, final], result

    def _end(
        self,
        events: list[AgentEvent],
        kind: AdapterErrorKind,
        message: str,
        *,
        api_ms: int | None = None,
    ) -> tuple[list[AgentEvent], TurnResult]:
        final, result = self.fail(AgentError(kind, message), api_duration_ms=api_ms)
        return events + final, result


_HANDLERS: dict[str, Handler] = {
    "assistant.message_delta": CopilotCliTranslator._message_delta,
    "assistant.message": CopilotCliTranslator._message,
    "assistant.usage": CopilotCliTranslator._usage,
    "assistant.turn_start": lambda p, d: p._turn_boundary(d, "started"),
    "assistant.turn_end": lambda p, d: p._turn_boundary(d, "ended"),
    "tool.execution_start": CopilotCliTranslator._tool_start,
    "tool.execution_complete": CopilotCliTranslator._tool_complete,
    "session.warning": lambda p, d: p._text(d, "message", warn=True),
    "session.info": lambda p, d: p._text(d, "message"),
    "session.task_complete": lambda p, d: p._text(d, "summary"),
    "session.error": CopilotCliTranslator._session_error,
}


def _first_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith("error"):
            return line
    return lines[-1] if lines else ""


def _detail(stderr: str) -> str:
    line = _first_error_line(stderr)
    return f": {shorten(line, 300)}" if line else ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
