"""The SDK connection boundary: the only module that builds an SDK client.

Importing the SDK costs most of a second, so it happens here, after the
configuration has been validated (the CLI never imports this module for a
run that fails validation).

Two adaptations to the SDK's TCP transport live here, and only here. They
target the tested SDK releases (`compatibility.TESTED_SDK_VERSIONS`); both defects
are written up in docs/sdk-defects.md, and tests/e2e/test_connection_e2e.py fails
when either stops applying (the SDK changed its transport), so they are
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
from typing import TYPE_CHECKING, Any

from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.failures import ErrorKind

if TYPE_CHECKING:
    from copilot import CopilotClient

log = logging.getLogger(__name__)


READY_WAIT_S = 600.0
"""A backstop: the harness ends the pipe (a line, or end of file) within its ready timeout."""


class SidecarNotReadyError(RuntimeError):
    """The harness's ready pipe ended without a line: its sidecar did not start."""

    failure_kind = ErrorKind.SIDECAR_UNREACHABLE


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


def create_client(config: DriverConfig) -> CopilotClient:
    """A client for the harness-managed sidecar at `config.sdk_uri`.

    Uses only COPILOT_CONNECTION_TOKEN to authenticate (spec 4.2): no GitHub
    platform token is passed or looked up.
    """
    from copilot import CopilotClient, RuntimeConnection

    class _Client(CopilotClient):
        async def _connect_via_tcp(self) -> None:
            await super()._connect_via_tcp()
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
    can say the sidecar sent something unreadable.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None
        self._logger = logging.getLogger(SDK_PROTOCOL_LOGGER)
        self._saved_level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        if not record.getMessage().startswith("Failed to parse"):
            return
        error = record.exc_info[1] if record.exc_info else None
        detail = f"{type(error).__name__}: {error}" if error is not None else "no detail"
        self.last = f"sent a message the SDK could not read ({detail})"

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
