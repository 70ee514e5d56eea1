"""The loop's StreamEvents -> the adapters' normalised events, and the turn's result (pure).

| loop event | AgentEvent |
|---|---|
| (turn start) | `session_started` |
| `Token` | `notification`, the text batched by line (at most ~200 characters each) |
| `ToolStart` | `notification` "tool NAME started: PATH", with `tool_name` |
| `ToolDone` | `tool_result` with `tool_name`, `tool_duration_ms`, `tool_error` |
| `FileModified` | `notification` "file modified: PATH", with `tool_name` |
| `Usage` | `token_usage`, the session's running totals |
| `Done` | `turn_completed` (message: the reply, cut), `api_duration_ms` |
| `Error` | `turn_failed` with the AgentError's kind |
| (cancelled) | `turn_cancelled` with the reason |

Text arrives a few characters per delta; one event per delta would make
the JSON Lines output mostly noise, so it is gathered until a line ends,
~200 characters pile up, or another event comes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copilot_driver.adapters.core.errors import AgentError, ErrorKind
from copilot_driver.adapters.core.events import AgentEvent, EventType, TokenUsage, shorten
from copilot_driver.adapters.core.session import ExitReason, TurnResult
from copilot_driver.adapters.tool_loop.loop import (
    Done,
    Error,
    FileModified,
    StreamEvent,
    Token,
    ToolDone,
    ToolStart,
    Usage,
)

TEXT_BATCH_CHARS = 200

_RAW_TYPES = {
    ToolStart: "tool.start",
    ToolDone: "tool.done",
    FileModified: "file.modified",
    Usage: "usage",
    Done: "done",
    Error: "error",
}


@dataclass
class TurnEvents:
    """Maps one turn's loop events; holds the running usage and the outcome."""

    session_id: str
    usage_before: TokenUsage = field(default_factory=TokenUsage)
    """The session's totals before this turn; events report running totals."""
    model: str = ""
    """The configured model, for usage counts whose chunk named none."""

    turn_usage: TokenUsage = field(default_factory=TokenUsage)
    result: TurnResult | None = None
    _text: list[str] = field(default_factory=list)

    @property
    def usage(self) -> TokenUsage:
        return self.usage_before + self.turn_usage

    def event(self, type_: EventType, message: str = "", **fields: Any) -> AgentEvent:
        return AgentEvent(type_, session_id=self.session_id, message=shorten(message), **fields)

    def started(self, message: str) -> list[AgentEvent]:
        return [self.event(EventType.SESSION_STARTED, message)]

    def feed(self, item: StreamEvent) -> list[AgentEvent]:
        if isinstance(item, Token):
            self._text.append(item.text)
            text = "".join(self._text)
            if "\n" in item.text or len(text) >= TEXT_BATCH_CHARS:
                return self.flush()
            return []
        events = self.flush()
        raw = _RAW_TYPES[type(item)]
        if isinstance(item, ToolStart):
            message = f"tool {item.name} started"
            if item.args_summary:
                message += f": {item.args_summary}"
            events.append(
                self.event(EventType.NOTIFICATION, message, tool_name=item.name, raw_type=raw)
            )
        elif isinstance(item, ToolDone):
            outcome = "failed" if item.is_error else "succeeded"
            summary = item.result_summary.removeprefix("error: ")
            events.append(
                self.event(
                    EventType.TOOL_RESULT,
                    f"tool {item.name} {outcome}: {summary}"
                    if summary
                    else f"tool {item.name} {outcome}",
                    tool_name=item.name,
                    tool_duration_ms=item.duration_ms,
                    tool_error=item.is_error,
                    raw_type=raw,
                )
            )
        elif isinstance(item, FileModified):
            events.append(
                self.event(
                    EventType.NOTIFICATION,
                    f"file modified: {item.path}",
                    raw_type=raw,
                )
            )
        elif isinstance(item, Usage):
            usage = item.usage
            if not usage.model:
                usage = TokenUsage(
                    usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, self.model
                )
            self.turn_usage = self.turn_usage + usage
            events.append(self.event(EventType.TOKEN_USAGE, usage=self.usage, raw_type=raw))
        elif isinstance(item, Done):
            events.append(
                self.event(
                    EventType.TURN_COMPLETED,
                    item.reply.strip() or "turn completed",
                    usage=self.usage,
                    api_duration_ms=item.api_duration_ms,
                    raw_type=raw,
                )
            )
            self.result = TurnResult(
                session_id=self.session_id,
                exit_reason=ExitReason.COMPLETED,
                usage=self.usage,
                reply=item.reply,
                api_duration_ms=item.api_duration_ms,
            )
        else:
            events += self.fail(item.error, api_duration_ms=item.api_duration_ms, raw_type=raw)
        return events

    def flush(self) -> list[AgentEvent]:
        """The text gathered so far, as one notification (none when there is none)."""
        text = "".join(self._text)
        self._text.clear()
        if not text.strip():
            return []
        return [self.event(EventType.NOTIFICATION, text, raw_type="assistant.delta")]

    def fail(
        self,
        error: AgentError,
        *,
        api_duration_ms: int | None = None,
        raw_type: str | None = None,
    ) -> list[AgentEvent]:
        """The final event of a turn that ended with `error` (cancelled or failed)."""
        events = self.flush()
        cancelled = error.kind is ErrorKind.TURN_CANCELLED
        events.append(
            self.event(
                EventType.TURN_CANCELLED if cancelled else EventType.TURN_FAILED,
                error.message,
                error_kind=error.kind,
                usage=self.usage,
                api_duration_ms=api_duration_ms,
                raw_type=raw_type,
            )
        )
        self.result = TurnResult(
            session_id=self.session_id,
            exit_reason=ExitReason.CANCELLED if cancelled else ExitReason.FAILED,
            usage=self.usage,
            error=error,
            api_duration_ms=api_duration_ms,
        )
        return events
