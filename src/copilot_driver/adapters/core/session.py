"""The adapter interface: start a session, run turns on it, stop it.

One adapter instance serves many concurrent sessions. Everything that
belongs to one session (its id, its workspace, the running process, the
token totals) lives in the `Session` handle the adapter returns, never on
the adapter, so two sessions can never see each other's state.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from copilot_driver.adapters.core.agent_events import AgentEvent, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.adapters.core.tools import DynamicTool

EventCallback = Callable[[AgentEvent], None]

DEFAULT_READ_TIMEOUT_MS = 5_000


@dataclass(frozen=True)
class AdapterConfig:
    """What every adapter is built from: the `agent` block's process fields,
    the worker's SSH hosts, and the adapter's own block (validated by it)."""

    command: str | None = None
    """The agent binary (and, for some kinds, its arguments); None = the kind's default."""
    options: Mapping[str, Any] = field(default_factory=dict)
    ssh: SshSettings | None = None
    read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS
    environment: Mapping[str, str] | None = None
    """The agent's environment; None = this process's environment."""
    tools: Sequence[DynamicTool] = ()
    """Tools the orchestrator offers the agent (used by kinds that support them)."""

    def agent_environment(self) -> dict[str, str]:
        """A fresh copy of the environment the agent runs with."""
        return dict(os.environ if self.environment is None else self.environment)


@dataclass(eq=False)
class Session:
    """Per-session state. Adapters subclass it to hold their own."""

    workspace: Path
    id: str = ""
    """The agent's session id; may stay empty until the agent reports it."""
    ssh_host: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    turns_started: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    """Held while a turn runs: turns of one session never overlap."""


class ExitReason(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class TurnResult:
    session_id: str
    exit_reason: ExitReason
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: AgentError | None = None
    reply: str = ""
    """The agent's final text for the turn (empty when it only used tools)."""
    api_duration_ms: int | None = None

    @property
    def ok(self) -> bool:
        return self.exit_reason is ExitReason.COMPLETED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "exit_reason": self.exit_reason.value,
            "usage": self.usage.to_dict(),
        }
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.reply:
            out["reply"] = self.reply
        if self.api_duration_ms is not None:
            out["api_duration_ms"] = self.api_duration_ms
        return out


class Adapter(Protocol):
    """What the orchestration layer needs from every agent kind."""

    kind: str

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> Session: ...

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult: ...

    async def stop_session(self, session: Session) -> None: ...
