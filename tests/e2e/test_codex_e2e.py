"""The codex adapter on the real `codex app-server` (0.169.0), offline.

Codex speaks the Responses API to the project's scripted model on
127.0.0.1 (`copilot_driver.testing.codex` writes the config that keeps it
there: no retries, no plugins, apps or analytics).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.adapters import (
    AdapterConfig,
    AdapterErrorKind,
    AgentEvent,
    EventType,
    ExitReason,
    RunnerLimits,
    TurnResult,
    TurnRunner,
    get_adapter,
)
from copilot_driver.adapters.codex import CodexSession
from copilot_driver.adapters.core.tools import DynamicTool, ToolOutput
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.codex import PROVIDER_KEY, codex_environment
from copilot_driver.testing.fixtures import run_adapters
from helpers.workspaces import workspace_fixture

pytestmark = pytest.mark.e2e

SCHEMA = Path(__file__).parents[1] / "data" / "codex-app-server" / "schema"

SCRIPT = Script(
    rules=(
        Rule(
            "CALLDYN",
            (
                Reply(tool_calls=(ToolCall("lookup_answer", {"question": "meaning of life"}),)),
                Reply(text="The tool said 42."),
            ),
        ),
        Rule(
            "RUNSHELL",
            (
                Reply(
                    tool_calls=(
                        ToolCall("exec_command", {"cmd": "echo codex-marker > marker.txt"}),
                    )
                ),
                Reply(text="The marker is written."),
            ),
        ),
        Rule("BROKEN", (Reply(http_status=500),)),
        Rule("SLOW", (Reply(text="too late", delay_s=120),)),
        Rule("REMEMBER", (Reply(text="I remember."),)),
    ),
    default=Reply(text="Hello from the scripted Responses model."),
)


async def _lookup(arguments: Any) -> ToolOutput:
    question = arguments.get("question") if isinstance(arguments, dict) else None
    return ToolOutput(f"42 (asked: {question})")


LOOKUP = DynamicTool(
    "lookup_answer",
    "Look up the answer to a question.",
    _lookup,
    {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]},
)


@pytest.fixture
def model(scripted_model: ScriptedModelServer) -> ScriptedModelServer:
    scripted_model.script = SCRIPT
    return scripted_model


workspace = workspace_fixture(git=True)


@pytest.fixture
def codex_env(tmp_path: Path, codex_cli: Path, model: ScriptedModelServer) -> dict[str, str]:
    return codex_environment(tmp_path / "home", model_base_url=model.base_url, binary=codex_cli)


def _runner(
    env: dict[str, str], *, tools: tuple[DynamicTool, ...] = (LOOKUP,), **limits: int
) -> TurnRunner:
    config = AdapterConfig(environment=env, tools=tools, read_timeout_ms=30_000)
    return TurnRunner(get_adapter("codex", config), RunnerLimits(**limits))


async def _turn(
    runner: TurnRunner, session: CodexSession, prompt: str
) -> tuple[TurnResult, list[AgentEvent]]:
    events: list[AgentEvent] = []
    result = await runner.run_turn(session, prompt, on_event=events.append)
    return result, events


async def _one_turn(
    runner: TurnRunner, workspace: Path, prompt: str, *, resume_session_id: str | None = None
) -> tuple[CodexSession, TurnResult, list[AgentEvent]]:
    """Start a session, run one turn, stop the session (also when the turn raised)."""
    session = await runner.start_session(workspace, resume_session_id=resume_session_id)
    assert isinstance(session, CodexSession)
    try:
        result, events = await _turn(runner, session, prompt)
    finally:
        await runner.stop_session(session)
    return session, result, events


def _assert_one_tool_succeeded(events: list[AgentEvent], tool_name: str) -> None:
    tool_results = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert [e.tool_name for e in tool_results] == [tool_name]
    assert tool_results[0].tool_error is False


async def test_handshake_account_read_and_thread_start(
    codex_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner(codex_env)
    session = await runner.start_session(workspace)
    try:
        assert isinstance(session, CodexSession)
        uuid.UUID(session.id)  # the thread id
        assert session.process is not None
        assert session.process.returncode is None
    finally:
        await runner.stop_session(session)
    assert session.process.returncode == 0  # it exits by itself once stdin closes


async def test_text_turn_completes_with_usage(
    codex_env: dict[str, str], workspace: Path, model: ScriptedModelServer
) -> None:
    _, result, events = await _one_turn(_runner(codex_env), workspace, "say hello")

    assert result.ok, result.error
    assert result.reply == "Hello from the scripted Responses model."
    assert result.usage.input_tokens > 0
    assert result.usage.output_tokens > 0
    assert events[0].type is EventType.SESSION_STARTED
    assert events[-1].type is EventType.TURN_COMPLETED
    assert model.responses_requests()


async def test_dynamic_tool_call_is_answered_by_the_registered_tool(
    codex_env: dict[str, str], workspace: Path, model: ScriptedModelServer
) -> None:
    _, result, events = await _one_turn(_runner(codex_env), workspace, "please CALLDYN now")

    assert result.ok, result.error
    _assert_one_tool_succeeded(events, "lookup_answer")
    # The tool's output went back to the model.
    last_input = json.dumps(model.responses_requests()[-1].body)
    assert "42 (asked: meaning of life)" in last_input


async def test_a_tool_the_session_does_not_offer_is_answered_with_an_error_and_reported(
    codex_env: dict[str, str], workspace: Path
) -> None:
    # Codex restores a resumed thread's dynamic tools from its rollout: a
    # session that resumes it without registering `lookup_answer` still gets
    # the calls for it.
    first, _, _ = await _one_turn(_runner(codex_env), workspace, "say hello")  # saves the thread
    without_tool = _runner(codex_env, tools=())
    _, result, events = await _one_turn(
        without_tool, workspace, "please CALLDYN now", resume_session_id=first.id
    )

    unsupported = [e for e in events if e.type is EventType.UNSUPPORTED_TOOL_CALL]
    assert [e.tool_name for e in unsupported] == ["lookup_answer"]
    assert result.ok, result.error  # the model got an error result and carried on


async def test_shell_command_runs_in_the_workspace(
    codex_env: dict[str, str], workspace: Path
) -> None:
    _, result, events = await _one_turn(_runner(codex_env), workspace, "please RUNSHELL now")

    assert result.ok, result.error
    _assert_one_tool_succeeded(events, "commandExecution")
    assert (workspace / "marker.txt").read_text().strip() == "codex-marker"


async def test_model_http_500_is_a_retryable_failure(
    codex_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner(codex_env, turn_timeout_ms=60_000)
    _, result, events = await _one_turn(runner, workspace, "BROKEN please")

    assert result.exit_reason is ExitReason.FAILED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_FAILED
    assert result.error.retryable
    assert events[-1].type is EventType.TURN_FAILED


async def test_a_turn_over_its_timeout_is_interrupted_and_the_session_goes_on(
    codex_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner(codex_env, turn_timeout_ms=3_000)
    session = await runner.start_session(workspace)
    assert isinstance(session, CodexSession)
    try:
        slow, events = await _turn(runner, session, "SLOW please")
        after, _ = await _turn(runner, session, "REMEMBER the question")
    finally:
        await runner.stop_session(session)

    assert slow.error is not None
    assert slow.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert events[-1].type is EventType.TURN_CANCELLED
    assert "turn timeout" in events[-1].message
    assert after.ok, after.error  # Codex confirmed the interrupt: the thread is usable


async def test_resuming_an_unknown_thread_starts_a_new_one(
    codex_env: dict[str, str], workspace: Path
) -> None:
    unknown = str(uuid.uuid4())
    session, result, _ = await _one_turn(
        _runner(codex_env), workspace, "say hello", resume_session_id=unknown
    )

    assert not session.resumed
    assert session.id != unknown
    assert result.ok, result.error


async def test_resuming_a_known_thread_keeps_its_history(
    codex_env: dict[str, str], workspace: Path, model: ScriptedModelServer
) -> None:
    runner = _runner(codex_env)
    first, _, _ = await _one_turn(runner, workspace, "my favourite colour is teal")
    second, result, _ = await _one_turn(
        runner, workspace, "REMEMBER it", resume_session_id=first.id
    )

    assert second.resumed
    assert second.id == first.id
    assert result.ok, result.error
    assert "favourite colour is teal" in json.dumps(model.responses_requests()[-1].body)


async def test_the_app_server_dying_mid_turn_is_a_port_exit(
    codex_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner(codex_env)
    session = await runner.start_session(workspace)
    assert isinstance(session, CodexSession)
    assert session.process is not None
    events: list[AgentEvent] = []
    turn = asyncio.create_task(runner.run_turn(session, "SLOW please", on_event=events.append))
    try:
        while not any(e.type is EventType.SESSION_STARTED for e in events):
            await asyncio.sleep(0.05)
        os.kill(session.process.pid, signal.SIGKILL)
        result = await asyncio.wait_for(turn, 30)
    finally:
        await runner.stop_session(session)

    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.PORT_EXIT
    assert "codex app-server" in result.error.message
    assert events[-1].type is EventType.TURN_FAILED


def test_the_committed_protocol_schema_matches_the_binary(codex_cli: Path, tmp_path: Path) -> None:
    out = tmp_path / "schema"
    subprocess.run(
        [str(codex_cli), "app-server", "generate-json-schema", "--experimental", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    committed = sorted(p.relative_to(SCHEMA) for p in SCHEMA.rglob("*.json"))
    assert committed
    for relative in committed:
        generated = json.loads((out / relative).read_text())
        assert generated == json.loads((SCHEMA / relative).read_text()), relative


def test_command_line_runs_codex_turns(
    codex_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(
        "---\nagent:\n  kind: codex\n  read_timeout_ms: 30000\n  turn_timeout_ms: 60000\n"
        "codex:\n  approval_policy: never\n  thread_sandbox: workspaceWrite\n---\n"
    )
    completed = run_adapters(workspace, workflow, "say hello", "please RUNSHELL now", env=codex_env)

    assert completed.returncode == 0, completed.stderr
    events = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [e["type"] for e in events].count("turn_completed") == 2
    assert len({e["session_id"] for e in events}) == 1
    assert PROVIDER_KEY not in completed.stdout + completed.stderr
