"""What the fake received: every request, decoded, in arrival order, and
every CONNECT the proxy saw.

A test asserts what the CLI sent, in what order, and that nothing was
sent (`requests_to(path) == []`), from these records.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ApiRequest:
    """One request as received: `host` without its port, `path` without its
    query, header names lower-cased, the body decoded (gzip undone; JSON,
    JSON Lines as a list, else text; None when empty), and the `status`
    the fake chose for it."""

    time: float
    method: str
    host: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    status: int
    secure: bool

    @property
    def token(self) -> str | None:
        """The bearer token the request carried, if any."""
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return None
        return token.strip() or None


@dataclass(frozen=True)
class ConnectRecord:
    """One CONNECT the proxy received, and whether it was tunnelled."""

    time: float
    host: str
    port: int
    tunnelled: bool


def decode_body(raw: bytes, headers: dict[str, str]) -> Any:
    """`raw` as the sender meant it: gzip or deflate undone, then JSON, or
    JSON Lines (telemetry) as a list, else text."""
    if not raw:
        return None
    encoding = headers.get("content-encoding", "").lower()
    try:
        if encoding == "gzip" or raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
    except (OSError, zlib.error, EOFError):
        return raw.decode("utf-8", "replace")
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return [json.loads(line) for line in lines]
    except ValueError:
        return text


class RequestLog:
    """A thread-safe, append-only list of requests a test can wait on."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._requests: list[ApiRequest] = []
        self._connects: list[ConnectRecord] = []

    def add(self, request: ApiRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def add_connect(self, record: ConnectRecord) -> None:
        with self._changed:
            self._connects.append(record)
            self._changed.notify_all()

    def requests(self) -> list[ApiRequest]:
        with self._changed:
            return list(self._requests)

    def connects(self) -> list[ConnectRecord]:
        with self._changed:
            return list(self._connects)

    def requests_to(self, path: str, method: str | None = None) -> list[ApiRequest]:
        """The requests for `path` (and `method`, when given), in order."""
        return [
            request
            for request in self.requests()
            if request.path == path and (method is None or request.method == method)
        ]

    def wait_for(self, path: str, count: int = 1, timeout: float = 10.0) -> list[ApiRequest]:
        """Wait until `count` requests for `path` arrived; return them all.
        Raises TimeoutError quoting the paths seen when they do not."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [r for r in self._requests if r.path == path]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [r.path for r in self._requests]
                    raise TimeoutError(
                        f"{count} request(s) to {path} not seen in {timeout}s: {seen}"
                    )
                self._changed.wait(left)

    def clear(self) -> None:
        """Forget everything received so far."""
        with self._changed:
            self._requests.clear()
            self._connects.clear()
