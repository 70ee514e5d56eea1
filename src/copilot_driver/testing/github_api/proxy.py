"""The CONNECT proxy the CLI reaches the real host names through
(`HTTPS_PROXY=http://127.0.0.1:<port>`).

Each `CONNECT host:443` for a host the fake serves is tunnelled to the TLS
listener; any other target is refused with 403. Every CONNECT is recorded
in order, tunnelled or not, so a test sees where the CLI tried to go.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import socketserver
import time
from collections.abc import Callable

from copilot_driver.testing.github_api.records import ConnectRecord, RequestLog
from copilot_driver.testing.github_api.serving import Serving

HEAD_TIMEOUT_S = 10.0
MAX_HEAD_BYTES = 64 * 1024
RELAY_CHUNK = 64 * 1024

ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"
FORBIDDEN = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
NOT_ALLOWED = b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The request head (up to the blank line) and any bytes read past it."""
    sock.settimeout(HEAD_TIMEOUT_S)
    data = b""
    while b"\r\n\r\n" not in data and len(data) < MAX_HEAD_BYTES:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.settimeout(None)
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def parse_target(target: str) -> tuple[str, int] | None:
    """`host:port` (or `[v6]:port`) as (lower-cased host, port), or None."""
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    return host.strip("[]").lower(), int(port)


def relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until both sides have finished sending."""
    with selectors.DefaultSelector() as selector:
        selector.register(client, selectors.EVENT_READ, upstream)
        selector.register(upstream, selectors.EVENT_READ, client)
        open_sides = 2
        while open_sides:
            for key, _ in selector.select():
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                target: socket.socket = key.data
                try:
                    data = source.recv(RELAY_CHUNK)
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(source)
                    open_sides -= 1
                    with contextlib.suppress(OSError):
                        target.shutdown(socket.SHUT_WR)
                    continue
                try:
                    target.sendall(data)
                except OSError:
                    return


class ConnectHandler(socketserver.BaseRequestHandler):
    """One proxy client: a CONNECT head, then a tunnel or a refusal."""

    serving: Serving
    log: RequestLog
    serves: Callable[[str, int], bool]
    upstream_port: int

    def handle(self) -> None:
        client: socket.socket = self.request
        self.serving.track(client)
        try:
            self._handle(client)
        except OSError:
            return
        finally:
            self.serving.forget()

    def _handle(self, client: socket.socket) -> None:
        head, rest = read_head(client)
        method, _, remainder = head.decode("latin-1").partition(" ")
        target = parse_target(remainder.split(" ", 1)[0])
        if method.upper() != "CONNECT":
            client.sendall(NOT_ALLOWED if method else BAD_REQUEST)
            return
        if target is None:
            client.sendall(BAD_REQUEST)
            return
        host, port = target
        tunnelled = self.serves(host, port)
        self.log.add_connect(ConnectRecord(time.time(), host, port, tunnelled))
        if not tunnelled:
            client.sendall(FORBIDDEN)
            return
        with socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5) as upstream:
            upstream.settimeout(None)
            self.serving.track(upstream)
            client.sendall(ESTABLISHED)
            if rest:
                upstream.sendall(rest)
            relay(client, upstream)


def connect_handler(
    serving: Serving, log: RequestLog, serves: Callable[[str, int], bool], upstream_port: int
) -> type[ConnectHandler]:
    """A `ConnectHandler` class bound to one fake."""

    class Bound(ConnectHandler):
        pass

    Bound.serving = serving
    Bound.log = log
    Bound.serves = staticmethod(serves)
    Bound.upstream_port = upstream_port
    return Bound
