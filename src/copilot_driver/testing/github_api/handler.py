"""The HTTP request handler of both listeners (plain and TLS): read and
decode the request, let `routes.decide` answer it, record it, wait out any
delay, and send the answer. Every response carries `X-GitHub-Request-Id`,
as GitHub's do: without it CLI 1.0.102 warns that a 404 "does not appear to
originate from GitHub".
"""

from __future__ import annotations

import contextlib
import io
import json
import secrets
import ssl
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar, Protocol

from copilot_driver.testing.github_api import routes
from copilot_driver.testing.github_api.hosts import Role, bare_host
from copilot_driver.testing.github_api.records import ApiRequest, RequestLog, decode_body
from copilot_driver.testing.github_api.serving import Serving
from copilot_driver.testing.github_api.switches import Switches
from copilot_driver.testing.model_server import sockets

HANDSHAKE_TIMEOUT_S = 10.0
MAX_BODY_BYTES = 64 * 1024 * 1024


class Site(routes.Backend, Protocol):
    """What the handler needs from the running fake besides `routes.Backend`."""

    log: RequestLog
    switches: Switches

    def roles_for(self, host: str, secure: bool) -> frozenset[Role]: ...

    def wait(self, seconds: float | None) -> bool: ...


def request_id() -> str:
    """An id shaped like GitHub's `X-GitHub-Request-Id` (`C0DE:1A2B:...`)."""
    parts = (secrets.token_hex(n).upper() for n in (2, 2, 3, 3, 4))
    return ":".join(parts)


class ApiHandler(BaseHTTPRequestHandler):
    """Serves one connection of the plain or the TLS listener."""

    protocol_version = "HTTP/1.1"
    site: ClassVar[Site]
    serving: ClassVar[Serving]
    secure: ClassVar[bool]

    def setup(self) -> None:
        super().setup()
        self.serving.track(self.connection)
        sockets.set_no_delay(self.connection)

    def finish(self) -> None:
        try:
            with contextlib.suppress(OSError):
                super().finish()
        finally:
            self.serving.forget()

    def handle(self) -> None:
        if self.secure and not self._handshake():
            return
        with contextlib.suppress(ConnectionError, ssl.SSLError, TimeoutError):
            super().handle()

    def _handshake(self) -> bool:
        """The TLS handshake, here on the request thread (not the accept loop).
        A probe connection that closes first fails it quietly."""
        connection = self.connection
        assert isinstance(connection, ssl.SSLSocket)
        try:
            connection.settimeout(HANDSHAKE_TIMEOUT_S)
            connection.do_handshake()
            connection.settimeout(None)
        except (OSError, ssl.SSLError):
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return  # quiet: tests read the fake's records instead

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        raw = self._read_body()
        host = bare_host(headers.get("host", ""))
        path, _, query = self.path.partition("?")
        body = decode_body(raw, headers)
        site = self.site
        incoming = routes.Incoming(
            method=self.command,
            host=host,
            path=path,
            headers=headers,
            body=body,
            roles=site.roles_for(host, self.secure),
            secure=self.secure,
        )
        switches = site.switches  # one snapshot for the whole request
        answer = routes.decide(incoming, site, switches)
        record = ApiRequest(
            time=time.time(),
            method=self.command,
            host=host,
            path=path,
            query=query,
            headers=headers,
            body=body,
            status=answer.status,
            secure=self.secure,
        )
        site.log.add(record)
        delay = switches.delays.get(path, 0.0) + (answer.reply.delay_s if answer.reply else 0.0)
        if delay and not site.wait(delay):
            self.close_connection = True
            return
        try:
            self._send(answer)
        except sockets.BodyStopError:
            self._stop_body(answer)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(length, MAX_BODY_BYTES)) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        data = bytearray()
        while len(data) < MAX_BODY_BYTES:
            size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass  # trailers
                break
            data += self.rfile.read(size)
            self.rfile.readline()
        return bytes(data)

    def _send(self, answer: routes.Answer) -> None:
        self.send_response(answer.status)
        self.send_header("X-GitHub-Request-Id", request_id())
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.frames is not None:
            self._send_stream(answer.frames, answer)
            return
        data = b"" if answer.payload is None else json.dumps(answer.payload).encode()
        if answer.payload is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        writer = self._writer(answer)
        writer.write(data)
        if isinstance(writer, sockets.LimitedWriter):
            writer.finish()
        self.wfile.flush()

    def _send_stream(self, frames: Iterator[bytes], answer: routes.Answer) -> None:
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        writer = self._writer(answer)
        for frame in frames:
            writer.write(frame)
        if isinstance(writer, sockets.LimitedWriter):
            writer.finish()
        self.wfile.flush()

    def _writer(self, answer: routes.Answer) -> io.BufferedIOBase | sockets.LimitedWriter:
        limit = answer.reply.body_limit if answer.reply is not None else None
        return self.wfile if limit is None else sockets.LimitedWriter(self.wfile, limit)

    def _stop_body(self, answer: routes.Answer) -> None:
        """A scripted cut: hold the connection (`never_ends`) until the fake
        closes, then reset it."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        if answer.reply is not None and answer.reply.never_ends:
            self.site.wait(None)
        sockets.reset(self.connection)


def handler_for(site: Site, serving: Serving, *, secure: bool) -> type[ApiHandler]:
    """An `ApiHandler` class bound to one fake and one of its listeners."""

    class Bound(ApiHandler):
        pass

    Bound.site = site
    Bound.serving = serving
    Bound.secure = secure
    return Bound
