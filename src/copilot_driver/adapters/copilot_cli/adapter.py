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
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_driver.adapters.copilot_cli import preflight
from copilot_driver.adapters.copilot_cli.mcp_file import mcp_config_problem
from copilot_driver.adapters.copilot_cli.options import (
    DEFAULT_COMMAND,
    CopilotCliOptions,
    build_args,
)
from copilot_driver.adapters.copilot_cli.translate import CopilotCliTranslator
from copilot_driver.adapters.core.agent_events import EventType
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.process import AgentProcess, LineOverflow
from copilot_driver.adapters.core.session import (
    EventCallback,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.ssh import ssh_argv
from copilot_driver.adapters.core.turn import TurnAdapter, cancelled, emit
from copilot_driver.adapters.core.workspace import place_agent
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

KIND = "copilot-cli"


@dataclass(eq=False)
class CopilotCliSession(Session):
    binary: str = ""
    """The local agent binary, or the local `ssh` in SSH mode."""
    remote_command: str | None = None
    turns_run: int = 0
    process: AgentProcess | None = None


class CopilotCliAdapter(TurnAdapter[CopilotCliSession, CopilotCliOptions]):
    kind = KIND
    default_command = DEFAULT_COMMAND

    def option_problems(self, workspace: Path | None) -> list[str]:
        problem = mcp_config_problem(self.options, workspace)
        return [problem] if problem else []

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> CopilotCliSession:
        placed = place_agent(
            self.config, workspace, self.command, agent="Copilot CLI", package="@github/copilot"
        )
        session = CopilotCliSession(
            workspace=placed.workspace,
            id=resume_session_id or "",
            ssh_host=placed.ssh_host,
            binary=placed.binary,
        )
        if placed.ssh_host is not None:
            session.remote_command = self.command
            return session
        env = placed.environment
        version = await preflight.canary(placed.binary, env, self.config.read_timeout_ms / 1000)
        source = await preflight.check_authentication(env)
        log.info(
            "copilot-cli session ready: %s, credential from %s",
            version.splitlines()[0] if version else "?",
            source,
        )
        return session

    async def _stop_session(self, session: CopilotCliSession) -> None:
        if session.process is not None:
            await session.process.stop()

    # -- one turn --------------------------------------------------------

    async def _run_turn(
        self, session: CopilotCliSession, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        usage_path = None if session.ssh_host else _reserve_usage_file()
        continue_latest = not session.id and session.turns_run > 0
        session.turns_run += 1
        argv, cwd = self._command_line(session, prompt, continue_latest, usage_path)
        translator = CopilotCliTranslator(
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
                self._ended(session, translator, on_event, cancelled(exc))
                raise
            if not isinstance(exc, OSError | ValueError):
                raise
            return self._ended(session, translator, on_event, _spawn_failure(argv[0], exc))
        session.process = process
        where = f"on {session.ssh_host}" if session.ssh_host else f"in {session.workspace}"
        on_event(
            translator.event(
                EventType.SESSION_STARTED, f"copilot started {where} (pid {process.pid})"
            )
        )
        try:
            try:
                async for line in process.lines():
                    if isinstance(line, LineOverflow):
                        events = translator.overflow(line.size)
                    else:
                        events = translator.feed(line)
                    emit(events, on_event)
            except OSError as exc:  # the pipe broke: the agent's output is lost
                error = AgentError(
                    AdapterErrorKind.PORT_EXIT, f"reading copilot's output failed: {exc}"
                )
                return self._ended(session, translator, on_event, error)
            returncode = await process.wait()
            usage_report = _read_usage_file(usage_path)
        except asyncio.CancelledError as cancel:
            await process.stop()
            self._ended(session, translator, on_event, cancelled(cancel))
            raise
        finally:
            await process.stop()  # also ends anything the agent left running in its group
            session.process = None
            _discard(usage_path)
        events, result = translator.finish(
            returncode, stderr=process.stderr_tail(), usage_report=usage_report
        )
        session.id, session.usage = translator.session_id, translator.usage
        emit(events, on_event)
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
        translator: CopilotCliTranslator,
        on_event: EventCallback,
        error: AgentError,
    ) -> TurnResult:
        """End a turn the agent did not end itself (spawn failure, broken pipe, cancel)."""
        events, result = translator.fail(error)
        session.id, session.usage = translator.session_id, translator.usage
        emit(events, on_event)
        return result


def _spawn_failure(binary: str, exc: OSError | ValueError) -> AgentError:
    if isinstance(exc, OSError):
        message = f"cannot start {binary}: {exc.strerror or exc}"
        return AgentError(AdapterErrorKind.AGENT_NOT_FOUND, message)
    # ValueError: a NUL byte, which no command line can carry; a retry cannot help
    return AgentError(
        AdapterErrorKind.TURN_FAILED, f"cannot start {binary}: {exc}", retryable=False
    )


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
