"""The copilot-cli adapter: one `copilot -p` process per turn.

start_session checks (workspace, binary, canary, credential) and spawns
nothing; run_turn spawns the CLI in the workspace, relays its events as
they arrive, and maps its exit; stop_session stops a running turn's process
group. The session id is learnt from the first turn's result line and used
as `--resume ID` afterwards (`--continue` if a turn never reported one).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_driver.adapters.copilot_cli import preflight
from copilot_driver.adapters.copilot_cli.events import TurnParser
from copilot_driver.adapters.copilot_cli.options import (
    DEFAULT_COMMAND,
    CopilotCliOptions,
    build_args,
)
from copilot_driver.adapters.core.errors import AgentError, ErrorKind
from copilot_driver.adapters.core.events import EventType
from copilot_driver.adapters.core.process import AgentProcess, LineOverflow
from copilot_driver.adapters.core.session import (
    AdapterConfig,
    EventCallback,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.ssh import find_ssh, ssh_argv
from copilot_driver.adapters.core.workspace import validate_workspace

log = logging.getLogger(__name__)

KIND = "copilot-cli"


@dataclass(eq=False)
class CopilotCliSession(Session):
    binary: str = ""
    """The local agent binary, or the local `ssh` in SSH mode."""
    remote_command: str | None = None
    turns_run: int = 0
    process: AgentProcess | None = None


class CopilotCliAdapter:
    kind = KIND

    def __init__(self, config: AdapterConfig | None = None) -> None:
        self.config = config or AdapterConfig()
        self.options = CopilotCliOptions.from_mapping(self.config.options)
        self.command = self.config.command or DEFAULT_COMMAND

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> CopilotCliSession:
        ssh = self.config.ssh
        path = validate_workspace(workspace, remote=ssh is not None)
        env = self.config.agent_environment()
        if ssh is not None:
            ssh_binary = find_ssh(env)
            return CopilotCliSession(
                workspace=path,
                id=resume_session_id or "",
                ssh_host=ssh.pick_host(),
                binary=ssh_binary,
                remote_command=self.command,
            )
        binary = shutil.which(self.command, path=env.get("PATH"))
        if binary is None:
            raise AgentError(
                ErrorKind.AGENT_NOT_FOUND,
                f"the Copilot CLI {self.command!r} was not found on PATH "
                "(install @github/copilot, or set agent.command to its path)",
            )
        version = await preflight.canary(binary, env, self.config.read_timeout_ms / 1000)
        source = await preflight.check_authentication(env)
        log.info(
            "copilot-cli session ready: %s, credential from %s",
            version.splitlines()[0] if version else "?",
            source,
        )
        return CopilotCliSession(workspace=path, id=resume_session_id or "", binary=binary)

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult:
        if not isinstance(session, CopilotCliSession):
            raise TypeError(f"not a {KIND} session: {session!r}")
        async with session.lock:
            return await self._run_turn(session, prompt, on_event)

    async def stop_session(self, session: Session) -> None:
        if isinstance(session, CopilotCliSession) and session.process is not None:
            await session.process.stop()

    # -- one turn --------------------------------------------------------

    async def _run_turn(
        self, session: CopilotCliSession, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        usage_path = None if session.ssh_host else _reserve_usage_file()
        continue_latest = not session.id and session.turns_run > 0
        session.turns_run += 1
        argv, cwd = self._command_line(session, prompt, continue_latest, usage_path)
        parser = TurnParser(
            session_id=session.id,
            usage_before=session.usage,
            report_covers_session=bool(session.id) or continue_latest,
            ssh_host=session.ssh_host,
        )
        try:
            process = await AgentProcess.spawn(argv, cwd=cwd, env=self.config.agent_environment())
        except BaseException as exc:
            _discard(usage_path)
            if isinstance(exc, asyncio.CancelledError):  # asyncio stops a half-started child
                reason = str(exc.args[0]) if exc.args else "turn cancelled"
                self._ended(session, parser, on_event, AgentError(ErrorKind.TURN_CANCELLED, reason))
                raise
            if not isinstance(exc, OSError | ValueError):
                raise
            return self._ended(session, parser, on_event, _spawn_failure(argv[0], exc))
        session.process = process
        where = f"on {session.ssh_host}" if session.ssh_host else f"in {session.workspace}"
        on_event(
            parser.event(EventType.SESSION_STARTED, f"copilot started {where} (pid {process.pid})")
        )
        try:
            try:
                async for line in process.lines():
                    if isinstance(line, LineOverflow):
                        events = parser.overflow(line.size)
                    else:
                        events = parser.feed(line)
                    for event in events:
                        on_event(event)
            except OSError as exc:  # the pipe broke: the seed's scanner failure
                error = AgentError(ErrorKind.PORT_EXIT, f"reading copilot's output failed: {exc}")
                return self._ended(session, parser, on_event, error)
            returncode = await process.wait()
            usage_report = _read_usage_file(usage_path)
        except asyncio.CancelledError as cancel:
            await process.stop()
            reason = str(cancel.args[0]) if cancel.args else "turn cancelled"
            self._ended(session, parser, on_event, AgentError(ErrorKind.TURN_CANCELLED, reason))
            raise
        finally:
            await process.stop()  # also ends anything the agent left running in its group
            session.process = None
            _discard(usage_path)
        events, result = parser.finish(
            returncode, stderr=process.stderr_tail(), usage_report=usage_report
        )
        session.id, session.usage = parser.session_id, parser.usage
        for event in events:
            on_event(event)
        return result

    def _command_line(
        self,
        session: CopilotCliSession,
        prompt: str,
        continue_latest: bool,
        usage_path: Path | None,
    ) -> tuple[list[str], Path | None]:
        """The argv of one turn, and the local directory to run it in."""
        args = build_args(
            self.options,
            prompt,
            resume_session_id=session.id or None,
            continue_latest=continue_latest,
            usage_file=str(usage_path) if usage_path else None,
        )
        if session.ssh_host is None:
            return [session.binary, *args], session.workspace
        assert self.config.ssh is not None
        assert session.remote_command is not None
        remote = [session.remote_command, *args]
        workspace = str(session.workspace)
        return ssh_argv(session.binary, self.config.ssh, session.ssh_host, workspace, remote), None

    def _ended(
        self,
        session: CopilotCliSession,
        parser: TurnParser,
        on_event: EventCallback,
        error: AgentError,
    ) -> TurnResult:
        """End a turn the agent did not end itself (spawn failure, broken pipe, cancel)."""
        events, result = parser.fail(error)
        session.id, session.usage = parser.session_id, parser.usage
        for event in events:
            on_event(event)
        return result


def _spawn_failure(binary: str, exc: OSError | ValueError) -> AgentError:
    if isinstance(exc, OSError):
        message = f"cannot start {binary}: {exc.strerror or exc}"
        return AgentError(ErrorKind.AGENT_NOT_FOUND, message)
    # ValueError: a NUL byte, which no command line can carry; a retry cannot help
    return AgentError(ErrorKind.TURN_FAILED, f"cannot start {binary}: {exc}", retryable=False)


def _reserve_usage_file() -> Path:
    fd, name = tempfile.mkstemp(prefix="copilot-usage-", suffix=".json")
    os.close(fd)
    return Path(name)


def _read_usage_file(path: Path | None) -> Any:
    """The CLI's usage report, or None when it wrote none (or nothing readable)."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if text.strip() else None
    except (OSError, ValueError, RecursionError):
        return None


def _discard(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()
