"""The `copilot-transcript` kind: multi-turn context over a stateless `copilot -p`.

Each turn is a fresh CLI session; the conversation so far travels inside
the prompt, as a plain-text transcript of the most recent exchanges (see
`prompt.py`). Replies are stored and returned without ANSI escape
sequences, so terminal colouring never leaks into the next prompt. Only
completed turns enter the transcript. The CLI runs through the copilot-cli
adapter, so a transcript turn emits the same domain events (with the
transcript session's id).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver.adapters.copilot_cli.adapter import CopilotCliAdapter, CopilotCliSession
from copilot_driver.adapters.copilot_cli.mcp_file import mcp_config_problem
from copilot_driver.adapters.copilot_cli.options import DEFAULT_COMMAND
from copilot_driver.adapters.copilot_transcript.options import TranscriptOptions
from copilot_driver.adapters.copilot_transcript.prompt import Exchange, build_prompt, strip_ansi
from copilot_driver.adapters.core.agent_events import AgentEvent
from copilot_driver.adapters.core.session import (
    AdapterConfig,
    EventCallback,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.turn import TurnAdapter

KIND = "copilot-transcript"


@dataclass(eq=False)
class TranscriptSession(Session):
    history: list[Exchange] = field(default_factory=list)
    binary: str = ""
    remote_command: str | None = None
    current: CopilotCliSession | None = None


class CopilotTranscriptAdapter(TurnAdapter[TranscriptSession, TranscriptOptions]):
    kind = KIND
    default_command = DEFAULT_COMMAND

    def __init__(self, config: AdapterConfig | None = None) -> None:
        super().__init__(config)
        cli_options = {
            name: value
            for name, value in (self.config.options or {}).items()
            if name != "transcript_turns"
        }
        self._cli = CopilotCliAdapter(
            AdapterConfig(
                command=self.config.command,
                options=cli_options,
                ssh=self.config.ssh,
                read_timeout_ms=self.config.read_timeout_ms,
                environment=self.config.environment,
            )
        )

    def option_problems(self, workspace: Path | None) -> list[str]:
        problem = mcp_config_problem(self.options, workspace)
        return [problem] if problem else []

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> TranscriptSession:
        """Checks like copilot-cli; the transcript itself lives only in memory."""
        checked = await self._cli.start_session(workspace)
        return TranscriptSession(
            workspace=checked.workspace,
            id=resume_session_id or f"transcript-{uuid.uuid4()}",
            ssh_host=checked.ssh_host,
            binary=checked.binary,
            remote_command=checked.remote_command,
        )

    async def _run_turn(
        self, session: TranscriptSession, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        # A new, stateless CLI session per turn: no --resume, no --continue.
        inner = CopilotCliSession(
            workspace=session.workspace,
            ssh_host=session.ssh_host,
            usage=session.usage,
            binary=session.binary,
            remote_command=session.remote_command,
        )
        session.current = inner

        def relay(event: AgentEvent) -> None:
            on_event(event.replace(session_id=session.id))

        try:
            result = await self._cli.run_turn(
                inner, build_prompt(session.history, prompt), on_event=relay
            )
        finally:
            session.current = None
            session.usage = inner.usage
        reply = strip_ansi(result.reply).strip()
        if result.ok:
            session.history.append(Exchange(prompt, reply))
            del session.history[: -self.options.transcript_turns]
        return TurnResult(
            session_id=session.id,
            exit_reason=result.exit_reason,
            usage=result.usage,
            error=result.error,
            reply=reply,
            api_duration_ms=result.api_duration_ms,
        )

    async def _stop_session(self, session: TranscriptSession) -> None:
        if session.current is not None:
            await self._cli.stop_session(session.current)
