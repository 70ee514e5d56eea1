"""The agentic loop: ask the model, run the tools it calls, repeat until it answers.

    for round in 1..max_rounds:
        stream the model's answer           -> TextDelta per text delta, CallUsage
        no tool calls: record it, FinalReply -> the turn's reply
        else for each call, in index order:
            ToolStart, run it, FileModified (a write or edit that succeeded), ToolDone
            append the role:tool result
    still calling tools after max_rounds    -> LoopFailed

It knows nothing of HTTP or of the domain events: the model is anything
with `complete()`, the events are the `LoopEvent` variants, handed to a
callback. `translate.py` turns them into domain events.

The conversation (`messages`) is the session's and is extended in place, so
a next turn continues it. It stays a valid chat history whatever happens:
an assistant message with tool calls is always followed by one `role: tool`
message per call, also when the turn is cancelled halfway through them.

Tools run in a worker thread, so a large file never blocks the event loop;
they run one at a time, in the order the model gave.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from copilot_driver.adapters.core.agent_events import TokenUsage, shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.tool_loop.stream import (
    Completion,
    Message,
    TokenCallback,
    ToolCallRequest,
)
from copilot_driver.adapters.tool_loop.tool_calls import ToolOutcome, path_argument
from copilot_driver.adapters.tool_loop.tools import Toolbox
from copilot_driver.vocabulary import AdapterErrorKind

DEFAULT_SYSTEM_PROMPT = (
    "You are a coding agent working on a software project. Use the tools to inspect and "
    "change the project's files: every path is relative to the project root, and nothing "
    "outside that root can be reached. Read a file before you edit it. When the work is "
    "done, reply with a short summary of what you changed, without calling a tool."
)
ARGS_SUMMARY_LIMIT = 120
RESULT_SUMMARY_LIMIT = 200
NOT_RUN = "error: not run: the turn was stopped before this call"
INTERRUPTED = "error: the turn was stopped while this call ran; its effect is unknown"


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's streamed text."""

    text: str


@dataclass(frozen=True)
class ToolStart:
    call_id: str
    name: str
    args_summary: str
    """The `path` argument when there is one, else the JSON, cut."""


@dataclass(frozen=True)
class ToolDone:
    call_id: str
    name: str
    result_summary: str
    is_error: bool
    duration_ms: int


@dataclass(frozen=True)
class FileModified:
    path: str
    """Relative to the project root."""


@dataclass(frozen=True)
class CallUsage:
    """The token counts of one model call (not cumulative)."""

    usage: TokenUsage


@dataclass(frozen=True)
class FinalReply:
    """The model answered without a tool call: the turn's reply; the loop ends."""

    reply: str
    rounds: int
    api_duration_ms: int


@dataclass(frozen=True)
class LoopFailed:
    """A model call failed, or the round cap was reached; the loop ends."""

    error: AgentError
    rounds: int
    api_duration_ms: int

    @property
    def message(self) -> str:
        return self.error.message


LoopEvent = TextDelta | ToolStart | ToolDone | FileModified | CallUsage | FinalReply | LoopFailed
EmitCallback = Callable[[LoopEvent], None]


class ChatModel(Protocol):
    async def complete(
        self, messages: Sequence[Message], on_token: TokenCallback
    ) -> Completion: ...


async def agentic_loop(
    model: ChatModel,
    toolbox: Toolbox,
    messages: list[Message],
    *,
    max_rounds: int,
    emit: EmitCallback,
) -> None:
    """Run rounds on `messages` (extended in place) until FinalReply or LoopFailed is emitted.

    Raises nothing but CancelledError: a failed model call is a LoopFailed event,
    a failed tool is an error result the model sees.
    """
    api_ms = 0.0

    def on_token(text: str) -> None:
        emit(TextDelta(text))

    for round_number in range(1, max_rounds + 1):
        started = time.monotonic()
        try:
            completion = await model.complete(messages, on_token)
        except AgentError as error:
            api_ms += time.monotonic() - started
            emit(LoopFailed(error, round_number, round(api_ms * 1000)))
            return
        api_ms += time.monotonic() - started
        if completion.usage is not None:
            emit(CallUsage(completion.usage))
        if not completion.tool_calls:
            messages.append({"role": "assistant", "content": completion.text})
            emit(FinalReply(completion.text, round_number, round(api_ms * 1000)))
            return
        calls = _with_ids(completion.tool_calls, round_number)
        messages.append(_assistant_message(completion.text, calls))
        await _run_tools(toolbox, calls, messages, emit)
    cap = AgentError(
        AdapterErrorKind.TURN_FAILED,
        f"the model was still calling tools after {max_rounds} rounds (max_rounds); "
        "the turn was stopped without a final answer",
        retryable=False,
    )
    emit(LoopFailed(cap, max_rounds, round(api_ms * 1000)))


async def _run_tools(
    toolbox: Toolbox,
    calls: Sequence[ToolCallRequest],
    messages: list[Message],
    emit: EmitCallback,
) -> None:
    answered = 0
    try:
        for call in calls:
            emit(ToolStart(call.id, call.name, args_summary(call.arguments)))
            started = time.monotonic()
            outcome: ToolOutcome = await asyncio.to_thread(
                toolbox.execute, call.name, call.arguments
            )
            duration_ms = round((time.monotonic() - started) * 1000)
            messages.append(_tool_message(call.id, outcome.result))
            answered += 1
            if outcome.modified is not None and not outcome.is_error:
                emit(FileModified(outcome.modified))
            emit(
                ToolDone(
                    call.id,
                    call.name,
                    result_summary(outcome.result),
                    outcome.is_error,
                    duration_ms,
                )
            )
    finally:
        # Cancelled halfway: every call still gets its answer, so the history stays valid.
        for index, call in enumerate(calls[answered:]):
            messages.append(_tool_message(call.id, INTERRUPTED if index == 0 else NOT_RUN))


def args_summary(arguments: str) -> str:
    """What a call is about, for display: its `path`, else its arguments squeezed to one line."""
    path = path_argument(arguments)
    if path is not None:
        return shorten(path, ARGS_SUMMARY_LIMIT)
    squeezed = " ".join(arguments.split())
    return "" if squeezed in ("", "{}") else shorten(squeezed, ARGS_SUMMARY_LIMIT)


def result_summary(result: str) -> str:
    """The result's first line (whitespace squeezed), and how many lines follow."""
    lines = result.strip().splitlines()
    if not lines:
        return ""
    first = " ".join(lines[0].split())
    more = len(lines) - 1
    summary = f"{first} (+{more} more line{'s' if more != 1 else ''})" if more else first
    return shorten(summary, RESULT_SUMMARY_LIMIT)


def _with_ids(calls: Sequence[ToolCallRequest], round_number: int) -> list[ToolCallRequest]:
    """Every call with an id (a server that sends none still needs tool results to match)."""
    return [
        call if call.id else ToolCallRequest(f"call_{round_number}_{i}", call.name, call.arguments)
        for i, call in enumerate(calls)
    ]


def _assistant_message(text: str, calls: Sequence[ToolCallRequest]) -> Message:
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ],
    }


def _tool_message(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
