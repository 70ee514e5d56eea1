"""The loop's events -> domain events, and the turn's result (pure).

| loop event | AgentEvent |
|---|---|
| (turn start) | `session_started` |
| `TextDelta` | `notification`, the text batched by line (at most ~200 characters each) |
| `ToolStart` | `notification` "tool NAME started: PATH", with `tool_name` |
| `ToolDone` | `tool_result` with `tool_name`, `tool_duration_ms`, `tool_error` |
| `FileModified` | `notification` "file modified: PATH", with `tool_name` |
| `CallUsage` | `token_usage`, the session's running totals |
| `FinalReply` | `turn_completed` (message: the reply, cut), `api_duration_ms` |
| `LoopFailed` | `turn_failed` with the AgentError's kind |
| (cancelled) | `turn_cancelled` with the reason |

Text arrives a few characters per delta; one event per delta would make
the JSON Lines output mostly noise, so it is gathered until a line ends,
~200 characters pile up, or another event comes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import TurnResult
from copilot_driver.adapters.core.turn import TurnTranslator
from copilot_driver.adapters.tool_loop.loop import (
    CallUsage,
    FileModified,
    FinalReply,
    LoopEvent,
    LoopFailed,
    TextDelta,
    ToolDone,
    ToolStart,
)

TEXT_BATCH_CHARS = 200

_RAW_TYPES = {
    ToolStart: "tool.start",
    ToolDone: "tool.done",
    FileModified: "file.modified",
    CallUsage: "usage",
    FinalReply: "done",
    LoopFailed: "error",
}


@dataclass
class ToolLoopTranslator(TurnTranslator):
    """Translates one turn's loop events; holds the running usage and the outcome."""

    model: str = ""
    """The configured model, for usage counts whose chunk named none."""
    result: TurnResult | None = None
    """The turn's result, once the loop ended it (or `fail` did)."""
    _text: list[str] = field(default_factory=list)

    def started(self, message: str) -> list[AgentEvent]:
        return [self.event(EventType.SESSION_STARTED, message)]

    def feed(self, item: LoopEvent) -> list[AgentEvent]:
        if isinstance(item, TextDelta):
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
        elif isinstance(item, CallUsage):
            usage = item.usage
            if not usage.model:
                usage = TokenUsage(
                    usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, self.model
                )
            self.turn_usage = self.turn_usage + usage
            events.append(self.event(EventType.TOKEN_USAGE, usage=self.usage, raw_type=raw))
        elif isinstance(item, FinalReply):
            self.replies.append(item.reply)
            final, self.result = self.complete(
                item.reply.strip() or "turn completed",
                api_duration_ms=item.api_duration_ms,
                raw_type=raw,
            )
            events.append(final)
        else:
            final_events, _ = self.fail(
                item.error, api_duration_ms=item.api_duration_ms, raw_type=raw
            )
            events += final_events
        return events

    def flush(self) -> list[AgentEvent]:
        """The text gathered so far, as one notification (none when there is none)."""
        text = "".join(self._text)
        self._text.clear()
        if not text.strip():
            return []
        return [self.event(EventType.NOTIFICATION, text, raw_type="assistant.delta")]

    def fail(self, error: AgentError, **fields: Any) -> tuple[list[AgentEvent], TurnResult]:
        """The gathered text, then the final event of a turn that ended with `error`."""
        pending = self.flush()
        events, self.result = super().fail(error, **fields)
        return pending + events, self.result
