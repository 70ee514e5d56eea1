"""The tool-loop adapter: the agent is this process, talking to a chat-completions API.

There is no agent binary: each turn runs `loop.agentic_loop` against the
configured OpenAI-compatible endpoint, with the four file tools confined to
the workspace. The conversation lives in the session handle (the server
keeps no state), so one adapter serves concurrent sessions.

- start_session checks the workspace and spawns nothing; the session id is
  `tool-loop-<uuid>`, or the id given to resume (the history is not stored
  anywhere, so a resumed session starts with an empty conversation).
- run_turn appends the prompt, runs the loop in a child task and translates
  its events (see `translate.py`). A turn the model never answered (the first
  request failed, or was cancelled) leaves no trace in the conversation, so
  a retry of the same prompt does not send it twice.
- stop_session cancels a running turn's task: its HTTP request is closed,
  the turn ends with `turn_cancelled`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import AdapterConfig, EventCallback, Session, TurnResult
from copilot_driver.adapters.core.turn import (
    SESSION_STOPPED,
    TurnAdapter,
    cancelled,
    cancelling,
    emit,
)
from copilot_driver.adapters.core.workspace import validate_workspace
from copilot_driver.adapters.tool_loop.loop import (
    DEFAULT_SYSTEM_PROMPT,
    EmitCallback,
    LoopEvent,
    agentic_loop,
)
from copilot_driver.adapters.tool_loop.options import ToolLoopOptions
from copilot_driver.adapters.tool_loop.sandbox import resolve_root
from copilot_driver.adapters.tool_loop.stream import ChatClient, Message
from copilot_driver.adapters.tool_loop.tools import Toolbox
from copilot_driver.adapters.tool_loop.translate import ToolLoopTranslator
from copilot_driver.redaction import mask_url_userinfo
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

KIND = "tool-loop"


@dataclass(eq=False, kw_only=True)
class ToolLoopSession(Session):
    root: Path
    """The workspace with symlinks resolved: every tool path must stay inside it."""
    messages: list[Message] = field(default_factory=list)
    """The conversation so far, sent whole with every request."""
    turn_task: asyncio.Task[None] | None = field(default=None, repr=False)


class ToolLoopAdapter(TurnAdapter[ToolLoopSession, ToolLoopOptions]):
    kind = KIND
    supports_ssh = False

    def __init__(
        self,
        config: AdapterConfig | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(config)
        self._transport = transport
        """None = the network; tests pass an `httpx.MockTransport`."""

    def _api_key(self) -> str | None:
        env = self.config.agent_environment()
        # A key pasted from a file often carries a newline, which no header may hold.
        return (env.get(self.options.api_key_env) or "").strip() or None

    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> ToolLoopSession:
        if self.config.ssh is not None:
            raise AgentError(
                AdapterErrorKind.INVALID_WORKSPACE_CWD,
                "the tool-loop agent edits local files; worker.ssh_hosts is not supported",
                retryable=False,
            )
        path = validate_workspace(workspace)
        try:
            root = resolve_root(path)
        except (OSError, RuntimeError) as exc:
            raise AgentError(
                AdapterErrorKind.INVALID_WORKSPACE_CWD,
                f"the workspace {str(path)!r} cannot be resolved: {exc}",
            ) from None
        if resume_session_id:
            log.info(
                "tool-loop session %s resumed: its earlier conversation is not stored, "
                "the model starts without it",
                resume_session_id,
            )
        system = (
            DEFAULT_SYSTEM_PROMPT
            if self.options.system_prompt is None
            else self.options.system_prompt
        )
        messages: list[Message] = [{"role": "system", "content": system}] if system else []
        return ToolLoopSession(
            workspace=path,
            id=resume_session_id or f"tool-loop-{uuid.uuid4()}",
            root=root,
            messages=messages,
        )

    async def _stop_session(self, session: ToolLoopSession) -> None:
        task = session.turn_task
        if task is not None and not task.done():
            task.cancel(SESSION_STOPPED)
            await asyncio.gather(task, return_exceptions=True)

    # -- one turn --------------------------------------------------------

    async def _run_turn(
        self, session: ToolLoopSession, prompt: str, on_event: EventCallback
    ) -> TurnResult:
        options = self.options
        translator = ToolLoopTranslator(session.id, usage_before=session.usage, model=options.model)
        started = f"tool-loop turn started in {session.workspace}: {options.model}"
        emit(translator.started(f"{started} at {mask_url_userinfo(options.base_url)}"), on_event)

        def relay(item: LoopEvent) -> None:
            emit(translator.feed(item), on_event)

        before = len(session.messages)
        session.messages.append({"role": "user", "content": prompt})
        inner = asyncio.create_task(self._loop(session, relay))
        session.turn_task = inner
        try:
            await inner
        except asyncio.CancelledError as cancel:
            ours = cancelling(asyncio.current_task())
            if not inner.done():
                inner.cancel()
                await asyncio.gather(inner, return_exceptions=True)
            result = translator.end(cancelled(cancel), on_event)
            session.usage = translator.usage
            if ours:
                raise  # our caller was cancelled: it must see it
            return result  # stopped by stop_session: the turn's outcome
        finally:
            session.turn_task = None
            if len(session.messages) == before + 1:
                # The model never answered: drop the prompt, so that running the
                # turn again (a retry) does not send it twice.
                session.messages.pop()
        session.usage = translator.usage
        if translator.result is None:  # the loop always ends with FinalReply or LoopFailed
            error = AgentError(AdapterErrorKind.TURN_FAILED, "the turn ended without an outcome")
            return translator.end(error, on_event)
        return translator.result

    async def _loop(self, session: ToolLoopSession, emit: EmitCallback) -> None:
        options = self.options
        toolbox = Toolbox(session.root, max_result_chars=options.max_tool_result_chars)
        timeout = httpx.Timeout(options.request_timeout_ms / 1000)
        async with httpx.AsyncClient(timeout=timeout, transport=self._transport) as http:
            model = ChatClient(options, http, api_key=self._api_key())
            await agentic_loop(
                model, toolbox, session.messages, max_rounds=options.max_rounds, emit=emit
            )
