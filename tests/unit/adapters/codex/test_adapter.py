"""CodexAdapter against a fake `codex app-server` (a real process, see conftest).

The fake plays either the app-server's side of a real transcript (answering
the adapter's requests with what Codex 0.169 answered) or a scripted
scenario. It records every line it received, so the tests check what the
adapter sent: each request against the generated ClientRequest schema,
each reply to a server request against that method's response schema.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from copilot_driver.adapters.codex import CodexAdapter, CodexSession
from copilot_driver.adapters.codex import adapter as adapter_module
from copilot_driver.adapters.codex.adapter import CLIENT_INFO
from copilot_driver.adapters.core.agent_events import EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import AdapterConfig, ExitReason, Session, TurnResult
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.adapters.core.tools import DynamicTool, ToolOutput
from copilot_driver.vocabulary import AdapterErrorKind

if TYPE_CHECKING:
    from unit.adapters.codex.conftest import FakeCodex, Recorder, Script, Transcript
    from unit.adapters.conftest import Pids

TERMINAL = (EventType.TURN_COMPLETED, EventType.TURN_FAILED, EventType.TURN_CANCELLED)
LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}},
    "required": ["question"],
    "additionalProperties": False,
}


async def _answer_42(arguments: Any) -> ToolOutput:
    return ToolOutput("42")


LOOKUP_ANSWER = DynamicTool(
    "lookup_answer",
    "Look up the answer to a question. Returns a short string.",
    _answer_42,
    LOOKUP_SCHEMA,
)


async def stopped(adapter: CodexAdapter, session: CodexSession) -> None:
    await asyncio.wait_for(adapter.stop_session(session), 15)


async def one_turn(
    fake: FakeCodex, script: Script, recorder: Recorder, prompt: str, **config: Any
) -> tuple[CodexSession, TurnResult]:
    """An adapter on `script`: start a session, run one turn, stop."""
    adapter = fake.adapter(script, **config)
    session = await adapter.start_session(fake.workspace)
    result = await adapter.run_turn(session, prompt, on_event=recorder)
    await stopped(adapter, session)
    return session, result


def turn_begun(fake: FakeCodex) -> Script:
    """Start, then a turn/start answered and announced: the next steps are the turn's."""
    return fake.script().start().turn_started()


def request_turn(
    fake: FakeCodex,
    request_id: int,
    method: str,
    params: Any,
    *,
    item: dict[str, Any] | None = None,
    **completion: Any,
) -> Script:
    """Start, then a turn in which the fake (after announcing `item`) sends one
    server request and waits for the reply before the turn completes."""
    script = turn_begun(fake)
    if item is not None:
        script.notify("item/started", item)
    script.request(request_id, method, params).expect_reply(request_id)
    return script.turn_completed(**completion)


def tool_call(call_id: str, tool: str, arguments: Any, turn_id: str) -> dict[str, Any]:
    return {
        "threadId": "01a1fcc7-01df-72a1-948b-eab62c1c102c",
        "turnId": turn_id,
        "callId": call_id,
        "namespace": None,
        "tool": tool,
        "arguments": arguments,
    }


def tool_reply(text: str, success: bool) -> dict[str, Any]:
    """The result the adapter gives to an `item/tool/call`."""
    return {"contentItems": [{"type": "inputText", "text": text}], "success": success}


async def a_turn_calling(
    fake: FakeCodex,
    recorder: Recorder,
    tool: str,
    arguments: Any,
    tools: Sequence[DynamicTool],
    request_id: int = 0,
) -> TurnResult:
    """A turn in which the fake calls `tool` once (as server request `request_id`)."""
    call = tool_call("c1", tool, arguments, fake.turn_id)
    script = request_turn(fake, request_id, "item/tool/call", call)
    _, result = await one_turn(fake, script, recorder, "call it", tools=tools)
    return result


# -- replaying the real transcripts ---------------------------------------------------------


PROMPTS = {
    "full-session-hi-dynamic-tool-shell": ["say hi", "please CALLDYN now", "please RUNSHELL now"],
}


@pytest.mark.parametrize(
    ("name", "reasons", "kind", "retryable"),
    [
        ("full-session-hi-dynamic-tool-shell", ["completed"] * 3, None, None),
        ("shell-command-nonzero-exit", ["completed"], None, None),
        ("model-http-500-default-retries", ["failed"], AdapterErrorKind.TURN_FAILED, True),
        ("model-server-down-no-retries", ["failed"], AdapterErrorKind.TURN_FAILED, True),
        ("no-auth-builtin-openai-provider", ["failed"], AdapterErrorKind.RESPONSE_ERROR, False),
        ("provider-env-key-missing", ["failed"], AdapterErrorKind.TURN_FAILED, True),
    ],
)
async def test_replayed_transcripts(
    name: str,
    reasons: list[str],
    kind: AdapterErrorKind | None,
    retryable: bool | None,
    fake_codex: FakeCodex,
    codex_transcripts: dict[str, Transcript],
    recorder: Recorder,
) -> None:
    transcript = codex_transcripts[name]
    adapter = fake_codex.adapter(fake_codex.script().replay(transcript), tools=[LOOKUP_ANSWER])
    session = await adapter.start_session(fake_codex.workspace)
    thread_id = transcript.result_of("thread/start")["thread"]["id"]
    assert session.id == thread_id
    assert session.resumed is False
    results: list[TurnResult] = []
    for prompt in transcript.meta["prompts"]:
        results.append(await adapter.run_turn(session, prompt, on_event=recorder))
    await stopped(adapter, session)

    assert [r.exit_reason.value for r in results] == reasons
    assert [r.exit_reason.value for r in results] == [
        {"interrupted": "cancelled"}.get(s, s) for s in transcript.meta["turn_statuses"]
    ]
    last = results[-1]
    if kind is None:
        assert last.error is None
    else:
        assert last.error is not None
        assert (last.error.kind, last.error.retryable) == (kind, retryable)
    assert recorder.types()[0] is EventType.SESSION_STARTED
    assert recorder.types().count(EventType.SESSION_STARTED) == 1
    assert [e.type for e in recorder.events if e.type in TERMINAL] == [
        {"completed": EventType.TURN_COMPLETED, "failed": EventType.TURN_FAILED}[r] for r in reasons
    ]
    assert {e.session_id for e in recorder.events} == {thread_id}

    fake_codex.assert_script_followed()
    assert fake_codex.saw_eof()
    turn_starts = fake_codex.requests("turn/start")
    assert [r["params"]["input"][0]["text"] for r in turn_starts] == transcript.meta["prompts"]
    server_requests = [m for d, m in transcript.rows if d == "in" and "id" in m and "method" in m]
    fake_codex.assert_messages_match_the_schema(server_requests)


async def test_the_full_session_in_detail(
    fake_codex: FakeCodex, codex_transcripts: dict[str, Transcript], recorder: Recorder
) -> None:
    transcript = codex_transcripts["full-session-hi-dynamic-tool-shell"]
    arguments: list[Any] = []

    async def lookup(args: Any) -> ToolOutput:
        arguments.append(args)
        return ToolOutput("42")

    tool = DynamicTool(LOOKUP_ANSWER.name, LOOKUP_ANSWER.description, lookup, LOOKUP_SCHEMA)
    adapter = fake_codex.adapter(fake_codex.script().replay(transcript), tools=[tool])
    session = await adapter.start_session(fake_codex.workspace)
    per_turn: list[list[Any]] = []
    results = []
    for prompt in PROMPTS[transcript.name]:
        start = len(recorder.events)
        results.append(await adapter.run_turn(session, prompt, on_event=recorder))
        per_turn.append(recorder.events[start:])
    await stopped(adapter, session)

    # usage grows turn by turn (the thread's running total), and stays on the session
    assert [r.usage for r in results] == [
        TokenUsage(input_tokens=120, output_tokens=12, cached_input_tokens=20),
        TokenUsage(input_tokens=360, output_tokens=36, cached_input_tokens=60),
        TokenUsage(input_tokens=600, output_tokens=60, cached_input_tokens=100),
    ]
    assert session.usage == results[-1].usage
    assert results[0].reply == "hi from fake responses model"
    assert results[1].reply == "Tool returned: 42. Done."

    # the handshake, as the real client did it, plus the adapter's own identity
    received = fake_codex.received()
    assert [m.get("method") for m in received[:4]] == [
        "initialize",
        "initialized",
        "account/read",
        "thread/start",
    ]
    assert received[0]["params"] == {
        "clientInfo": CLIENT_INFO,
        "capabilities": {"experimentalApi": True},
    }
    assert received[2]["params"] == {"refreshToken": False}
    assert fake_codex.requests("account/login/start") == [], "no CODEX_API_KEY, no login"
    assert received[3]["params"] == {
        "cwd": str(fake_codex.workspace),
        "approvalPolicy": "never",
        "sandbox": "workspace-write",
        "dynamicTools": [
            {
                "type": "function",
                "name": "lookup_answer",
                "description": LOOKUP_ANSWER.description,
                "inputSchema": LOOKUP_SCHEMA,
            }
        ],
    }
    assert (
        received[3]["params"]["dynamicTools"]
        == transcript.first("out", "thread/start")["params"]["dynamicTools"]
    )
    assert all(m.get("jsonrpc") == "2.0" for m in received)

    # the dynamic tool call: the real reply, reported as the adapter's tool_result
    assert arguments == [{"question": "meaning of life"}]
    (real_reply,) = transcript.replies_to_server()
    assert fake_codex.replies()[0] == {"jsonrpc": "2.0", **real_reply}
    (dynamic,) = [e for e in per_turn[1] if e.type is EventType.TOOL_RESULT]
    assert (dynamic.tool_name, dynamic.tool_error) == ("lookup_answer", False)
    assert dynamic.message == "tool lookup_answer succeeded"
    (shell,) = [e for e in per_turn[2] if e.type is EventType.TOOL_RESULT]
    assert (shell.tool_name, shell.tool_error) == ("commandExecution", False)

    # session_started only on the first turn, before anything Codex says
    assert per_turn[0][0].type is EventType.SESSION_STARTED
    assert str(session.process.pid if session.process else "?") in per_turn[0][0].message
    for events in per_turn[1:]:
        assert EventType.SESSION_STARTED not in [e.type for e in events]
    for events in per_turn:
        assert [e.type for e in events[-2:]] == [EventType.TOKEN_USAGE, EventType.TURN_COMPLETED]


async def test_an_interrupted_transcript_via_task_cancellation(
    fake_codex: FakeCodex, codex_transcripts: dict[str, Transcript], recorder: Recorder
) -> None:
    """The transcript's client sent turn/interrupt after five retries: here the
    turn's task is cancelled then, and the fake answers as Codex did."""
    transcript = codex_transcripts["model-server-down-default-retries-interrupted"]
    adapter = fake_codex.adapter(fake_codex.script().replay(transcript))
    session = await adapter.start_session(fake_codex.workspace)
    running = asyncio.create_task(adapter.run_turn(session, "say hi", on_event=recorder))
    await recorder.wait_for(
        lambda events: sum(e.message.startswith("retrying: ") for e in events) == 5
    )
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await stopped(adapter, session)

    fake_codex.assert_script_followed()
    (interrupt,) = fake_codex.requests("turn/interrupt")
    turn_id = transcript.first("out", "turn/interrupt")["params"]["turnId"]
    assert interrupt["params"] == {"threadId": session.id, "turnId": turn_id}
    assert recorder.types()[-1] is EventType.TURN_CANCELLED
    assert recorder.of(EventType.TURN_CANCELLED)[0].error_kind is AdapterErrorKind.TURN_CANCELLED
    assert EventType.TURN_FAILED not in recorder.types()
    fake_codex.assert_messages_match_the_schema([])


# -- scripted: start-up ------------------------------------------------------------------------


def checked(fake: FakeCodex) -> None:
    """The adapter followed the scenario, and all it sent matches the schema."""
    fake.assert_script_followed()
    fake.assert_messages_match_the_schema()


async def test_start_and_stop(fake_codex: FakeCodex, pids: Pids) -> None:
    script = fake_codex.script().start()
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace)
    assert isinstance(session, CodexSession)
    assert session.id == fake_codex.thread_id
    assert session.workspace == fake_codex.workspace
    assert session.ssh_host is None
    started = fake_codex.started()
    assert Path(started["cwd"]) == fake_codex.workspace, "the app-server runs in the workspace"
    assert session.process is not None
    assert started["pid"] == session.process.pid
    await stopped(adapter, session)
    assert fake_codex.saw_eof(), "stop closes stdin first"
    assert session.process.returncode == 0, "the app-server exited by itself on EOF"
    assert await pids.gone_async(started["pid"])
    await stopped(adapter, session)  # stopping twice is harmless
    checked(fake_codex)


async def test_stop_ignores_other_sessions(fake_codex: FakeCodex, tmp_path: Path) -> None:
    adapter = CodexAdapter(AdapterConfig(command="codex app-server"))
    await adapter.stop_session(Session(workspace=tmp_path))
    await adapter.stop_session(CodexSession(workspace=tmp_path))


async def test_stop_signals_an_app_server_that_ignores_eof(
    fake_codex: FakeCodex, pids: Pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter_module, "STDIN_CLOSE_GRACE_S", 0.2)
    script = fake_codex.script().start().spawn_child().hang()
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace)
    (child,) = [entry["child"] for entry in await _wait_log(fake_codex, "child")]
    began = time.monotonic()
    await stopped(adapter, session)
    assert time.monotonic() - began < 4
    assert session.process is not None
    assert session.process.returncode is not None
    assert session.process.returncode < 0, "ended by a signal"
    assert await pids.gone_async(fake_codex.started()["pid"])
    assert await pids.gone_async(child), "the whole process group is stopped"


async def _wait_log(fake: FakeCodex, key: str, timeout_s: float = 5) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    while not (entries := [e for e in fake.log() if key in e]):
        assert time.monotonic() < deadline, f"the fake never logged {key!r}"
        await asyncio.sleep(0.02)
    return entries


def asked_to_log_in(fake: FakeCodex) -> Script:
    """A handshake that finds no account, and the client's `account/login/start`."""
    return fake.script().handshake(account=None).expect("account/login/start")


def login_completed(error: str | None = None) -> dict[str, Any]:
    return {"loginId": None, "success": error is None, "error": error}


async def failed_start(adapter: CodexAdapter, fake: FakeCodex) -> AgentError:
    """The AgentError `start_session` raised."""
    with pytest.raises(AgentError) as raised:
        await asyncio.wait_for(adapter.start_session(fake.workspace), 15)
    return raised.value


async def test_api_key_login_when_there_is_no_account(fake_codex: FakeCodex) -> None:
    script = (
        asked_to_log_in(fake_codex)
        .respond({"type": "apiKey"})
        .notify("account/login/completed", login_completed())
        .thread()
    )
    adapter = fake_codex.adapter(script, env={"CODEX_API_KEY": f"  {fake_codex.api_key}\n"})
    session = await adapter.start_session(fake_codex.workspace)
    await stopped(adapter, session)
    (login,) = fake_codex.requests("account/login/start")
    assert login["params"] == {"type": "apiKey", "apiKey": fake_codex.api_key}
    assert fake_codex.started()["api_key"] == f"  {fake_codex.api_key}\n", "env passed as is"
    assert session.id == fake_codex.thread_id
    checked(fake_codex)


async def test_login_completed_before_the_login_response(fake_codex: FakeCodex) -> None:
    script = (
        asked_to_log_in(fake_codex)
        .notify("account/login/completed", login_completed())
        .respond({"type": "apiKey"})
        .thread()
    )
    adapter = fake_codex.adapter(script, env={"CODEX_API_KEY": fake_codex.api_key})
    session = await asyncio.wait_for(adapter.start_session(fake_codex.workspace), 10)
    await stopped(adapter, session)
    checked(fake_codex)


async def test_no_login_with_an_account_or_without_a_key(fake_codex: FakeCodex) -> None:
    script = fake_codex.script().handshake(account={"type": "apiKey"}).thread()
    adapter = fake_codex.adapter(script, env={"CODEX_API_KEY": fake_codex.api_key})
    session = await adapter.start_session(fake_codex.workspace)
    await stopped(adapter, session)
    assert fake_codex.requests("account/login/start") == []
    checked(fake_codex)


async def test_a_failed_login_fails_the_start(fake_codex: FakeCodex, pids: Pids) -> None:
    script = (
        asked_to_log_in(fake_codex)
        .respond({"type": "apiKey"})
        .notify("account/login/completed", login_completed("Invalid API key"))
    )
    adapter = fake_codex.adapter(script, env={"CODEX_API_KEY": fake_codex.api_key})
    error = await failed_start(adapter, fake_codex)
    assert error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert "API key login failed: Invalid API key" in error.message
    assert fake_codex.api_key not in str(error)
    assert fake_codex.saw_eof()
    assert await pids.gone_async(fake_codex.started()["pid"])


async def test_a_login_that_never_completes_times_out(fake_codex: FakeCodex, pids: Pids) -> None:
    script = asked_to_log_in(fake_codex).respond({"type": "apiKey"})
    env = {"CODEX_API_KEY": fake_codex.api_key}
    adapter = fake_codex.adapter(script, env=env, read_timeout_ms=300)
    error = await failed_start(adapter, fake_codex)
    assert error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert "no answer in time" in error.message
    assert await pids.gone_async(fake_codex.started()["pid"])


async def test_resume_a_thread(fake_codex: FakeCodex) -> None:
    script = fake_codex.script().handshake({"type": "apiKey"}).thread("thr_old", "thread/resume")
    adapter = fake_codex.adapter(script, tools=[LOOKUP_ANSWER])
    session = await adapter.start_session(fake_codex.workspace, resume_session_id="thr_old")
    await stopped(adapter, session)
    assert (session.id, session.resumed) == ("thr_old", True)
    (resume,) = fake_codex.requests("thread/resume")
    assert resume["params"]["threadId"] == "thr_old"
    assert resume["params"]["cwd"] == str(fake_codex.workspace)
    assert resume["params"]["sandbox"] == "workspace-write"
    assert fake_codex.requests("thread/start") == []
    checked(fake_codex)


async def test_a_failed_resume_falls_back_to_a_new_thread(
    fake_codex: FakeCodex, caplog: pytest.LogCaptureFixture
) -> None:
    script = (
        fake_codex.script()
        .handshake({"type": "apiKey"})
        .expect("thread/resume")
        .fail(-32600, "no rollout found for thread id thr_gone")
        .thread("thr_new")
    )
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace, resume_session_id="thr_gone")
    await stopped(adapter, session)
    assert (session.id, session.resumed) == ("thr_new", False)
    (resume,) = fake_codex.requests("thread/resume")
    (start,) = fake_codex.requests("thread/start")
    assert resume["params"] == {**start["params"], "threadId": "thr_gone"}
    assert "no rollout found" in caplog.text
    checked(fake_codex)


@pytest.mark.parametrize(
    ("script_end", "fragment"),
    [
        (lambda s: s.expect("initialize").fail(-32600, "Already initialized"), "Already init"),
        (
            lambda s: s.handshake({"type": "apiKey"}).expect("thread/start").fail(-32602, "bad"),
            "bad (code -32602)",
        ),
        (
            lambda s: s.handshake({"type": "apiKey"}).expect("thread/start").respond({}),
            "no thread id",
        ),
        (lambda s: s.exit(1, "error: unexpected argument 'app-server'\n"), "app-server'"),
    ],
    ids=["initialize-error", "thread-start-error", "no-thread-id", "exits"],
)
async def test_start_up_failures_are_response_errors_and_stop_the_process(
    script_end: Any, fragment: str, fake_codex: FakeCodex, pids: Pids
) -> None:
    adapter = fake_codex.adapter(script_end(fake_codex.script()))
    error = await failed_start(adapter, fake_codex)
    assert error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert error.retryable is False
    assert error.message.startswith("codex app-server start-up failed: ")
    assert fragment in error.message
    assert await pids.gone_async(fake_codex.started()["pid"])


async def test_an_unanswered_initialize_times_out(fake_codex: FakeCodex, pids: Pids) -> None:
    adapter = fake_codex.adapter(fake_codex.script().expect("initialize"), read_timeout_ms=300)
    began = time.monotonic()
    error = await failed_start(adapter, fake_codex)
    assert time.monotonic() - began < 5
    assert error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert "no answer in time" in error.message
    assert await pids.gone_async(fake_codex.started()["pid"])


async def test_a_missing_binary_is_agent_not_found(fake_codex: FakeCodex) -> None:
    adapter = CodexAdapter(
        AdapterConfig(command="no-such-codex app-server", environment={"PATH": "/nonexistent"})
    )
    with pytest.raises(AgentError) as raised:
        await adapter.start_session(fake_codex.workspace)
    assert raised.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "no-such-codex" in raised.value.message


@pytest.mark.parametrize("command", ["", "   "])
def test_an_empty_command_is_agent_not_found(command: str) -> None:
    with pytest.raises(AgentError) as raised:
        CodexAdapter(AdapterConfig(command=command or " "))
    assert raised.value.kind is AdapterErrorKind.AGENT_NOT_FOUND


@pytest.mark.parametrize("which", ["relative", "missing", "file", "empty", "nul"])
async def test_an_invalid_workspace_is_rejected_before_spawning(
    which: str, fake_codex: FakeCodex
) -> None:
    a_file = fake_codex.root / "a-file"
    a_file.write_text("x")
    workspace = {
        "relative": "workspace",
        "missing": str(fake_codex.root / "missing"),
        "file": str(a_file),
        "empty": "",
        "nul": f"{fake_codex.workspace}\x00x",
    }[which]
    adapter = fake_codex.adapter(fake_codex.script().start())
    with pytest.raises(AgentError) as raised:
        await adapter.start_session(workspace)
    assert raised.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD
    assert fake_codex.log() == [], "nothing was started"


# -- scripted: turns ----------------------------------------------------------------------------


async def test_a_turn_sends_the_turn_params(fake_codex: FakeCodex, recorder: Recorder) -> None:
    script = turn_begun(fake_codex).agent_message("done").token_usage(100, 10, 5).turn_completed()
    options = {"model": "gpt-5.5", "effort": "high", "turn_sandbox_policy": {"networkAccess": True}}
    _, result = await one_turn(fake_codex, script, recorder, "fix it", options=options)
    (turn_start,) = fake_codex.requests("turn/start")
    assert turn_start["params"] == {
        "threadId": fake_codex.thread_id,
        "input": [{"type": "text", "text": "fix it", "text_elements": []}],
        "cwd": str(fake_codex.workspace),
        "sandboxPolicy": {
            "type": "workspaceWrite",
            "writableRoots": [str(fake_codex.workspace)],
            "networkAccess": True,
        },
        "model": "gpt-5.5",
        "effort": "high",
    }
    (thread_start,) = fake_codex.requests("thread/start")
    assert thread_start["params"]["model"] == "gpt-5.5"
    assert "dynamicTools" not in thread_start["params"], "no tools, no dynamicTools"
    assert result.ok
    assert result.reply == "done"
    assert result.usage == TokenUsage(input_tokens=100, output_tokens=10, cached_input_tokens=5)
    assert recorder.types() == [
        EventType.SESSION_STARTED,
        EventType.NOTIFICATION,  # turn started
        EventType.NOTIFICATION,  # the agent's message
        EventType.TOKEN_USAGE,
        EventType.TOKEN_USAGE,
        EventType.TURN_COMPLETED,
    ]
    checked(fake_codex)


async def test_junk_on_stdout_does_not_disturb_a_turn(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = (
        fake_codex.script()
        .start()
        .raw("WARNING: not json")
        .turn_started()
        .raw("{broken")
        .raw("[1, 2]")
        .notify("made/up/notification", {"x": 1}, checked=False)
        .turn_completed()
    )
    _, result = await one_turn(fake_codex, script, recorder, "hi")
    assert result.ok
    assert [e.raw_type for e in recorder.of(EventType.OTHER_MESSAGE)] == ["made/up/notification"]
    checked(fake_codex)


async def test_a_turn_start_error_fails_the_turn_not_the_session(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = (
        fake_codex.script()
        .start()
        .expect("turn/start")
        .fail(-32600, "Invalid request: AbsolutePathBuf deserialized without a base path")
        .turn_started()
        .turn_completed()
    )
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace)
    failed = await adapter.run_turn(session, "one", on_event=recorder)
    second = await adapter.run_turn(session, "two", on_event=recorder)
    await stopped(adapter, session)
    assert failed.error is not None
    assert failed.error.kind is AdapterErrorKind.TURN_FAILED
    assert "turn/start failed: Invalid request" in failed.error.message
    assert second.ok
    checked(fake_codex)


async def test_an_unanswered_turn_start_is_a_response_timeout(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = fake_codex.script().start().expect("turn/start")
    _, result = await one_turn(fake_codex, script, recorder, "hi", read_timeout_ms=400)
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.RESPONSE_TIMEOUT
    assert result.error.retryable is True
    assert recorder.types()[-1] is EventType.TURN_FAILED


async def test_the_app_server_exiting_mid_turn_is_port_exit(
    fake_codex: FakeCodex, recorder: Recorder, pids: Pids
) -> None:
    script = (
        turn_begun(fake_codex)
        .stderr("some earlier noise\n")
        .exit(7, "thread 'main' panicked: model stream died\n", linger_s=0.0)
    )
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace)
    result = await asyncio.wait_for(adapter.run_turn(session, "hi", on_event=recorder), 10)
    assert result.exit_reason is ExitReason.FAILED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.PORT_EXIT
    assert result.error.retryable is True
    assert "model stream died" in result.error.message, "the stderr tail explains the exit"
    assert "mid-turn" in result.error.message
    (failed,) = recorder.of(EventType.TURN_FAILED)
    assert failed.error_kind is AdapterErrorKind.PORT_EXIT
    # The session is dead: the next turn fails at once (whether or not the exit
    # status has been collected yet).
    again = await asyncio.wait_for(adapter.run_turn(session, "again", on_event=recorder), 5)
    assert again.error is not None
    assert again.error.kind is AdapterErrorKind.PORT_EXIT
    assert "codex app-server" in again.error.message
    await stopped(adapter, session)
    assert await pids.gone_async(fake_codex.started()["pid"])


async def test_run_turn_wants_a_codex_session(fake_codex: FakeCodex, recorder: Recorder) -> None:
    adapter = fake_codex.adapter(fake_codex.script())
    with pytest.raises(TypeError, match="not a codex session"):
        await adapter.run_turn(Session(workspace=fake_codex.workspace), "x", on_event=recorder)


# -- scripted: tools -----------------------------------------------------------------------------


async def test_a_registered_tool_is_called_and_its_text_returned(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    result = await a_turn_calling(
        fake_codex, recorder, "lookup_answer", {"question": "q"}, [LOOKUP_ANSWER]
    )
    assert result.ok
    assert fake_codex.replies()[0]["result"] == tool_reply("42", success=True)
    (event,) = recorder.of(EventType.TOOL_RESULT)
    assert (event.tool_name, event.tool_error, event.session_id) == (
        "lookup_answer",
        False,
        fake_codex.thread_id,
    )
    assert event.tool_duration_ms is not None
    checked(fake_codex)


async def _fails(arguments: Any) -> ToolOutput:
    return ToolOutput("tracker said 404", success=False)


async def _raises(arguments: Any) -> ToolOutput:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    ("run", "text"),
    [(_fails, "tracker said 404"), (_raises, "error: RuntimeError: boom")],
    ids=["failure-output", "exception"],
)
async def test_a_failing_tool_answers_success_false(
    run: Any, text: str, fake_codex: FakeCodex, recorder: Recorder
) -> None:
    tools = [DynamicTool("tracker_api", "Tracker.", run)]
    result = await a_turn_calling(fake_codex, recorder, "tracker_api", {}, tools, request_id=7)
    assert result.ok, "a tool's failure is the agent's information, not the turn's end"
    assert fake_codex.replies()[7]["result"] == tool_reply(text, success=False)
    (event,) = recorder.of(EventType.TOOL_RESULT)
    assert (event.tool_name, event.tool_error) == ("tracker_api", True)
    assert text in event.message
    checked(fake_codex)


async def test_an_unknown_tool_gets_success_false_and_an_event(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    result = await a_turn_calling(fake_codex, recorder, "rm_rf", {"path": "/"}, [LOOKUP_ANSWER])
    assert result.ok
    reply = fake_codex.replies()[0]["result"]
    assert reply["success"] is False
    assert "rm_rf" in reply["contentItems"][0]["text"]
    (event,) = recorder.of(EventType.UNSUPPORTED_TOOL_CALL)
    assert event.tool_name == "rm_rf"
    assert recorder.of(EventType.TOOL_RESULT) == []
    checked(fake_codex)


async def test_tool_calls_run_concurrently_and_finish_before_the_turn_returns(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    spans: dict[str, tuple[float, float]] = {}

    async def slow(arguments: Any) -> ToolOutput:
        began = time.monotonic()
        await asyncio.sleep(0.4)
        spans[arguments["name"]] = (began, time.monotonic())
        return ToolOutput(arguments["name"])

    turn_id = fake_codex.turn_id
    script = (
        turn_begun(fake_codex)
        .request(0, "item/tool/call", tool_call("a", "slow", {"name": "a"}, turn_id))
        .request(1, "item/tool/call", tool_call("b", "slow", {"name": "b"}, turn_id))
        .turn_completed()  # before the answers: the turn must still wait for them
        .expect_reply(0, 1)
    )
    adapter = fake_codex.adapter(script, tools=[DynamicTool("slow", "Slow.", slow)])
    session = await adapter.start_session(fake_codex.workspace)
    result = await adapter.run_turn(session, "two calls", on_event=recorder)
    returned = time.monotonic()
    await stopped(adapter, session)
    assert result.ok
    assert set(spans) == {"a", "b"}
    (a_start, a_end), (b_start, b_end) = spans["a"], spans["b"]
    assert a_start < b_end, "the two calls overlapped"
    assert b_start < a_end, "the two calls overlapped"
    assert returned >= max(a_end, b_end), "run_turn waited for the in-flight calls"
    replies = fake_codex.replies()
    assert [replies[i]["result"]["contentItems"][0]["text"] for i in (0, 1)] == ["a", "b"]
    assert recorder.types()[-1] is EventType.TURN_COMPLETED
    assert len(recorder.of(EventType.TOOL_RESULT)) == 2
    checked(fake_codex)


# -- scripted: approvals and input ---------------------------------------------------------------


def command_approval(cwd: str, turn_id: str, command: str = "make test") -> dict[str, Any]:
    return {
        "threadId": "01a1fcc7-01df-72a1-948b-eab62c1c102c",
        "turnId": turn_id,
        "itemId": "call_9",
        "startedAtMs": 1795242265449,
        "command": command,
        "cwd": cwd,
        "reason": None,
    }


@pytest.mark.parametrize(
    ("approvals", "where", "decision"),
    [
        ("workspace", "root", "accept"),
        ("workspace", "subdir", "accept"),
        ("workspace", "relative", "accept"),
        ("workspace", "outside", "decline"),
        ("workspace", "escape", "decline"),
        ("workspace", "symlink-out", "decline"),
        ("accept", "outside", "accept"),
        ("decline", "root", "decline"),
    ],
)
async def test_command_approvals_follow_the_policy(
    approvals: str, where: str, decision: str, fake_codex: FakeCodex, recorder: Recorder
) -> None:
    workspace = fake_codex.workspace
    (workspace / "src").mkdir()
    (workspace / "link").symlink_to(fake_codex.root / "bin", target_is_directory=True)
    cwd = {
        "root": str(workspace),
        "subdir": str(workspace / "src"),
        "relative": "src",
        "outside": "/etc",
        "escape": f"{workspace}/src/../../",
        "symlink-out": str(workspace / "link"),
    }[where]
    script = request_turn(
        fake_codex, 3, "item/commandExecution/requestApproval", command_approval(cwd, "t")
    )
    options = {"approvals": approvals}
    _, result = await one_turn(fake_codex, script, recorder, "run it", options=options)
    assert result.ok
    assert fake_codex.replies()[3]["result"] == {"decision": decision}
    verdict = "approved" if decision == "accept" else "declined"
    assert f"{verdict} command 'make test'" in recorder.messages(EventType.NOTIFICATION)
    checked(fake_codex)


def file_change_item(paths: list[str], status: str = "inProgress") -> dict[str, Any]:
    return {
        "item": {
            "type": "fileChange",
            "id": "patch_1",
            "status": status,
            "changes": [{"path": p, "kind": {"type": "update"}, "diff": "@@"} for p in paths],
        },
        "threadId": "01a1fcc7-01df-72a1-948b-eab62c1c102c",
        "turnId": "t",
        "startedAtMs": 1795242265449,
    }


def file_change_approval(item_id: str = "patch_1", grant_root: str | None = None) -> dict[str, Any]:
    return {
        "threadId": "01a1fcc7-01df-72a1-948b-eab62c1c102c",
        "turnId": "t",
        "itemId": item_id,
        "startedAtMs": 1795242265449,
        "reason": None,
        "grantRoot": grant_root,
    }


@pytest.mark.parametrize(
    ("approvals", "paths", "item_id", "grant_root", "decision"),
    [
        ("workspace", ["a.py", "src/b.py"], "patch_1", None, "accept"),
        ("workspace", ["a.py", "/etc/passwd"], "patch_1", None, "decline"),
        ("workspace", ["a.py"], "patch_1", "/", "decline"),
        ("workspace", ["a.py"], "unknown_item", None, "decline"),
        ("accept", ["/etc/passwd"], "patch_1", None, "accept"),
        ("decline", ["a.py"], "patch_1", None, "decline"),
    ],
    ids=["inside", "one-outside", "grant-root", "unknown-item", "accept-all", "decline-all"],
)
async def test_file_change_approvals_follow_the_policy(
    approvals: str,
    paths: list[str],
    item_id: str,
    grant_root: str | None,
    decision: str,
    fake_codex: FakeCodex,
    recorder: Recorder,
) -> None:
    absolute = [p if p.startswith("/") else str(fake_codex.workspace / p) for p in paths]
    request = file_change_approval(item_id, grant_root)
    item = file_change_item(absolute)
    script = request_turn(fake_codex, 5, "item/fileChange/requestApproval", request, item=item)
    options = {"approvals": approvals}
    _, result = await one_turn(fake_codex, script, recorder, "edit", options=options)
    assert result.ok
    assert fake_codex.replies()[5]["result"] == {"decision": decision}
    checked(fake_codex)


async def test_a_request_for_user_input_fails_the_turn_as_input_required(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    question = {
        "threadId": "01a1fcc7-01df-72a1-948b-eab62c1c102c",
        "turnId": fake_codex.turn_id,
        "itemId": "ask_1",
        "isBlocking": True,
        "questions": [{"id": "q1", "header": "Which?", "question": "Which branch?"}],
    }
    error = fake_codex.script().turn_error("no answer")
    script = request_turn(
        fake_codex, 2, "item/tool/requestUserInput", question, status="failed", error=error
    )
    _, result = await one_turn(fake_codex, script, recorder, "ask")
    reply = fake_codex.replies()[2]
    assert "result" not in reply
    assert reply["error"]["code"] == -32000
    assert "unattended" in reply["error"]["message"]
    assert result.error is not None
    assert (result.error.kind, result.error.retryable) == (
        AdapterErrorKind.TURN_INPUT_REQUIRED,
        False,
    )
    (failed,) = recorder.of(EventType.TURN_FAILED)
    assert failed.error_kind is AdapterErrorKind.TURN_INPUT_REQUIRED
    assert any("asked for user input" in m for m in recorder.messages())
    checked(fake_codex)


async def test_other_server_requests_get_method_not_found(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = request_turn(fake_codex, 4, "currentTime/read", {"threadId": fake_codex.thread_id})
    _, result = await one_turn(fake_codex, script, recorder, "x")
    assert result.ok
    assert fake_codex.replies()[4]["error"]["code"] == -32601
    checked(fake_codex)


# -- scripted: cancellation ---------------------------------------------------------------------


async def test_cancelling_a_turn_interrupts_it_and_the_session_goes_on(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = (
        turn_begun(fake_codex)
        .expect("turn/interrupt")
        .respond({})
        .turn_completed(status="interrupted")
        .turn_started("turn_2")
        .turn_completed("turn_2")
    )
    adapter = fake_codex.adapter(script)
    session = await adapter.start_session(fake_codex.workspace)
    running = asyncio.create_task(adapter.run_turn(session, "long job", on_event=recorder))
    await recorder.wait_for(lambda events: any("started" in e.message for e in events[1:]))
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 10)
    (interrupt,) = fake_codex.requests("turn/interrupt")
    assert interrupt["params"] == {"threadId": fake_codex.thread_id, "turnId": fake_codex.turn_id}
    (cancelled,) = recorder.of(EventType.TURN_CANCELLED)
    assert cancelled.error_kind is AdapterErrorKind.TURN_CANCELLED
    assert recorder.types()[-1] is EventType.TURN_CANCELLED
    second = await asyncio.wait_for(adapter.run_turn(session, "next", on_event=recorder), 10)
    await stopped(adapter, session)
    assert second.ok
    checked(fake_codex)


async def test_a_cancelled_turn_waits_only_briefly_for_codex(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = turn_begun(fake_codex).expect("turn/interrupt").respond({})
    adapter = fake_codex.adapter(script, options={"interrupt_wait_ms": 200})
    session = await adapter.start_session(fake_codex.workspace)
    running = asyncio.create_task(adapter.run_turn(session, "long job", on_event=recorder))
    await recorder.wait_for(lambda events: len(events) >= 2)
    running.cancel()
    began = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 10)
    assert time.monotonic() - began < 2
    assert recorder.types()[-1] is EventType.TURN_CANCELLED
    await stopped(adapter, session)


# -- SSH ------------------------------------------------------------------------------------------


async def test_ssh_passes_the_api_key_on_stdin_never_on_argv(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    ssh_bin = fake_codex.install_ssh()
    script = turn_begun(fake_codex).turn_completed()
    env = {
        "PATH": f"{ssh_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "CODEX_API_KEY": fake_codex.api_key,
        "FAKE_SSH_ARGV": str(fake_codex.root / "ssh_argv.jsonl"),
    }
    session, result = await one_turn(
        fake_codex, script, recorder, "hi", env=env, ssh=SshSettings(("h",))
    )
    assert result.ok
    assert session.ssh_host == "h"
    (argv,) = fake_codex.ssh_argvs()
    assert all(fake_codex.api_key not in part for part in argv), "the key is on no command line"
    assert argv[argv.index("--") + 1] == "h"
    remote = argv[-1]
    assert remote.startswith(f"cd '{fake_codex.workspace}' && IFS= read -r CODEX_API_KEY")
    assert f"'{sys.executable}' '{fake_codex.server_script}'" in remote
    started = fake_codex.started()
    assert started["api_key"] == fake_codex.api_key, "the app-server got the key from stdin"
    assert Path(started["cwd"]) == fake_codex.workspace
    checked(fake_codex)  # and the key line never reached the app-server as input


async def test_ssh_without_a_key_reads_nothing_from_stdin(fake_codex: FakeCodex) -> None:
    ssh_bin = fake_codex.install_ssh()
    env = {
        "PATH": f"{ssh_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_SSH_ARGV": str(fake_codex.root / "ssh_argv.jsonl"),
    }
    adapter = fake_codex.adapter(fake_codex.script().start(), env=env, ssh=SshSettings(("h",)))
    session = await adapter.start_session(fake_codex.workspace)
    await stopped(adapter, session)
    (argv,) = fake_codex.ssh_argvs()
    assert "read -r" not in argv[-1]
    assert fake_codex.started()["api_key"] is None
    checked(fake_codex)


async def test_ssh_without_an_ssh_binary_is_agent_not_found(fake_codex: FakeCodex) -> None:
    adapter = fake_codex.adapter(
        fake_codex.script(), env={"PATH": str(fake_codex.root)}, ssh=SshSettings(("h",))
    )
    with pytest.raises(AgentError) as raised:
        await adapter.start_session(fake_codex.workspace)
    assert raised.value.kind is AdapterErrorKind.AGENT_NOT_FOUND
    assert "ssh" in raised.value.message


async def test_a_grant_root_does_not_stick_to_the_item(
    fake_codex: FakeCodex, recorder: Recorder
) -> None:
    script = (
        turn_begun(fake_codex)
        .notify("item/started", file_change_item([str(fake_codex.workspace / "a.py")]))
        .request(5, "item/fileChange/requestApproval", file_change_approval(grant_root="/"))
        .expect_reply(5)
        .request(6, "item/fileChange/requestApproval", file_change_approval(grant_root=None))
        .expect_reply(6)
        .turn_completed()
    )
    await one_turn(fake_codex, script, recorder, "edit")
    replies = fake_codex.replies()
    assert replies[5]["result"] == {"decision": "decline"}, "a grant of / is outside"
    assert replies[6]["result"] == {"decision": "accept"}, "a.py alone is inside"
