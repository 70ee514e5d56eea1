"""The `copilot-transcript` kind: multi-turn context over a stateless `copilot -p`.

Each turn is a fresh CLI session; the conversation so far travels inside
the prompt, as a plain-text transcript of the most recent exchanges:

    Previous conversation:
    User: <turn 1>
    Assistant: <turn 1 reply>

    User: <current message>

Replies are stored and returned without ANSI escape sequences, so terminal
colouring never leaks into the next prompt. Only completed turns enter the
transcript. The CLI runs through the copilot-cli adapter, so a transcript
turn emits the same normalised events (with the transcript session's id).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.adapters.copilot_cli.adapter import CopilotCliAdapter, CopilotCliSession
from copilot_driver.adapters.copilot_cli.options import DEFAULT_COMMAND, CopilotCliOptions
from copilot_driver.adapters.core.events import AgentEvent
from copilot_driver.adapters.core.options import options_from_mapping
from copilot_driver.adapters.core.registry import AdapterSpec, register_adapter
from copilot_driver.adapters.core.session import (
    AdapterConfig,
    EventCallback,
    Session,
    TurnResult,
)

KIND = "copilot-transcript"
BLOCK = "copilot-transcript"
DEFAULT_TRANSCRIPT_TURNS = 10

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[ -/]*[0-~]"  # other escapes: charset (ESC ( B), save/restore (ESC 7), ...
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class Exchange:
    user: str
    assistant: str


def build_prompt(history: Sequence[Exchange], message: str) -> str:
    """The transcript header (when there is history) followed by the new message."""
    if not history:
        return message
    lines = ["Previous conversation:"]
    for exchange in history:
        lines += [f"User: {exchange.user}", f"Assistant: {exchange.assistant}"]
    return "\n".join(lines) + f"\n\nUser: {message}"


@dataclass(frozen=True)
class TranscriptOptions(CopilotCliOptions):
    transcript_turns: int = DEFAULT_TRANSCRIPT_TURNS
    """Exchanges (user message + reply) kept in the transcript."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.transcript_turns < 1:
            raise ValueError("transcript_turns must be 1 or more")

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> TranscriptOptions:
        return options_from_mapping(cls, raw, block=BLOCK)


@dataclass(eq=False)
class TranscriptSession(Session):
    history: list[Exchange] = field(default_factory=list)
    binary: str = ""
    remote_command: str | None = None
    current: CopilotCliSession | None = None


class CopilotTranscriptAdapter:
    kind = KIND

    def __init__(self, config: AdapterConfig | None = None) -> None:
        config = config or AdapterConfig()
        self.options = TranscriptOptions.from_mapping(config.options)
        cli_options = {
            name: value
            for name, value in (config.options or {}).items()
            if name != "transcript_turns"
        }
        self._cli = CopilotCliAdapter(
            AdapterConfig(
                command=config.command,
                options=cli_options,
                ssh=config.ssh,
                read_timeout_ms=config.read_timeout_ms,
                environment=config.environment,
            )
        )

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

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult:
        if not isinstance(session, TranscriptSession):
            raise TypeError(f"not a {KIND} session: {session!r}")
        async with session.lock:
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

    async def stop_session(self, session: Session) -> None:
        if isinstance(session, TranscriptSession) and session.current is not None:
            await self._cli.stop_session(session.current)


register_adapter(
    AdapterSpec(
        kind=KIND,
        factory=CopilotTranscriptAdapter,
        requires_command=True,
        default_command=DEFAULT_COMMAND,
        options_block=BLOCK,
        validate_options=TranscriptOptions.from_mapping,
    )
)
