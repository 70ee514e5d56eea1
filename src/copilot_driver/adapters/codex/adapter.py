"""The codex adapter: one persistent `codex app-server` per session, JSON-RPC on stdio.

start_session spawns the app-server in the workspace (own process group),
runs the handshake (`initialize`, `initialized`), checks the account (API
key login with `CODEX_API_KEY` when there is none), and starts a thread or
resumes one (falling back to a new thread). run_turn sends `turn/start`
and relays notifications until this turn's `turn/completed`, answering the
server's requests meanwhile: dynamic tool calls (concurrently) and approval
requests (by policy; server_requests.py answers them). Cancelling a turn
sends `turn/interrupt` and waits briefly for Codex to confirm. stop_session
closes stdin, then SIGTERM to the group, then SIGKILL. session.py holds the
session's state and its pipe to the app-server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

from copilot_driver.adapters.codex.options import DEFAULT_COMMAND, CodexOptions
from copilot_driver.adapters.codex.server_requests import answer_request
from copilot_driver.adapters.codex.session import (
    ActiveTurn,
    CodexSession,
    exited,
    process_story,
    rpc_of,
    serve_output,
    write_line,
)
from copilot_driver.adapters.codex.translate import CodexTranslator
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.jsonrpc import ConnectionClosedError, JsonRpcConnection, RpcError
from copilot_driver.adapters.core.payload import as_list, as_mapping, as_str
from copilot_driver.adapters.core.process import AgentProcess
from copilot_driver.adapters.core.session import AdapterConfig, EventCallback, TurnResult
from copilot_driver.adapters.core.ssh import ssh_argv
from copilot_driver.adapters.core.tools import ToolRegistry
from copilot_driver.adapters.core.turn import SESSION_STOPPED, TurnAdapter, cancelled, emit
from copilot_driver.adapters.core.workspace import place_agent
from copilot_driver.env_commands import CODEX_API_KEY
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

KIND = "codex"
API_KEY_VARIABLE = CODEX_API_KEY.name
CLIENT_INFO = {"name": "copilot_driver", "title": "copilot-driver adapters", "version": "1"}
INTERRUPT_REQUEST_TIMEOUT_S = 2.0
STDIN_CLOSE_GRACE_S = 2.0


class CodexAdapter(TurnAdapter[CodexSession, CodexOptions]):
    kind = KIND
    default_command = DEFAULT_COMMAND

    def __init__(self, config: AdapterConfig | None = None) -> None:
        super().__init__(config)
        command = self.command.strip()
        if not command:
            raise AgentError(AdapterErrorKind.AGENT_NOT_FOUND, "agent.command is empty")
        self.binary, _, rest = command.partition(" ")
        self.arguments = rest.split()
        self.tools = ToolRegistry(self.config.tools)

    @property
    def _timeout_s(self) -> float:
        return self.config.read_timeout_ms / 1000

    # -- start -----------------------------------------------------------

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> CodexSession:
        placed = place_agent(
            self.config, workspace, self.binary, agent="Codex CLI", package="@openai/codex"
        )
        env, path = placed.environment, placed.workspace
        api_key = env.get(API_KEY_VARIABLE, "").strip()
        session = CodexSession(workspace=path, ssh_host=placed.ssh_host)
        if self.config.ssh is not None and placed.ssh_host is not None:
            # OpenSSH does not forward the environment; the key travels on
            # stdin, never on a command line (where `ps` would show it).
            secrets = [API_KEY_VARIABLE] if api_key else []
            argv = ssh_argv(
                placed.binary,
                self.config.ssh,
                placed.ssh_host,
                str(path),
                [self.binary, *self.arguments],
                read_from_stdin=secrets,
            )
            cwd = None
        else:
            argv, cwd = [placed.binary, *self.arguments], path
        try:
            session.process = await AgentProcess.spawn(argv, cwd=cwd, env=env, stdin_pipe=True)
        except (OSError, ValueError) as exc:
            raise AgentError(AdapterErrorKind.PORT_EXIT, f"cannot start {argv[0]}: {exc}") from None
        session.rpc = JsonRpcConnection(
            lambda line: write_line(session, line),
            on_notification=lambda method, params: self._notified(session, method, params),
            on_request=lambda method, params: answer_request(
                session, method, params, tools=self.tools, approvals=self.options.approvals
            ),
        )
        session.reader = asyncio.create_task(serve_output(session))
        try:
            if placed.ssh_host is not None and api_key:
                await write_line(session, api_key)
            await self._handshake(session, api_key)
            session.id = await self._open_thread(session, resume_session_id)
        except BaseException as exc:
            await self._stop_session(session)
            if isinstance(exc, RpcError | ConnectionClosedError | TimeoutError):
                raise AgentError(
                    AdapterErrorKind.RESPONSE_ERROR,
                    f"codex app-server start-up failed: {_describe(exc)}",
                ) from None
            raise
        return session

    async def _handshake(self, session: CodexSession, api_key: str) -> None:
        rpc = rpc_of(session)
        await rpc.request(
            "initialize",
            {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}},
            timeout=self._timeout_s,
        )
        await rpc.notify("initialized")
        account = await rpc.request(
            "account/read", {"refreshToken": False}, timeout=self._timeout_s
        )
        if as_mapping(account).get("account") is not None or not api_key:
            return
        session.login = asyncio.get_running_loop().create_future()
        await rpc.request(
            "account/login/start", {"type": "apiKey", "apiKey": api_key}, timeout=self._timeout_s
        )
        completed = await asyncio.wait_for(session.login, self._timeout_s)
        if completed.get("success") is not True:
            raise RpcError(
                0, f"API key login failed: {completed.get('error') or 'no reason given'}"
            )

    async def _open_thread(self, session: CodexSession, resume_id: str | None) -> str:
        rpc = rpc_of(session)
        params = self.options.thread_params(str(session.workspace))
        if resume_id:
            # A resumed thread keeps the dynamic tools it was started with
            # (Codex restores them from its rollout); this session answers
            # the calls for the ones it registers.
            try:
                result = await rpc.request(
                    "thread/resume", {**params, "threadId": resume_id}, timeout=self._timeout_s
                )
                session.resumed = True
                return _thread_id(result)
            except RpcError as exc:
                log.warning("cannot resume thread %s (%s); starting a new one", resume_id, exc)
        if len(self.tools):
            params["dynamicTools"] = self.tools.specs()
        result = await rpc.request("thread/start", params, timeout=self._timeout_s)
        return _thread_id(result)

    # -- turns -----------------------------------------------------------

    async def _run_turn(
        self, session: CodexSession, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        process = session.process
        translator = CodexTranslator(
            session.id, usage_before=session.usage, pid=process.pid if process else None
        )
        first_turn = session.turns_run == 0
        session.turns_run += 1
        if process is None or process.returncode is not None or session.rpc is None:
            error = AgentError(AdapterErrorKind.PORT_EXIT, "codex app-server is not running")
            return translator.end(error, on_event)
        active = ActiveTurn(translator, on_event)
        session.turn = active
        if first_turn:
            on_event(translator.session_started())
        try:
            params = self.options.turn_params(session.id, prompt, str(session.workspace))
            try:
                started = await session.rpc.request("turn/start", params, timeout=self._timeout_s)
            except RpcError as exc:
                error = AgentError(AdapterErrorKind.TURN_FAILED, f"turn/start failed: {exc}")
                return translator.end(error, on_event)
            except TimeoutError:
                message = f"turn/start had no answer within {self._timeout_s:g} s"
                return translator.end(
                    AgentError(AdapterErrorKind.RESPONSE_TIMEOUT, message), on_event
                )
            except ConnectionClosedError as exc:
                return translator.end(exited(exc), on_event)
            translator.turn_id = translator.turn_id or as_str(
                as_mapping(as_mapping(started).get("turn")).get("id")
            )
            while translator.completed is None:
                item = await active.inbox.get()
                if item is None:
                    closed = ConnectionClosedError(process_story(session))
                    return translator.end(exited(closed), on_event)
                emit(translator.feed(*item), on_event)
            await session.rpc.drain()  # in-flight tool calls answered before the turn returns
        except asyncio.CancelledError as cancel:
            await self._interrupt(session, active)
            translator.end(cancelled(cancel), on_event)
            raise
        finally:
            session.turn = None
            session.usage = translator.usage
        events, result = translator.finish()
        emit(events, on_event)
        return result

    async def _interrupt(self, session: CodexSession, active: ActiveTurn) -> None:
        """Ask Codex to stop the turn, and wait briefly for it to say so."""
        translator, rpc = active.translator, session.rpc
        if not translator.turn_id or rpc is None or translator.completed is not None:
            return
        try:
            await rpc.request(
                "turn/interrupt",
                {"threadId": session.id, "turnId": translator.turn_id},
                timeout=INTERRUPT_REQUEST_TIMEOUT_S,
            )
            deadline = time.monotonic() + self.options.interrupt_wait_ms / 1000
            while translator.completed is None:
                item = await asyncio.wait_for(active.inbox.get(), deadline - time.monotonic())
                if item is None:
                    return
                emit(translator.feed(*item), active.on_event)
        except (RpcError, ConnectionClosedError, TimeoutError) as exc:
            log.warning(
                "codex did not confirm the interrupt of turn %s: %s", translator.turn_id, exc
            )

    # -- what the server sends -------------------------------------------

    def _notified(self, session: CodexSession, method: str, params: Any) -> None:
        data = as_mapping(params)
        if method == "account/login/completed":
            if session.login is not None and not session.login.done():
                session.login.set_result(data)
            return
        item = as_mapping(data.get("item"))
        if method == "item/started" and item.get("type") == "fileChange":
            paths = [as_str(as_mapping(c).get("path")) for c in as_list(item.get("changes"))]
            session.file_changes[as_str(item.get("id"))] = [p for p in paths if p]
        elif method == "item/completed":
            session.file_changes.pop(as_str(item.get("id")), None)
        if session.turn is not None:
            session.turn.inbox.put_nowait((method, params))
        else:
            log.debug("codex notification outside a turn: %s", method)

    # -- stop ------------------------------------------------------------

    async def _stop_session(self, session: CodexSession) -> None:
        """Close stdin (the app-server exits on EOF), then stop the group."""
        process = session.process
        if process is None:
            return
        stdin = process.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(OSError, RuntimeError):
                stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), STDIN_CLOSE_GRACE_S)
        await process.stop()
        if session.reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait({session.reader}, timeout=1.0)
            session.reader.cancel()
        if session.rpc is not None:
            session.rpc.close(SESSION_STOPPED)
            await session.rpc.aclose()


def _thread_id(result: Any) -> str:
    thread_id = as_str(as_mapping(as_mapping(result).get("thread")).get("id"))
    if not thread_id:
        raise RpcError(0, "the thread response carries no thread id")
    return thread_id


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return str(exc)
