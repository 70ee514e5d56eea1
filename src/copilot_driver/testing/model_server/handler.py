"""The HTTP request handler: records each request, routes it to the Chat
Completions or the Responses API, and sends the scripted reply - whole,
streamed, cut short, or never ending."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, ClassVar

from copilot_driver.testing.model_server import chat, responses, sockets
from copilot_driver.testing.model_server.errors import error_payload
from copilot_driver.testing.script import Reply

if TYPE_CHECKING:
    from copilot_driver.testing.model_server.server import ScriptedModelServer


def api_for(path: str) -> str | None:
    """Which API a request path asks for, whatever prefix the client uses."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/chat/completions"):
        return "chat"
    if route.endswith("/responses"):
        return "responses"
    return None


class Handler(BaseHTTPRequestHandler):
    """Answers from `model_server.script` and reports each request to it."""

    protocol_version = "HTTP/1.1"
    model_server: ClassVar[ScriptedModelServer]
    """The server this handler class is bound to (see `handler_for`)."""
    _reply: Reply | None = None
    """The scripted reply being sent (None for GET and unknown paths)."""

    def setup(self) -> None:
        super().setup()
        self.model_server._track(self.connection)
        sockets.set_no_delay(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.model_server._track(None)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return  # quiet: tests read `server.requests` instead

    def do_GET(self) -> None:
        self._reply = None
        self.model_server._record("GET", self.path, dict(self.headers), None)
        if self.path.rstrip("/").endswith("/models"):
            self._send_json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send_json({"error": {"message": "not found"}}, HTTPStatus.NOT_FOUND)

    def do_POST(self) -> None:
        self._reply = None
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.model_server._record("POST", self.path, dict(self.headers), body)
        api = api_for(self.path)
        if api is None or not isinstance(body, dict):
            self._send_json({"error": {"message": "unsupported"}}, HTTPStatus.NOT_FOUND)
            return
        script = self.model_server.script
        if api == "chat":
            messages = body.get("messages")
            reply = script.reply_for(messages if isinstance(messages, list) else [])
        else:
            reply = script.reply_for_responses(body.get("input"))
        if reply.delay_s and not self.model_server._wait(reply.delay_s):
            self.close_connection = True
            return
        self._reply = reply
        try:
            self._answer(api, body, reply)
        except sockets.BodyStopError:
            self._stop_body(reply)

    def _answer(self, api: str, body: dict[str, Any], reply: Reply) -> None:
        if reply.http_status is not None:
            headers = {}
            if reply.retry_after_s is not None:
                headers["Retry-After"] = str(reply.retry_after_s)
            self._send_json(error_payload(reply), reply.http_status, headers)
            return
        model = str(body.get("model") or "scripted")
        fragments = self.model_server.argument_fragments
        if api == "chat" and body.get("stream"):
            # Raw UTF-8 only when chunking, so the default stays ASCII-escaped.
            ascii_only = self.model_server.chunk_bytes is None
            self._send_stream(chat.stream_frames(reply, model, fragments, ascii_only=ascii_only))
        elif api == "chat":
            self._send_json(chat.completion(reply, model))
        elif body.get("stream"):
            self._send_stream(responses.stream_frames(reply, model, fragments))
        else:
            self._send_json(responses.response_object(reply, model))

    def _body_writer(self) -> io.BufferedIOBase | sockets.LimitedWriter:
        """The socket writer, behind a `LimitedWriter` when the body stops early."""
        limit = self._reply.body_limit if self._reply is not None else None
        return self.wfile if limit is None else sockets.LimitedWriter(self.wfile, limit)

    def _send_json(
        self,
        payload: Any,
        status: int = HTTPStatus.OK,
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        writer = self._body_writer()
        writer.write(data)
        if isinstance(writer, sockets.LimitedWriter):
            writer.finish()

    def _stop_body(self, reply: Reply) -> None:
        """The body stopped early: hold the connection (never_ends) until
        the server closes, then reset it."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        if reply.never_ends:
            self.model_server._wait(None)
        sockets.reset(self.connection)

    def _send_stream(self, frames: Iterator[bytes]) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        writer = sockets.ChunkedWriter(self._body_writer(), self.model_server.chunk_bytes)
        with contextlib.suppress(ConnectionError):  # the client hung up
            for frame in frames:
                writer.write(frame)
            writer.finish()


def handler_for(server: ScriptedModelServer) -> type[Handler]:
    """A `Handler` class bound to `server`."""

    class Bound(Handler):
        model_server = server

    return Bound
