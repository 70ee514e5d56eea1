"""A small JSON-RPC 2.0 peer over JSON Lines, independent of the transport.

It reads lines from any async iterator and writes through any coroutine, so
the same core serves a local subprocess, one behind SSH, or a test double.
Tolerant of what real peers do: a missing `"jsonrpc"` field, extra fields,
unknown notifications. Requests from the peer are answered concurrently
(each in its own task); replies are written one at a time. When the input
ends, every pending request fails with `ConnectionClosedError`, carrying the
reason the owner gives (e.g. the process's last stderr lines).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from copilot_driver.adapters.core.process import LineOverflow
from copilot_driver.errors import CopilotDriverError

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

RequestHandler = Callable[[str, Any], Awaitable[Any]]
"""Answers a peer's request: returns the result, or raises RpcError."""
NotificationHandler = Callable[[str, Any], None]


class RpcError(CopilotDriverError):
    """An error response (from the peer, or to be sent to it)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosedError(CopilotDriverError):
    """The peer's output ended before the response arrived."""


class JsonRpcConnection:
    def __init__(
        self,
        write_line: Callable[[str], Awaitable[None]],
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler | None = None,
    ) -> None:
        self._write_line = write_line
        self._on_notification = on_notification
        self._on_request = on_request
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._write_lock = asyncio.Lock()
        self._handlers: set[asyncio.Task[None]] = set()
        self._closed: ConnectionClosedError | None = None

    # -- outgoing --------------------------------------------------------

    async def request(
        self, method: str, params: Any = None, *, timeout: float | None = None
    ) -> Any:
        """Send a request and wait for its result.

        Raises RpcError, ConnectionClosedError or TimeoutError.
        """
        if self._closed is not None:
            raise self._closed
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"id": request_id, "method": method, **_params(params)})
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._send({"method": method, **_params(params)})

    async def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False)
        async with self._write_lock:
            await self._write_line(line)

    # -- incoming --------------------------------------------------------

    async def serve(self, lines: AsyncIterator[str | LineOverflow]) -> None:
        """Dispatch every incoming line until the input ends."""
        async for line in lines:
            if isinstance(line, LineOverflow):
                log.warning("json-rpc: skipped an over-long line of %d bytes", line.size)
                continue
            self._dispatch(line)

    def close(self, reason: str) -> None:
        """Fail every pending request; later requests fail at once."""
        self._closed = ConnectionClosedError(reason)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._closed)

    async def drain(self) -> None:
        """Wait for the answers to the peer's in-flight requests to be written."""
        while self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)

    async def aclose(self) -> None:
        for task in self._handlers:
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    def _dispatch(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            log.debug("json-rpc: not JSON: %.200s", line)
            return
        if not isinstance(message, dict):
            log.debug("json-rpc: not an object: %.200s", line)
            return
        method = message.get("method")
        has_id = "id" in message and message["id"] is not None
        if has_id and not _valid_id(message["id"]):
            log.debug("json-rpc: invalid id %.50r", message["id"])
            return
        if isinstance(method, str) and has_id:
            task = asyncio.create_task(self._answer(message["id"], method, message.get("params")))
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        elif isinstance(method, str):
            self._on_notification(method, message.get("params"))
        elif has_id and ("result" in message or "error" in message):
            self._resolve(message)
        else:
            log.debug("json-rpc: neither request, notification nor response: %.200s", line)

    def _resolve(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"])
        if future is None or future.done():
            log.debug("json-rpc: response to an unknown request id %r", message["id"])
            return
        error = message.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {"message": str(error)}
            code = error.get("code")
            future.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message") or "error"),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    async def _answer(self, request_id: Any, method: str, params: Any) -> None:
        try:
            if self._on_request is None:
                raise RpcError(METHOD_NOT_FOUND, f"method not supported: {method}")
            result = await self._on_request(method, params)
            reply: dict[str, Any] = {"id": request_id, "result": result}
        except RpcError as error:
            reply = {"id": request_id, "error": _error(error)}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a handler bug must still answer the peer
            log.exception("json-rpc: handler for %s failed", method)
            reply = {"id": request_id, "error": _error(RpcError(INTERNAL_ERROR, str(exc)))}
        with contextlib.suppress(OSError, ConnectionError, RuntimeError):
            await self._send(reply)


def _valid_id(value: Any) -> bool:
    """A string or an integer; JSON-RPC allows nothing else (and `true` must not
    be taken for request 1)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _params(params: Any) -> dict[str, Any]:
    return {} if params is None else {"params": params}


def _error(error: RpcError) -> dict[str, Any]:
    out: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        out["data"] = error.data
    return out
