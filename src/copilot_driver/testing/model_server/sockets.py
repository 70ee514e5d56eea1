"""The model server's low-level writes and closes.

- `set_no_delay`: TCP_NODELAY, so each small write leaves as its own segment;
- `ChunkedWriter`: a stream written in pieces of `chunk_bytes`, each flushed;
- `LimitedWriter` and `BodyStopError`: a body that stops after a set number
  of bytes (`Reply.cut_after_bytes`, `Reply.never_ends`);
- `reset`: end a connection with an RST, as a crashed peer does, once the
  bytes written have reached the client.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import socket
import struct
import termios
import time

from copilot_driver.errors import CopilotDriverError

RESET_DRAIN_S = 2.0
"""How long a cut waits for its bytes to reach the client before the reset."""


class BodyStopError(CopilotDriverError):
    """The scripted body ends here (`Reply.cut_after_bytes` / `never_ends`)."""


def set_no_delay(connection: socket.socket) -> None:
    """Small writes must leave as separate segments for `chunk_bytes` to
    split what the client reads, not be coalesced by Nagle."""
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def wait_until_acknowledged(connection: socket.socket, timeout: float) -> None:
    """Wait until the peer has acknowledged every byte sent (Linux `SIOCOUTQ`),
    or `timeout` passes (a client that stopped reading never will)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            raw = fcntl.ioctl(connection.fileno(), termios.TIOCOUTQ, b"\0" * 4)
        except OSError:
            return  # no such query here, or the socket is gone: nothing to wait for
        if struct.unpack("i", raw)[0] == 0 or time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def reset(connection: socket.socket) -> None:
    """Close with an RST, as a crashed peer does: SO_LINGER 0, then the
    descriptor closed at once (the handler's file objects still hold the
    socket object, so `close()` alone would defer it and the server's own
    shutdown(SHUT_WR) would send an orderly FIN first).

    An RST throws away whatever the kernel has not sent yet, so the bytes
    written are first given up to `RESET_DRAIN_S` to be acknowledged: the
    client gets exactly the scripted bytes, then the reset."""
    wait_until_acknowledged(connection, RESET_DRAIN_S)
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        os.close(connection.detach())


class LimitedWriter:
    """The response body, up to `limit` bytes (None: all of it).

    Writing the byte that reaches the limit writes what fits and raises
    `BodyStopError`; the handler then holds or resets the connection.
    """

    def __init__(self, out: io.BufferedIOBase, limit: int | None) -> None:
        self._out = out
        self._room = limit

    def write(self, data: bytes) -> None:
        if self._room is None:
            self._out.write(data)
            return
        if data[: self._room]:
            self._out.write(data[: self._room])
        if len(data) >= self._room:
            self._out.flush()
            raise BodyStopError
        self._room -= len(data)

    def flush(self) -> None:
        self._out.flush()

    def finish(self) -> None:
        """The whole body went out; a limit at its very end still stops here."""
        self._out.flush()
        if self._room == 0:
            raise BodyStopError


class ChunkedWriter:
    """Write a byte stream whole per frame, or in pieces of `chunk_bytes`.

    Pieces run across frame boundaries (one write may end one event and
    start the next) and are flushed one by one, so with TCP_NODELAY each
    becomes its own segment and the client's reads split where real
    networks split.
    """

    def __init__(self, out: io.BufferedIOBase | LimitedWriter, chunk_bytes: int | None) -> None:
        self._out = out
        self._chunk_bytes = chunk_bytes
        self._pending = bytearray()

    def write(self, data: bytes) -> None:
        if self._chunk_bytes is None:
            self._out.write(data)
            return
        self._pending += data
        while len(self._pending) >= self._chunk_bytes:
            self._emit(bytes(self._pending[: self._chunk_bytes]))
            del self._pending[: self._chunk_bytes]

    def finish(self) -> None:
        if self._pending:
            self._emit(bytes(self._pending))
            self._pending.clear()
        self._out.flush()

    def _emit(self, piece: bytes) -> None:
        self._out.write(piece)
        self._out.flush()
