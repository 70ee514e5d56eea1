"""The turn skeleton: the cancel reason, the adapter base, the translator base."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from copilot_driver.adapters.codex import CodexAdapter, CodexOptions, CodexSession
from copilot_driver.adapters.copilot_cli import CopilotCliAdapter, CopilotCliSession
from copilot_driver.adapters.core.agent_events import EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import AdapterConfig, ExitReason
from copilot_driver.adapters.core.turn import TURN_CANCELLED, TurnTranslator, cancelled
from copilot_driver.adapters.tool_loop import ToolLoopAdapter, ToolLoopOptions, ToolLoopSession
from copilot_driver.vocabulary import AdapterErrorKind


@pytest.mark.parametrize(
    ("cancel", "reason"),
    [
        (asyncio.CancelledError("stalled: no event for 300 s"), "stalled: no event for 300 s"),
        (asyncio.CancelledError(), TURN_CANCELLED),
        (asyncio.CancelledError(""), TURN_CANCELLED),
    ],
)
def test_a_cancelled_turn_reports_the_cancellers_reason(
    cancel: asyncio.CancelledError, reason: str
) -> None:
    error = cancelled(cancel)
    assert (error.kind, error.message, error.retryable) == (
        AdapterErrorKind.TURN_CANCELLED,
        reason,
        False,
    )


def test_the_generic_arguments_name_the_session_and_options_types() -> None:
    codex = CodexAdapter()
    assert (codex.session_type, codex.options_type) == (CodexSession, CodexOptions)
    tool_loop = ToolLoopAdapter(
        AdapterConfig(options={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    )
    assert (tool_loop.session_type, tool_loop.options_type) == (ToolLoopSession, ToolLoopOptions)
    assert isinstance(tool_loop.options, ToolLoopOptions)


def test_the_command_is_agent_command_else_the_kinds_default() -> None:
    assert CopilotCliAdapter().command == "copilot"
    assert CopilotCliAdapter(AdapterConfig(command="/opt/copilot")).command == "/opt/copilot"


async def test_run_turn_refuses_a_session_of_another_kind(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not a codex session"):
        await CodexAdapter().run_turn(
            CopilotCliSession(workspace=tmp_path), "hi", on_event=lambda event: None
        )


def test_the_translator_base_ends_turns_with_the_running_usage() -> None:
    translator = TurnTranslator("s-1", usage_before=TokenUsage(10, 1, model="m"))
    translator.turn_usage = TokenUsage(5, 2)
    translator.replies += ["one", "two"]

    (event,), result = translator.fail(AgentError(AdapterErrorKind.TURN_CANCELLED, "stopped"))
    assert (event.type, event.message, event.session_id) == (
        EventType.TURN_CANCELLED,
        "stopped",
        "s-1",
    )
    assert event.usage == TokenUsage(15, 3, model="m") == result.usage
    assert (result.exit_reason, result.reply) == (ExitReason.CANCELLED, "one\n\ntwo")

    completed, result = translator.complete(api_duration_ms=7)
    assert (completed.type, completed.api_duration_ms) == (EventType.TURN_COMPLETED, 7)
    assert result.exit_reason is ExitReason.COMPLETED


def test_a_reported_session_total_replaces_the_running_one() -> None:
    translator = TurnTranslator(usage_before=TokenUsage(100, 10, model="m"))
    translator.turn_usage = TokenUsage(1, 1)
    translator.replace_usage(TokenUsage(40, 4))
    assert translator.usage == TokenUsage(40, 4, model="m")
