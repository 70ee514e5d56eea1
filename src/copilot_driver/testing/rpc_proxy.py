"""A JSON-RPC proxy between a driver and the real sidecar, to change what each side sees.

The SDK's wire is JSON-RPC 2.0 in LSP framing (`Content-Length: N` header,
blank line, N bytes of JSON). `RpcProxy` listens on 127.0.0.1, connects each
client to the sidecar, and passes every message through, with three ways to
intervene, all decided per message:

- `rewrite`: a function applied to each sidecar -> driver message (e.g. to
  change the identifiers of a permission request);
- `after_permissions(n, "stall")`: once the n-th permission request has
  reached the driver, nothing more passes either way, and both connections
  stay open: a sidecar that stops answering;
- `after_permissions(n, "reject")`: from then on the proxy itself answers
  each request of the driver with a JSON-RPC error, and passes nothing.

`tripped_at` is when the n-th permission request was passed to the driver.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Literal

Message = dict[str, Any]
Mode = Literal["pass", "stall", "reject"]
PERMISSION_REQUESTED = "permission.requested"
REJECTED_CODE = -32000


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_frame(stream: IO[bytes]) -> tuple[bytes, bytes] | None:
    """One `Content-Length` frame (header, body), or None at the end of the stream."""
    header = b""
    while True:
        line = stream.readline()
        if not line:
            return None
        header += line
        if line in (b"\r\n", b"\n"):
            break
    length = re.search(rb"Content-Length:\s*(\d+)", header, re.IGNORECASE)
    if length is None:
        return None
    body = stream.read(int(length.group(1)))
    if len(body) < int(length.group(1)):
        return None
    return header, body


def permission_request_of(message: Message) -> Message | None:
    """The `permissionRequest` a sidecar -> driver message carries, if it is one."""
    event = (message.get("params") or {}).get("event")
    if isinstance(event, dict) and event.get("type") == PERMISSION_REQUESTED:
        request = (event.get("data") or {}).get("permissionRequest")
        return request if isinstance(request, dict) else None
    return None


class RpcProxy:
    def __init__(
        self, upstream_port: int, *, rewrite: Callable[[Message], Message] | None = None
    ) -> None:
        self.upstream_port = upstream_port
        self.rewrite = rewrite
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.permission_requests = 0
        self.tripped_at: float | None = None
        self._mode: Mode = "pass"
        self._after = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def after_permissions(self, count: int, mode: Mode) -> None:
        self._after, self._mode = count, mode

    @property
    def _tripped(self) -> bool:
        return self._mode != "pass" and self.tripped_at is not None

    def close(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> RpcProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                downstream, _ = self.listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
                for sock in (downstream, upstream):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._sockets += [downstream, upstream]
                for target in (self._to_driver, self._to_sidecar):
                    threading.Thread(
                        target=target, args=(downstream, upstream), daemon=True
                    ).start()

    def _to_driver(self, downstream: socket.socket, upstream: socket.socket) -> None:
        reader = upstream.makefile("rb")
        with contextlib.suppress(OSError):
            while (message := read_frame(reader)) is not None:
                header, body = message
                if self._tripped:
                    continue  # the sidecar "stopped answering"
                decoded = _decoded(body)
                if decoded is not None and permission_request_of(decoded) is not None:
                    with self._lock:
                        self.permission_requests += 1
                        if self.permission_requests == self._after:
                            self.tripped_at = time.monotonic()
                if decoded is not None and self.rewrite is not None:
                    body = json.dumps(self.rewrite(decoded)).encode()
                    header = b"Content-Length: %d\r\n\r\n" % len(body)
                downstream.sendall(header + body)

    def _to_sidecar(self, downstream: socket.socket, upstream: socket.socket) -> None:
        reader = downstream.makefile("rb")
        with contextlib.suppress(OSError):
            while (message := read_frame(reader)) is not None:
                header, body = message
                if not self._tripped:
                    upstream.sendall(header + body)
                elif self._mode == "reject":
                    decoded = _decoded(body)
                    if decoded is not None and "id" in decoded and "method" in decoded:
                        error = {"code": REJECTED_CODE, "message": "the kit refused the call"}
                        reply = {"jsonrpc": "2.0", "id": decoded["id"], "error": error}
                        downstream.sendall(frame(json.dumps(reply).encode()))


def _decoded(body: bytes) -> Message | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
