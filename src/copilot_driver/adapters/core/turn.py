"""The turn skeleton every adapter shares: the adapter's side and the translator's.

`TurnAdapter` is the base of every adapter. It is built from an
`AdapterConfig` and reads its own option block from it; `run_turn` refuses
a session of another kind and takes the session's lock, so turns of one
session never overlap; `stop_session` ignores a session of another kind.
An adapter writes only what differs: `start_session`, `_run_turn` and
`_stop_session`.

`TurnTranslator` is the base of every translator (`translate.py`), which
turns one turn of one agent's output into domain events and the turn's
result. It holds the session's running token totals and the replies,
builds events (with the session id, the message cut to `MESSAGE_LIMIT`),
hands an agent's named events to their handlers, and ends a turn that
completed, failed or was cancelled.

A cancelled turn reports the reason its canceller gave (`task.cancel(msg)`:
the runner's limits, `stop_session`), else `turn cancelled`.
"""

from __future__ import annotations

import asyncio
import logging
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage, shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.options import OptionBlock
from copilot_driver.adapters.core.session import (
    AdapterConfig,
    EventCallback,
    ExitReason,
    Session,
    TurnResult,
)
from copilot_driver.vocabulary import AdapterErrorKind

TURN_CANCELLED = "turn cancelled"
"""The reason of a cancellation whose canceller gave none."""
SESSION_STOPPED = "the session was stopped"
"""The reason `stop_session` gives the turn it stops."""

SessionT = TypeVar("SessionT", bound=Session)
OptionsT = TypeVar("OptionsT", bound=OptionBlock)

Handler = Callable[[Any, Mapping[str, Any]], list[AgentEvent]]
"""A translator's method for one named agent event: its data -> domain events."""


def cancelled(cancel: asyncio.CancelledError) -> AgentError:
    """The `turn_cancelled` error of a turn cancelled with `cancel`."""
    reason = str(cancel.args[0]) if cancel.args and cancel.args[0] else TURN_CANCELLED
    return AgentError(AdapterErrorKind.TURN_CANCELLED, reason)


def cancelling(task: asyncio.Task[Any] | None) -> bool:
    """True when `task` itself is being cancelled (not only something it awaits)."""
    return task is not None and task.cancelling() > 0


def emit(events: Iterable[AgentEvent], on_event: EventCallback) -> None:
    for event in events:
        on_event(event)


class TurnAdapter(ABC, Generic[SessionT, OptionsT]):
    """Base of the adapters: see the module's docstring.

    A subclass names its session and options types once, as the generic
    arguments (`class CodexAdapter(TurnAdapter[CodexSession, CodexOptions])`);
    they become `session_type` and `options_type`.
    """

    kind: str
    default_command: str | None = None
    """The agent command when `agent.command` is not set; None: the kind runs none."""
    supports_ssh: bool = True
    """Whether the agent can run on a `worker.ssh_hosts` host."""
    session_type: type[SessionT]
    options_type: type[OptionsT]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            if typing.get_origin(base) is TurnAdapter:
                cls.session_type, cls.options_type = typing.get_args(base)

    def __init__(self, config: AdapterConfig | None = None) -> None:
        self.config = config or AdapterConfig()
        self.options = self.options_type.from_mapping(self.config.options)

    @property
    def command(self) -> str:
        """`agent.command`, else the kind's default ("" for a kind that runs none)."""
        return self.config.command or self.default_command or ""

    def option_problems(self, workspace: Path | None) -> list[str]:
        """Problems of this adapter's options that the agent would report only once
        started, found here without starting anything (none, unless a kind says
        otherwise); `workspace` is the checked local workspace, None when the agent
        runs on an SSH host or the workspace is unusable."""
        return []

    @abstractmethod
    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> SessionT: ...

    async def run_turn(
        self, session: Session, prompt: str, *, on_event: EventCallback
    ) -> TurnResult:
        if not isinstance(session, self.session_type):
            raise TypeError(f"not a {self.kind} session: {session!r}")
        async with session.lock:
            return await self._run_turn(session, prompt, on_event)

    async def stop_session(self, session: Session) -> None:
        if isinstance(session, self.session_type):
            await self._stop_session(session)

    @abstractmethod
    async def _run_turn(
        self, session: SessionT, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        """One turn, the session's lock held."""

    @abstractmethod
    async def _stop_session(self, session: SessionT) -> None:
        """Stop what runs for `session`; a session with nothing running is left as it is."""


@dataclass
class TurnTranslator:
    """Base of the translators: see the module's docstring."""

    session_id: str = ""
    usage_before: TokenUsage = field(default_factory=TokenUsage)
    """The session's totals before this turn; events report running totals."""
    turn_usage: TokenUsage = field(default_factory=TokenUsage)
    replies: list[str] = field(default_factory=list)
    """The agent's texts of this turn; the result's reply joins them."""
    agent_name: str = "agent"
    """How messages and the debug log name the agent."""

    @property
    def usage(self) -> TokenUsage:
        return self.usage_before + self.turn_usage

    def replace_usage(self, total: TokenUsage) -> None:
        """The agent reported the session's whole total: it replaces the running
        one (the model name stays when the report names none)."""
        self.usage_before = TokenUsage(model=self.usage_before.model)
        self.turn_usage = total

    def event(self, type_: EventType, message: str = "", **fields: Any) -> AgentEvent:
        return AgentEvent(type_, session_id=self.session_id, message=shorten(message), **fields)

    def dispatch(
        self,
        name: str,
        data: Mapping[str, Any],
        handlers: Mapping[str, Handler],
        *,
        debug_only: frozenset[str] = frozenset(),
    ) -> list[AgentEvent]:
        """The events of the agent's event `name`, each tagged with it as `raw_type`:
        its handler's, none for a `debug_only` name (logged at debug level), an
        `other_message` for a name without a handler."""
        if name in debug_only:
            logging.getLogger(type(self).__module__).debug("%s %s", self.agent_name, name)
            return []
        handler = handlers.get(name)
        if handler is None:
            return [self.event(EventType.OTHER_MESSAGE, name, raw_type=name)]
        return [event.replace(raw_type=name) for event in handler(self, data)]

    def outcome(
        self,
        reason: ExitReason,
        error: AgentError | None = None,
        *,
        api_duration_ms: int | None = None,
    ) -> TurnResult:
        return TurnResult(
            session_id=self.session_id,
            exit_reason=reason,
            usage=self.usage,
            error=error,
            reply="\n\n".join(self.replies),
            api_duration_ms=api_duration_ms,
        )

    def complete(
        self,
        message: str = "turn completed",
        *,
        api_duration_ms: int | None = None,
        raw_type: str | None = None,
    ) -> tuple[AgentEvent, TurnResult]:
        """The `turn_completed` event and the result of a turn that completed."""
        event = self.event(
            EventType.TURN_COMPLETED,
            message,
            usage=self.usage,
            api_duration_ms=api_duration_ms,
            raw_type=raw_type,
        )
        return event, self.outcome(ExitReason.COMPLETED, api_duration_ms=api_duration_ms)

    def fail(
        self,
        error: AgentError,
        *,
        api_duration_ms: int | None = None,
        raw_type: str | None = None,
    ) -> tuple[list[AgentEvent], TurnResult]:
        """The final events and the result of a turn that ended with `error`:
        `turn_cancelled` for a `turn_cancelled` error, else `turn_failed`."""
        cancelled = error.kind is AdapterErrorKind.TURN_CANCELLED
        event = self.event(
            EventType.TURN_CANCELLED if cancelled else EventType.TURN_FAILED,
            error.message,
            error_kind=error.kind,
            usage=self.usage,
            api_duration_ms=api_duration_ms,
            raw_type=raw_type,
        )
        reason = ExitReason.CANCELLED if cancelled else ExitReason.FAILED
        return [event], self.outcome(reason, error, api_duration_ms=api_duration_ms)

    def end(self, error: AgentError, on_event: EventCallback) -> TurnResult:
        """`fail`, its events emitted: a turn the agent did not end itself."""
        events, result = self.fail(error)
        emit(events, on_event)
        return result
