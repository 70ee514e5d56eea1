"""One listening server on its own thread, and the sockets its request
threads hold, so `close()` can end every connection and leave no thread.

The fake runs up to three of these (plain HTTP, TLS, the CONNECT proxy);
they share one `closing` event, which also wakes scripted delays.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from http.server import ThreadingHTTPServer

CLOSE_TIMEOUT_S = 5.0
"""How long `close()` waits for the serving thread, then for request threads."""


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that does not print a client's hang-up."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: object, client_address: object) -> None:
        return


class QuietTCPServer(socketserver.ThreadingTCPServer):
    """A threading TCP server that does not print a client's hang-up."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        return


class Serving:
    """Runs a server's `serve_forever` on its own thread (`start`); request
    threads register their sockets with `track` and forget them with
    `forget`. Made before the server, so its handler class can name it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._server: socketserver.BaseServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._sockets: dict[threading.Thread, list[socket.socket]] = {}

    def start(self, server: socketserver.BaseServer) -> None:
        """Serve `server` until `close()`."""
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.name,
            daemon=True,
        )
        self._thread.start()

    @property
    def server(self) -> socketserver.BaseServer:
        assert self._server is not None, "not started"
        return self._server

    @property
    def port(self) -> int:
        address = self.server.server_address
        assert isinstance(address, tuple)
        return int(address[1])

    def track(self, sock: socket.socket) -> None:
        """Register a socket the calling request thread uses."""
        with self._lock:
            self._sockets.setdefault(threading.current_thread(), []).append(sock)

    def forget(self) -> None:
        """The calling request thread is done with its sockets."""
        with self._lock:
            self._sockets.pop(threading.current_thread(), None)

    def active(self) -> int:
        """Request threads still running."""
        with self._lock:
            return len(self._sockets)

    def close(self) -> None:
        """Stop accepting, shut every tracked socket (a blocked read returns
        EOF), then wait up to `CLOSE_TIMEOUT_S` for the request threads."""
        if self._server is None or self._thread is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=CLOSE_TIMEOUT_S)
        with self._lock:
            held = dict(self._sockets)
        for sockets in held.values():
            for sock in sockets:
                with contextlib.suppress(OSError):
                    # The plain method, also on a TLS socket: it must not
                    # drop the TLS state another thread is reading with.
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for thread in held:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
