"""The app-server's requests to the client, answered: dynamic tool calls (run while the
turn goes on), approvals (by the `approvals` option: accept, decline, or paths inside the
workspace only) and requests for user input (refused: the session runs unattended)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from copilot_driver.adapters.codex.session import CodexSession
from copilot_driver.adapters.core.agent_events import EventType, shorten
from copilot_driver.adapters.core.jsonrpc import METHOD_NOT_FOUND, RpcError
from copilot_driver.adapters.core.payload import as_mapping, as_str
from copilot_driver.adapters.core.tools import ToolOutput, ToolRegistry

INPUT_REQUIRED = -32000


async def answer_request(
    session: CodexSession, method: str, params: Any, *, tools: ToolRegistry, approvals: str
) -> Any:
    """The answer to one request of the app-server; RpcError for one this client refuses."""
    data = as_mapping(params)
    if method == "item/tool/call":
        return await _call_tool(session, data, tools)
    if method in ("item/commandExecution/requestApproval", "execCommandApproval"):
        allowed = _allowed([as_str(data.get("cwd")) or str(session.workspace)], session, approvals)
        return _decision(method, allowed, session, f"command {as_str(data.get('command'))!r}")
    if method in ("item/fileChange/requestApproval", "applyPatchApproval"):
        paths = list(session.file_changes.get(as_str(data.get("itemId")), []))
        paths += list(as_mapping(data.get("fileChanges")))  # the v1 request lists them
        if data.get("grantRoot"):
            paths.append(as_str(data.get("grantRoot")))
        allowed = bool(paths) and _allowed(paths, session, approvals)
        return _decision(method, allowed, session, f"file change {', '.join(paths) or '?'}")
    if method == "item/tool/requestUserInput":
        if session.turn is not None:
            session.turn.translator.input_required = True
            session.turn.on_event(
                session.turn.translator.event(
                    EventType.NOTIFICATION, "the agent asked for user input; none is available"
                )
            )
        raise RpcError(INPUT_REQUIRED, "no user can answer: this session runs unattended")
    raise RpcError(METHOD_NOT_FOUND, f"{method} is not supported by this client")


def _allowed(paths: list[str], session: CodexSession, approvals: str) -> bool:
    if approvals != "workspace":
        return approvals == "accept"
    return all(_inside(p, session) for p in paths)


async def _call_tool(session: CodexSession, data: Mapping[str, Any], tools: ToolRegistry) -> Any:
    name = as_str(data.get("tool"))
    turn = session.turn
    tool = tools.get(name)
    if tool is None:
        if turn is not None:
            turn.on_event(
                turn.translator.event(
                    EventType.UNSUPPORTED_TOOL_CALL,
                    f"the agent called an unknown tool {name!r}",
                    tool_name=name,
                )
            )
        return _tool_reply(ToolOutput(f"error: no tool named {name!r} is available", False))
    started = time.monotonic()
    try:
        output = await tool.run(data.get("arguments"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the tool's failure is the agent's information
        output = ToolOutput(f"error: {type(exc).__name__}: {exc}", success=False)
    if turn is not None:
        turn.on_event(
            turn.translator.event(
                EventType.TOOL_RESULT,
                f"tool {name} {'succeeded' if output.success else 'failed'}"
                + ("" if output.success else f": {shorten(output.text, 200)}"),
                tool_name=name,
                tool_duration_ms=round((time.monotonic() - started) * 1000),
                tool_error=not output.success,
            )
        )
    return _tool_reply(output)


def _decision(method: str, allowed: bool, session: CodexSession, what: str) -> dict[str, str]:
    """`accept`/`decline` (v2) or `approved`/`denied` (v1 requests)."""
    if session.turn is not None:
        verdict = "approved" if allowed else "declined"
        session.turn.on_event(
            session.turn.translator.event(EventType.NOTIFICATION, f"{verdict} {what}")
        )
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "approved" if allowed else "denied"}
    return {"decision": "accept" if allowed else "decline"}


def _inside(path: str, session: CodexSession) -> bool:
    if not path:
        return False
    root = session.workspace
    if session.ssh_host is not None:  # a remote path: lexical check only
        candidate = PurePosixPath(os.path.normpath(str(root / path)))
        return candidate == PurePosixPath(root) or PurePosixPath(root) in candidate.parents
    resolved = (root / path).resolve()
    real_root = root.resolve()
    return resolved == real_root or real_root in resolved.parents


def _tool_reply(output: ToolOutput) -> dict[str, Any]:
    return {"contentItems": [{"type": "inputText", "text": output.text}], "success": output.success}
