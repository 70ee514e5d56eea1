"""The SDK connection boundary: the only module that builds an SDK client.

Importing the SDK costs most of a second, so it happens here, after the
configuration has been validated (the CLI never imports this module for a
run that fails validation).

Three adaptations to the SDK's TCP transport live here, and only here. They
target the tested SDK releases (`compatibility.TESTED_SDK_VERSIONS`); the defects
are written up in docs/sdk-defects.md, and tests/e2e/test_connection_e2e.py fails
when one stops applying (the SDK changed its transport), so they are
removed rather than silently left behind:

- `TCP_NODELAY`: the SDK writes each JSON-RPC frame's header and body in two
  writes; with Nagle's algorithm and delayed ACKs every request then waits
  ~40 ms for the peer's ACK. The option is set as soon as the socket exists,
  before the protocol handshake.
- `release_transport`: `CopilotClient.stop()` joins its reader thread (1 s
  timeout) before it closes the socket that thread is blocked reading, so
  every exit paid a second. Shutting the socket down first (once the session
  disconnect is acknowledged) ends the read at once.

`sidecar_ready` waits on the harness's ready pipe (COPILOT_SDK_READY_FD):
the harness starts the driver while the sidecar is still starting, so the SDK
import above and the sidecar's start-up overlap, and the driver connects (and
presents its token) only to a sidecar the harness saw listening.

- `NotificationGuard`: the SDK runs each notification as a bare event-loop
  callback scheduled by its reader thread, which never waits. A notification
  its handler cannot take (a `session.event` without `sessionId`) is a
  traceback per message on stderr, and a sidecar writing faster than the loop
  runs them grows that queue without bound. The guard catches and counts
  them (one warning, then the sidecar is given up at
  `UNREADABLE_NOTIFICATIONS_LIMIT`) and makes the reader wait for the loop
  every `READER_BACKLOG` messages, so TCP's flow control slows the sidecar
  down instead of the driver's memory growing.

`is_connected` reads the SDK's private connection state for the sidecar
watchdog (liveness.py): the SDK notices a closed connection but fails none
of the waits pending on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from copilot_driver.driver.config import DriverConfig
from copilot_driver.errors import CopilotDriverError
from copilot_driver.vocabulary import DriverErrorKind

if TYPE_CHECKING:
    from copilot import CopilotClient

log = logging.getLogger(__name__)


READY_WAIT_S = 600.0
"""A backstop: the harness ends the pipe (a line, or end of file) within its ready timeout."""


class SidecarNotReadyError(CopilotDriverError, RuntimeError):
    """The harness's ready pipe ended without a line: its sidecar did not start."""

    failure_kind = DriverErrorKind.SIDECAR_UNREACHABLE


async def sidecar_ready(fd: int, sdk_uri: str) -> None:
    """Return once the harness writes a line to `fd`; raise SidecarNotReadyError at end
    of file. The descriptor is closed either way (it is read once)."""
    loop = asyncio.get_running_loop()
    said: asyncio.Future[bytes] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 64)
        except OSError:
            data = b""
        if not said.done():
            said.set_result(data)

    loop.add_reader(fd, readable)  # the configuration checked that it is an open pipe
    try:
        if not await said:
            raise SidecarNotReadyError(
                f"the harness reported that the Copilot sidecar at {sdk_uri} did not start "
                "(its ready pipe closed); the harness's log says why"
            )
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def transport_socket(client: Any) -> socket.socket | None:
    """The TCP socket under a connected SDK client (a private SDK attribute)."""
    sock = getattr(getattr(client, "_process", None), "_socket", None)
    return sock if isinstance(sock, socket.socket) else None


UNREADABLE_NOTIFICATIONS_LIMIT = 100
"""Notifications the SDK could not handle before the sidecar is given up. A sidecar
that speaks the protocol sends none; a stray one is logged once and survived."""
READER_BACKLOG = 256
"""Messages the SDK's reader thread hands to the event loop before it waits for the
loop to run them (a few hundred small callbacks: well under a millisecond)."""
_CATCH_UP_POLL_S = 0.05
"""How often a waiting reader checks that the client is still running (`stop()`
blocks the loop while it joins the reader, for up to a second)."""


class NotificationGuard:
    """Bounds what a sidecar's notifications can cost the driver (see the module doc).

    `on_first(detail)` is called for the first notification the SDK could not
    handle, `on_broken(detail)` once when `limit` of them have come; both run on
    the event loop. `detail` names the first one, e.g. "session.event:
    KeyError: 'sessionId'".
    """

    def __init__(
        self,
        on_first: Callable[[str], None],
        on_broken: Callable[[int, str], None],
        *,
        limit: int = UNREADABLE_NOTIFICATIONS_LIMIT,
        backlog: int = READER_BACKLOG,
    ) -> None:
        self._on_first = on_first
        self._on_broken = on_broken
        self._limit = limit
        self._backlog = backlog
        self.unreadable = 0
        self.installed = False
        self._first: str | None = None

    def count_unreadable(self, detail: str) -> None:
        """One notification the SDK could not handle (called on the event loop)."""
        self.unreadable += 1
        if self._first is None:
            self._first = _short(detail, limit=200)
            self._on_first(self._first)
        if self.unreadable == self._limit:
            self._on_broken(self.unreadable, self._first)

    def install(self, rpc: Any, loop: asyncio.AbstractEventLoop) -> None:
        """Wrap the SDK JSON-RPC client's notification handler and message intake
        (`installed` says it was done; tests/e2e/test_connection_e2e.py checks it)."""
        handler = getattr(rpc, "notification_handler", None)
        take = getattr(rpc, "_handle_message", None)
        if not callable(handler) or not callable(take) or not hasattr(rpc, "_running"):
            log.debug("the SDK's JSON-RPC client changed shape: notifications are not guarded")
            return
        rpc.set_notification_handler(self._guarded(handler))
        since_caught_up = 0

        def handle_message(message: dict[str, Any]) -> None:  # the SDK's reader thread
            nonlocal since_caught_up
            take(message)
            since_caught_up += 1
            if since_caught_up >= self._backlog:
                since_caught_up = 0
                _wait_for_the_loop(loop, running=lambda: bool(rpc._running))

        rpc._handle_message = handle_message
        self.installed = True

    def _guarded(
        self, handler: Callable[[str, dict[str, Any]], None]
    ) -> Callable[[str, dict[str, Any]], None]:
        def guarded(method: str, params: dict[str, Any]) -> None:
            try:
                handler(method, params)
            except Exception as error:  # the sidecar's message, not the driver, is at fault
                self.count_unreadable(f"{_short(method)}: {type(error).__name__}: {error}")

        return guarded


def _wait_for_the_loop(loop: asyncio.AbstractEventLoop, running: Callable[[], bool]) -> None:
    """Block the calling thread until `loop` has run every callback scheduled so far
    (they run in order), or the loop closes, or `running()` turns false."""
    caught_up = threading.Event()
    try:
        loop.call_soon_threadsafe(caught_up.set)
    except RuntimeError:  # the loop is closed: nothing will run them
        return
    while not caught_up.wait(_CATCH_UP_POLL_S):
        if loop.is_closed() or not running():
            return


def _short(method: object, limit: int = 60) -> str:
    text = str(method)
    return text if len(text) <= limit else text[:limit] + "..."


def create_client(config: DriverConfig, guard: NotificationGuard | None = None) -> CopilotClient:
    """A client for the harness-managed sidecar at `config.sdk_uri`.

    Uses only COPILOT_CONNECTION_TOKEN to authenticate (spec 4.2): no GitHub
    platform token is passed or looked up.
    """
    from copilot import CopilotClient, RuntimeConnection

    class _Client(CopilotClient):
        async def _connect_via_tcp(self) -> None:
            await super()._connect_via_tcp()
            if guard is not None:
                guard.install(self._client, asyncio.get_running_loop())
            sock = transport_socket(self)
            if sock is None:
                log.debug("no TCP socket found under the SDK client: TCP_NODELAY not set")
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    return _Client(
        connection=RuntimeConnection.for_uri(
            config.sdk_uri, connection_token=config.connection_token
        ),
        working_directory=str(config.working_directory),
        log_level=config.log_level,
    )


def is_connected(client: Any) -> bool:
    """False once the SDK saw its connection close (its private `_state`).

    Read by the sidecar watchdog (liveness.py) to report a dead sidecar at
    once; without the attribute it falls back to unanswered pings.
    """
    return getattr(client, "_state", "connected") == "connected"


def release_transport(client: Any) -> None:
    """Shut the client's socket down so `stop()` does not wait on its reader.

    Call only when nothing more is expected from the sidecar (after the
    session disconnect was acknowledged, or when giving up on it).
    """
    sock = transport_socket(client)
    if sock is None:
        return
    with contextlib.suppress(OSError):  # already closed or reset: nothing to release
        sock.shutdown(socket.SHUT_RDWR)


SDK_PROTOCOL_LOGGER = "copilot._jsonrpc"
"""The SDK module that reads the sidecar's messages and logs why it stopped."""


class ProtocolErrors(logging.Handler):
    """Remembers why the SDK stopped reading the sidecar, for the error line.

    On a malformed message the SDK's reader logs a warning and closes the
    connection, so all the watchdog sees is a closed connection; this keeps
    the SDK's reason (e.g. "JSONDecodeError: Expecting value") so the error
    can say the sidecar sent something unreadable. A notification whose
    method-specific SDK handler raised is logged by the SDK too; it is counted
    by `guard`, like those the general handler could not take.
    """

    def __init__(self, guard: NotificationGuard | None = None) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None
        self._guard = guard
        self._logger = logging.getLogger(SDK_PROTOCOL_LOGGER)
        self._saved_level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        detail = f"{type(error).__name__}: {error}" if error is not None else "no detail"
        if message.startswith("Failed to parse"):
            self.last = f"sent a message the SDK could not read ({detail})"
        elif message.startswith("Notification handler raised") and self._guard is not None:
            self._guard.count_unreadable(f"a notification: {detail}")

    def attach(self) -> None:
        # The driver silences the SDK's logger unless verbose; warnings from
        # the reader must still reach this handler (the log's handlers keep
        # their own levels, so nothing extra is printed).
        if self._logger.getEffectiveLevel() > logging.WARNING:
            self._logger.setLevel(logging.WARNING)
        self._logger.addHandler(self)

    def detach(self) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._saved_level)
