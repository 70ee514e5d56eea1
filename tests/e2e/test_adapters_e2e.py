"""The copilot-cli and copilot-transcript adapters on the real Copilot CLI.

Each test runs the real `copilot -p` binary in prompt mode, offline, against
the scripted model (which must call `task_complete`, or autopilot runs to
its continuation cap). Nothing leaves 127.0.0.1: the CLI is offline with a
local provider, and the runs without one fail in the preflight or on the
CLI's own offline check.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from copilot_driver.adapters import (
    AdapterConfig,
    AdapterErrorKind,
    AgentError,
    AgentEvent,
    EventType,
    RunnerLimits,
    TurnRunner,
    get_adapter,
)
from copilot_driver.adapters.copilot_cli import CopilotCliSession
from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
    prompt_mode_environment,
)
from copilot_driver.testing.environment import TEST_PROVIDER_KEY
from copilot_driver.testing.fixtures import run_adapters
from helpers.workspaces import workspace_fixture

pytestmark = pytest.mark.e2e


def _done(text: str, summary: str = "done") -> Reply:
    return Reply(text=text, tool_calls=(ToolCall("task_complete", {"summary": summary}),))


SCRIPT = Script(
    rules=(
        Rule(
            "RUNTOOL",
            (
                Reply(
                    tool_calls=(
                        ToolCall(
                            "bash",
                            {"command": "echo adapter-marker > marker.txt", "description": "mark"},
                        ),
                    )
                ),
                _done("The marker is written.", "wrote the marker"),
            ),
        ),
        Rule("STALL", (Reply(text="too late", delay_s=120),)),
        Rule("SECOND", (_done("Second answer."),)),
    ),
    default=_done("Hello from the scripted model."),
)


@pytest.fixture
def model(scripted_model: ScriptedModelServer) -> ScriptedModelServer:
    scripted_model.script = SCRIPT
    return scripted_model


workspace = workspace_fixture(git=True)  # a space in its name: the path travels as one argument


@pytest.fixture
def agent_env(
    tmp_path: Path, copilot_cli: Path, copilot_cache_home: Path, model: ScriptedModelServer
) -> dict[str, str]:
    return prompt_mode_environment(
        tmp_path / "home",
        model_base_url=model.base_url,
        binary=copilot_cli,
        cache_home=copilot_cache_home,
    )


def _runner(kind: str, env: dict[str, str], **limits: int) -> TurnRunner:
    return TurnRunner(
        get_adapter(kind, AdapterConfig(environment=env, options={"max_autopilot_continues": 3})),
        RunnerLimits(**limits),
    )


def _user_texts(model: ScriptedModelServer) -> list[str]:
    """The user messages of every chat request the model received, in order."""
    texts = []
    for request in model.chat_requests():
        assert isinstance(request.body, dict)
        for message in request.body["messages"]:
            if message.get("role") == "user":
                content = message.get("content")
                texts.append(content if isinstance(content, str) else json.dumps(content))
    return texts


async def test_plain_turn_completes_with_the_reply_and_token_usage(
    agent_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner("copilot-cli", agent_env)
    session = await runner.start_session(workspace)
    events: list[AgentEvent] = []

    result = await runner.run_turn(session, "say hello", on_event=events.append)

    assert result.ok, result.error
    assert "Hello from the scripted model." in result.reply
    assert events[0].type is EventType.SESSION_STARTED
    assert events[-1].type is EventType.TURN_COMPLETED
    assert result.session_id
    assert events[-1].session_id == result.session_id
    # Input tokens come from the CLI's usage report (the scripted model reports 10/5 per call).
    assert result.usage.input_tokens >= 10
    assert result.usage.output_tokens >= 5
    assert result.usage.model == "gpt-4.1"
    assert not [e for e in events if e.type is EventType.MALFORMED]


async def test_tool_turn_runs_in_the_workspace_and_reports_the_tool_result(
    agent_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner("copilot-cli", agent_env)
    session = await runner.start_session(workspace)
    events: list[AgentEvent] = []

    result = await runner.run_turn(session, "please RUNTOOL now", on_event=events.append)

    assert result.ok, result.error
    tools = [e for e in events if e.type is EventType.TOOL_RESULT]
    bash = [e for e in tools if e.tool_name == "bash"]
    assert bash
    assert bash[0].tool_error is False
    assert bash[0].tool_duration_ms is not None
    assert bash[0].tool_duration_ms >= 0
    assert (workspace / "marker.txt").read_text().strip() == "adapter-marker"


async def test_second_turn_resumes_the_same_session_with_its_history(
    agent_env: dict[str, str], workspace: Path, model: ScriptedModelServer
) -> None:
    runner = _runner("copilot-cli", agent_env)
    session = await runner.start_session(workspace)
    first = await runner.run_turn(session, "say hello", on_event=lambda e: None)
    second = await runner.run_turn(session, "SECOND question", on_event=lambda e: None)

    assert first.ok, first.error
    assert second.ok, second.error
    assert second.session_id == first.session_id
    assert "Second answer." in second.reply
    last_request = model.chat_requests()[-1].body
    assert isinstance(last_request, dict)
    history = json.dumps(last_request["messages"])
    assert "say hello" in history
    assert "SECOND question" in history
    # The report after --resume covers the whole session: totals only grow.
    assert second.usage.input_tokens > first.usage.input_tokens


async def test_a_session_resumed_by_id_continues_that_session(
    agent_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner("copilot-cli", agent_env)
    first_session = await runner.start_session(workspace)
    first = await runner.run_turn(first_session, "say hello", on_event=lambda e: None)

    resumed = await runner.start_session(workspace, resume_session_id=first.session_id)
    again = await runner.run_turn(resumed, "SECOND question", on_event=lambda e: None)

    assert again.ok, again.error
    assert again.session_id == first.session_id


async def test_missing_credentials_are_reported_before_the_session_starts(
    agent_env: dict[str, str], workspace: Path
) -> None:
    env = {k: v for k, v in agent_env.items() if not k.startswith("COPILOT_PROVIDER")}
    env.pop("COPILOT_OFFLINE")
    adapter = get_adapter("copilot-cli", AdapterConfig(environment=env))

    with pytest.raises(AgentError) as caught:
        await adapter.start_session(workspace)

    assert caught.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert not caught.value.retryable
    message = caught.value.message
    assert "COPILOT_GITHUB_TOKEN" in message
    assert "GH_TOKEN" in message
    assert "GITHUB_TOKEN" in message
    assert "gh auth login" in message


async def test_the_cli_refusing_to_run_without_a_provider_is_a_clear_port_exit(
    agent_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # A `gh` that claims a login passes the preflight; the real CLI, offline
    # without a provider URL, then refuses to run (and never goes online).
    fake_bin = tmp_path / "fake-gh"
    fake_bin.mkdir()
    gh = fake_bin / "gh"
    gh.write_text('#!/bin/sh\n[ "$1 $2" = "auth status" ] && exit 0\nexit 1\n')
    gh.chmod(0o755)
    env = {k: v for k, v in agent_env.items() if k != "COPILOT_PROVIDER_BASE_URL"}
    env["PATH"] = f"{fake_bin}{os.pathsep}{env['PATH']}"
    runner = _runner("copilot-cli", env)
    session = await runner.start_session(workspace)
    events: list[AgentEvent] = []

    result = await runner.run_turn(session, "say hello", on_event=events.append)

    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.PORT_EXIT
    assert "COPILOT_PROVIDER_BASE_URL" in result.error.message
    assert "status 1" in result.error.message
    assert events[-1].type is EventType.TURN_FAILED
    assert events[-1].error_kind is AdapterErrorKind.PORT_EXIT


async def test_a_stalled_turn_is_detected_and_its_process_group_killed(
    agent_env: dict[str, str], workspace: Path
) -> None:
    runner = _runner("copilot-cli", agent_env, stall_timeout_ms=3000)
    session = await runner.start_session(workspace)
    assert isinstance(session, CopilotCliSession)
    events: list[AgentEvent] = []
    pids: list[int] = []

    def record(event: AgentEvent) -> None:
        events.append(event)
        if event.type is EventType.SESSION_STARTED and session.process is not None:
            pids.append(session.process.pid)

    started = time.monotonic()
    result = await runner.run_turn(session, "STALL please", on_event=record)
    elapsed = time.monotonic() - started

    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert "stalled" in result.error.message
    assert events[-1].type is EventType.TURN_CANCELLED
    assert "stalled" in events[-1].message
    assert elapsed < 30, "the model waits 120 s: the stall limit must end the turn"
    assert pids
    with pytest.raises(ProcessLookupError):
        os.killpg(pids[0], 0)  # no process of the agent's group is left


async def test_transcript_session_carries_the_conversation_in_the_prompt(
    agent_env: dict[str, str], workspace: Path, model: ScriptedModelServer
) -> None:
    runner = _runner("copilot-transcript", agent_env)
    session = await runner.start_session(workspace)
    events: list[AgentEvent] = []

    first = await runner.run_turn(session, "say hello", on_event=events.append)
    second = await runner.run_turn(session, "SECOND question", on_event=events.append)

    assert first.ok, first.error
    assert second.ok, second.error
    assert first.reply == "Hello from the scripted model."
    assert second.reply == "Second answer."
    assert {e.session_id for e in events} == {session.id}
    prompts = _user_texts(model)
    expected = (
        "Previous conversation:\nUser: say hello\n"
        "Assistant: Hello from the scripted model.\n\nUser: SECOND question"
    )
    assert any(expected in text for text in prompts)


def test_command_line_prints_normalised_events_and_keeps_the_key_out(
    agent_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(
        "---\nagent:\n  kind: copilot-cli\n  stall_timeout_ms: 60000\n"
        "copilot-cli:\n  max_autopilot_continues: 3\n---\nPrompt template.\n"
    )
    completed = run_adapters(
        workspace, workflow, "please RUNTOOL now", "SECOND question", env=agent_env
    )

    assert completed.returncode == 0, completed.stderr
    events = [json.loads(line) for line in completed.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types.count("session_started") == 2
    assert types.count("turn_completed") == 2
    assert any(e["type"] == "tool_result" and e.get("tool_name") == "bash" for e in events)
    completed_ids = {e["session_id"] for e in events if e["type"] == "turn_completed"}
    assert len(completed_ids) == 1  # the second turn resumed the first one's session
    assert TEST_PROVIDER_KEY not in completed.stdout + completed.stderr
