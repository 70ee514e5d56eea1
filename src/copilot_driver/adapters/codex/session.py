"""A Codex session's state, and the pipe to its app-server: JSON-RPC lines written to
its stdin, its stdout served until it ends, then everything waiting on it failed with
what the process said last."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from copilot_driver.adapters.codex.translate import CodexTranslator
from copilot_driver.adapters.core.agent_events import shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.jsonrpc import ConnectionClosedError, JsonRpcConnection
from copilot_driver.adapters.core.process import AgentProcess
from copilot_driver.adapters.core.session import EventCallback, Session
from copilot_driver.vocabulary import AdapterErrorKind


@dataclass
class ActiveTurn:
    translator: CodexTranslator
    on_event: EventCallback
    inbox: asyncio.Queue[tuple[str, Any] | None] = field(default_factory=asyncio.Queue)
    """This turn's notifications, in order; None when the app-server is gone."""


@dataclass(eq=False)
class CodexSession(Session):
    process: AgentProcess | None = None
    rpc: JsonRpcConnection | None = None
    reader: asyncio.Task[None] | None = None
    turn: ActiveTurn | None = None
    turns_run: int = 0
    resumed: bool = False
    """True when `resume_session_id` was resumed, False when a new thread replaced it."""
    file_changes: dict[str, list[str]] = field(default_factory=dict)
    login: asyncio.Future[Mapping[str, Any]] | None = None


async def write_line(session: CodexSession, line: str) -> None:
    process = session.process
    stdin = process.stdin if process else None
    if stdin is None or stdin.is_closing():
        raise ConnectionClosedError("codex app-server's stdin is closed")
    try:
        stdin.write(line.encode() + b"\n")
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise ConnectionClosedError(f"codex app-server's stdin is closed: {exc}") from None


async def serve_output(session: CodexSession) -> None:
    """Serve the app-server's output until it ends; then fail what waits on it."""
    assert session.process is not None
    assert session.rpc is not None
    try:
        await session.rpc.serve(session.process.lines())
    finally:
        session.rpc.close(process_story(session))
        if session.turn is not None:
            session.turn.inbox.put_nowait(None)


def process_story(session: CodexSession) -> str:
    process = session.process
    if process is None:
        return "codex app-server is not running"
    tail = process.stderr_tail().strip().splitlines()
    last = f": {shorten(tail[-1], 300)}" if tail else ""
    status = f" (status {process.returncode})" if process.returncode is not None else ""
    return f"codex app-server closed its output{status}{last}"


def exited(exc: ConnectionClosedError) -> AgentError:
    """The app-server went away while a turn ran."""
    return AgentError(AdapterErrorKind.PORT_EXIT, f"{exc} (mid-turn)")


def rpc_of(session: CodexSession) -> JsonRpcConnection:
    assert session.rpc is not None
    return session.rpc
