"""The tool-loop adapter on a mocked HTTP endpoint: sessions, events, key, stop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from copilot_driver.adapters import (
    AdapterConfig,
    AdapterErrorKind,
    AgentError,
    AgentEvent,
    EventType,
    ExitReason,
    RunnerLimits,
    Session,
    SshSettings,
    TurnRunner,
    adapter_spec,
    get_adapter,
    preflight,
)
from copilot_driver.adapters.tool_loop import ToolLoopAdapter, ToolLoopSession
from copilot_driver.adapters.tool_loop.loop import DEFAULT_SYSTEM_PROMPT
from helpers.workspaces import workspace_fixture

BASE_URL = "http://model.test/v1"
OPTIONS = {"base_url": BASE_URL, "model": "gpt-test"}


def sse(text: str = "", calls: tuple[tuple[str, dict[str, Any]], ...] = ()) -> httpx.Response:
    """A streamed answer: the text in two deltas, each call's arguments in two fragments."""
    chunks: list[dict[str, Any]] = []
    if text:
        half = len(text) // 2
        chunks += [
            {"choices": [{"index": 0, "delta": {"content": t}}]} for t in (text[:half], text[half:])
        ]
    for index, (name, arguments) in enumerate(calls):
        raw = json.dumps(arguments)
        head = {
            "index": index,
            "id": f"call_{index}",
            "function": {"name": name, "arguments": raw[:3]},
        }
        tail = {"index": index, "function": {"arguments": raw[3:]}}
        chunks += [
            {"choices": [{"index": 0, "delta": {"tool_calls": [part]}}]} for part in (head, tail)
        ]
    finish = "tool_calls" if calls else "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


class Endpoint:
    """A mocked chat-completions endpoint that answers with `answers` in turn
    (the last one repeats) and keeps every request."""

    def __init__(self, *answers: httpx.Response | Handler) -> None:
        self.answers = answers
        self.requests: list[httpx.Request] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, httpx.Response):
            return answer
        result = answer(request)
        return await result if isinstance(result, Awaitable) else result

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def adapter(self, environment: dict[str, str] | None = None, **options: Any) -> ToolLoopAdapter:
        config = AdapterConfig(options={**OPTIONS, **options}, environment=environment or {})
        return ToolLoopAdapter(config, transport=httpx.MockTransport(self.handle))


workspace = workspace_fixture(files={"notes.txt": "draft\n"})


async def turn(
    adapter: ToolLoopAdapter, session: Session, prompt: str = "go"
) -> tuple[Any, list[AgentEvent]]:
    events: list[AgentEvent] = []
    result = await adapter.run_turn(session, prompt, on_event=events.append)
    return result, events


# -- registration --------------------------------------------------------------------


def test_the_kind_is_registered_needs_no_command_and_reads_its_block() -> None:
    spec = adapter_spec("tool-loop")
    assert spec.requires_command is False
    assert spec.options_block == "tool-loop"
    adapter = get_adapter("tool-loop", AdapterConfig(options=OPTIONS))
    assert isinstance(adapter, ToolLoopAdapter)
    preflight("tool-loop", AdapterConfig(options=OPTIONS))  # no binary to look for


# -- sessions ---------------------------------------------------------------------------


async def test_a_session_has_its_own_id_and_starts_with_the_system_prompt(workspace: Path) -> None:
    session = await Endpoint().adapter().start_session(workspace)
    assert isinstance(session, ToolLoopSession)
    assert session.id.startswith("tool-loop-")
    assert session.root == workspace.resolve()
    assert session.messages == [{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}]


async def test_an_empty_system_prompt_sends_none_and_a_resumed_id_is_kept(
    workspace: Path,
) -> None:
    adapter = Endpoint().adapter(system_prompt="")
    session = await adapter.start_session(workspace, resume_session_id="tool-loop-earlier")
    assert session.id == "tool-loop-earlier"
    assert session.messages == []


@pytest.mark.parametrize("where", ["relative/dir", "/does/not/exist"])
async def test_a_bad_workspace_fails_before_the_session(where: str) -> None:
    with pytest.raises(AgentError) as caught:
        await Endpoint().adapter().start_session(where)
    assert caught.value.kind is AdapterErrorKind.INVALID_WORKSPACE_CWD


async def test_ssh_hosts_are_refused_as_the_tools_work_on_local_files(workspace: Path) -> None:
    config = AdapterConfig(options=OPTIONS, ssh=SshSettings(("build-1",)))
    with pytest.raises(AgentError, match="ssh_hosts is not supported"):
        await ToolLoopAdapter(config).start_session(workspace)


async def test_another_kinds_session_is_refused(workspace: Path) -> None:
    with pytest.raises(TypeError):
        await Endpoint().adapter().run_turn(Session(workspace), "go", on_event=print)


# -- a turn ---------------------------------------------------------------------------------


async def test_a_turn_maps_every_loop_event_and_changes_the_workspace(workspace: Path) -> None:
    endpoint = Endpoint(
        sse(
            "Editing.\n",
            (("edit_file", {"path": "notes.txt", "old_str": "draft", "new_str": "final"}),),
        ),
        sse("The notes are final."),
    )
    adapter = endpoint.adapter()
    session = await adapter.start_session(workspace)
    result, events = await turn(adapter, session, "finish the notes")

    assert result.ok, result.error
    assert result.reply == "The notes are final."
    assert (workspace / "notes.txt").read_text() == "final\n"
    assert {e.session_id for e in events} == {session.id}
    types = [e.type for e in events]
    assert types[0] is EventType.SESSION_STARTED
    assert types[-1] is EventType.TURN_COMPLETED
    (tool_result,) = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert tool_result.tool_name == "edit_file"
    assert tool_result.tool_error is False
    assert tool_result.tool_duration_ms is not None
    messages = [e.message for e in events if e.type is EventType.NOTIFICATION]
    assert messages == [
        "Editing.\n",
        "tool edit_file started: notes.txt",
        "file modified: notes.txt",
        "The notes are final.",
    ]
    usage = [e.usage for e in events if e.type is EventType.TOKEN_USAGE]
    assert [u.input_tokens for u in usage if u] == [10, 20]
    assert events[-1].usage == result.usage
    assert result.usage.model == "gpt-test"
    assert result.api_duration_ms is not None


async def test_the_next_turn_continues_the_conversation_and_the_usage(workspace: Path) -> None:
    endpoint = Endpoint(sse("first answer"), sse("second answer"))
    adapter = endpoint.adapter()
    session = await adapter.start_session(workspace)
    first, _ = await turn(adapter, session, "first question")
    second, _ = await turn(adapter, session, "second question")

    assert second.reply == "second answer"
    assert [m["content"] for m in endpoint.bodies()[1]["messages"]] == [
        DEFAULT_SYSTEM_PROMPT,
        "first question",
        "first answer",
        "second question",
    ]
    assert second.usage.input_tokens == first.usage.input_tokens + 10


async def test_the_key_comes_from_the_variable_named_by_api_key_env(workspace: Path) -> None:
    endpoint = Endpoint(sse("hi"))
    adapter = endpoint.adapter({"MY_MODEL_KEY": "sk-from-env"}, api_key_env="MY_MODEL_KEY")
    await turn(adapter, await adapter.start_session(workspace))
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_whitespace_around_the_key_is_dropped(workspace: Path) -> None:
    endpoint = Endpoint(sse("hi"))
    adapter = endpoint.adapter({"OPENAI_API_KEY": " sk-pasted\r\n"})
    await turn(adapter, await adapter.start_session(workspace))
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-pasted"


async def test_without_the_key_no_authorization_is_sent(workspace: Path) -> None:
    endpoint = Endpoint(sse("hi"))
    adapter = endpoint.adapter({"OTHER": "x"})
    result, _ = await turn(adapter, await adapter.start_session(workspace))
    assert result.ok
    assert "authorization" not in endpoint.requests[0].headers


async def test_with_no_environment_given_the_process_environment_is_read(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process")
    endpoint = Endpoint(sse("hi"))
    adapter = ToolLoopAdapter(
        AdapterConfig(options=OPTIONS), transport=httpx.MockTransport(endpoint.handle)
    )
    await turn(adapter, await adapter.start_session(workspace))
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-process"


async def test_a_server_error_fails_the_turn_with_a_retryable_response_error(
    workspace: Path,
) -> None:
    endpoint = Endpoint(httpx.Response(503, json={"error": {"message": "overloaded"}}))
    adapter = endpoint.adapter()
    result, events = await turn(adapter, await adapter.start_session(workspace))
    assert result.exit_reason is ExitReason.FAILED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert result.error.retryable
    assert events[-1].type is EventType.TURN_FAILED
    assert events[-1].error_kind is AdapterErrorKind.RESPONSE_ERROR
    assert "overloaded" in events[-1].message


async def test_a_prompt_the_model_never_answered_is_not_sent_twice_on_retry(
    workspace: Path,
) -> None:
    endpoint = Endpoint(httpx.Response(500, json={}), sse("answered"))
    adapter = endpoint.adapter()
    session = await adapter.start_session(workspace)
    failed, _ = await turn(adapter, session, "the question")
    retried, _ = await turn(adapter, session, "the question")
    assert not failed.ok
    assert retried.reply == "answered"
    sent = [m["content"] for m in endpoint.bodies()[1]["messages"]]
    assert sent == [DEFAULT_SYSTEM_PROMPT, "the question"]


async def test_the_round_cap_fails_the_turn(workspace: Path) -> None:
    endpoint = Endpoint(sse(calls=(("list_directory", {}),)))
    adapter = endpoint.adapter(max_rounds=2)
    result, events = await turn(adapter, await adapter.start_session(workspace))
    assert len(endpoint.requests) == 2
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_FAILED
    assert "after 2 rounds" in result.error.message
    assert events[-1].type is EventType.TURN_FAILED


# -- stopping -----------------------------------------------------------------------------


def _hanging(entered: asyncio.Event) -> Handler:
    async def hang(request: httpx.Request) -> httpx.Response:
        entered.set()
        await asyncio.sleep(3600)
        raise AssertionError("not reached")

    return hang


async def test_stop_session_cancels_the_request_in_flight(workspace: Path) -> None:
    entered = asyncio.Event()
    endpoint = Endpoint(_hanging(entered), sse("after the stop"))
    adapter = endpoint.adapter()
    session = await adapter.start_session(workspace)
    events: list[AgentEvent] = []
    running = asyncio.create_task(adapter.run_turn(session, "slow", on_event=events.append))
    await entered.wait()

    await adapter.stop_session(session)
    result = await running

    assert result.exit_reason is ExitReason.CANCELLED
    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_CANCELLED
    assert events[-1].type is EventType.TURN_CANCELLED
    assert "stopped" in events[-1].message
    again, _ = await turn(adapter, session, "again")  # the session still works
    assert again.reply == "after the stop"
    assert [m["content"] for m in endpoint.bodies()[1]["messages"]] == [
        DEFAULT_SYSTEM_PROMPT,
        "again",
    ]


async def test_a_turn_timeout_cancels_the_turn_and_reports_why(workspace: Path) -> None:
    entered = asyncio.Event()
    adapter = Endpoint(_hanging(entered)).adapter()
    runner = TurnRunner(adapter, RunnerLimits(turn_timeout_ms=200, stall_timeout_ms=0))
    session = await runner.start_session(workspace)
    events: list[AgentEvent] = []

    result = await runner.run_turn(session, "slow", on_event=events.append)

    assert result.error is not None
    assert result.error.kind is AdapterErrorKind.TURN_TIMEOUT
    assert events[-1].type is EventType.TURN_CANCELLED
    assert "turn timeout" in events[-1].message


async def test_cancelling_the_caller_propagates_after_reporting_the_cancel(
    workspace: Path,
) -> None:
    entered = asyncio.Event()
    adapter = Endpoint(_hanging(entered)).adapter()
    session = await adapter.start_session(workspace)
    events: list[AgentEvent] = []
    running = asyncio.create_task(adapter.run_turn(session, "slow", on_event=events.append))
    await entered.wait()
    running.cancel("shutting down")
    with pytest.raises(asyncio.CancelledError):
        await running
    assert events[-1].type is EventType.TURN_CANCELLED
    assert events[-1].message == "shutting down"
    assert session.turn_task is None


async def test_concurrent_sessions_keep_their_own_conversations(tmp_path: Path) -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][-1]["content"]
        return sse(f"reply to {prompt}")

    endpoint = Endpoint(echo)
    adapter = endpoint.adapter()
    sessions = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        sessions.append(await adapter.start_session(tmp_path / name))
    results = await asyncio.gather(
        *(turn(adapter, s, f"prompt {i}") for i, s in enumerate(sessions))
    )
    assert [r.reply for r, _ in results] == ["reply to prompt 0", "reply to prompt 1"]
    assert sessions[0].id != sessions[1].id
    assert all(
        [m["content"] for m in s.messages[1:]] == [f"prompt {i}", f"reply to prompt {i}"]
        for i, s in enumerate(sessions)
    )
