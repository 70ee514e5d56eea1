"""A scripted OpenAI-compatible model server on 127.0.0.1.

The one part of a real run that cannot be real here is model inference.
This server stands in for it: the real Copilot runtime (chat completions)
and the real Codex CLI (Responses API, `wire_api = "responses"`) send it
real requests as a bring-your-own-model provider, and its scripted answers
make them perform real tool calls and send real permission requests.

It binds 127.0.0.1 only, answers streaming (SSE) and non-streaming
requests on both APIs, and records every request it receives so tests can
check what the runtime sent (and that no secret reached it). A scripted
reply can also be an HTTP error, a body cut short by a reset connection,
or a response that never ends, and the streams can be made awkward (tiny
TCP writes, tool arguments in many pieces) to test a client's parser and
its failure handling rather than the happy path.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import itertools
import json
import os
import socket
import struct
import sys
import termios
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from copilot_driver.testing.script import Reply, Script


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedModelServer:
    """Serve `script` until `close()`; usable as a context manager.

    Two options make every stream (both APIs) awkward on purpose, to test
    that a client reassembles what real networks and models hand it:

    - `chunk_bytes`: write the SSE body in writes of at most that many
      bytes, so frames - and multi-byte UTF-8 characters, since JSON is
      then sent as raw UTF-8 - arrive split across TCP segments;
    - `argument_fragments`: stream each tool call's `arguments` string in
      that many deltas.

    The defaults (`None`, `1`) keep the chat stream byte-for-byte what it
    always was. Both are plain attributes, so a test may change them, like
    `script`, while the server runs.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        port: int = 0,
        chunk_bytes: int | None = None,
        argument_fragments: int = 1,
    ) -> None:
        if chunk_bytes is not None and chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be at least 1, not {chunk_bytes}")
        if argument_fragments < 1:
            raise ValueError(f"argument_fragments must be at least 1, not {argument_fragments}")
        self.script = script or Script()
        self.chunk_bytes = chunk_bytes
        self.argument_fragments = argument_fragments
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections: dict[threading.Thread, socket.socket] = {}
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The provider base URL to give the runtime (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def responses_requests(self) -> list[RecordedRequest]:
        """The Responses API calls (POST only: Codex's built-in OpenAI
        provider also tries WebSocket upgrades with GET on the same path)."""
        return [r for r in self.requests if r.method == "POST" and _api_for(r.path) == "responses"]

    def close(self) -> None:
        """Stop serving and end every connection, so no request thread outlives
        the server: a scripted delay or a never-ending reply gives up at once,
        and an idle keep-alive connection is shut down. Waits up to
        `CLOSE_TIMEOUT_S` for the request threads."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=CLOSE_TIMEOUT_S)
        for connection in self._open_connections().values():
            # Wakes a thread waiting for the next request on an idle keep-alive
            # connection (its read returns EOF) without sending anything: a
            # held reply still ends with its own reset, not with a FIN first.
            with contextlib.suppress(OSError):  # already closed by its thread
                connection.shutdown(socket.SHUT_RD)
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for thread in self._open_connections():
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def active_requests(self) -> int:
        """Connections whose request thread is still running."""
        return len(self._open_connections())

    def __enter__(self) -> ScriptedModelServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- used by the request handler -------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _wait(self, seconds: float | None) -> bool:
        """Sleep for a scripted delay (None: until closed); False when closing."""
        return not self._closing.wait(seconds)

    def _open_connections(self) -> dict[threading.Thread, socket.socket]:
        with self._lock:
            return dict(self._connections)

    def _track(self, connection: socket.socket | None) -> None:
        """Register (or, with None, forget) the calling thread's connection."""
        with self._lock:
            if connection is None:
                self._connections.pop(threading.current_thread(), None)
            else:
                self._connections[threading.current_thread()] = connection


CLOSE_TIMEOUT_S = 5.0
"""How long `close()` waits for the serving thread, then for request threads."""


RESET_DRAIN_S = 2.0
"""How long a cut waits for its bytes to reach the client before the reset."""


def _wait_until_acknowledged(connection: socket.socket, timeout: float) -> None:
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


class _BodyStopError(Exception):
    """The scripted body ends here (`Reply.cut_after_bytes` / `never_ends`)."""


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        _reply: Reply | None = None
        """The scripted reply being sent (None for GET and unknown paths)."""

        def setup(self) -> None:
            super().setup()
            server._track(self.connection)
            # Small writes must leave as separate segments for `chunk_bytes`
            # to split what the client reads, not be coalesced by Nagle.
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def finish(self) -> None:
            try:
                super().finish()
            finally:
                server._track(None)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: tests read `server.requests` instead

        def do_GET(self) -> None:
            self._reply = None
            server._record(RecordedRequest("GET", self.path, dict(self.headers), None))
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
            server._record(RecordedRequest("POST", self.path, dict(self.headers), body))
            api = _api_for(self.path)
            if api is None or not isinstance(body, dict):
                self._send_json({"error": {"message": "unsupported"}}, HTTPStatus.NOT_FOUND)
                return
            script = server.script
            if api == "chat":
                messages = body.get("messages")
                reply = script.reply_for(messages if isinstance(messages, list) else [])
            else:
                reply = script.reply_for_responses(body.get("input"))
            if reply.delay_s and not server._wait(reply.delay_s):
                self.close_connection = True
                return
            self._reply = reply
            try:
                self._answer(api, body, reply)
            except _BodyStopError:
                self._stop_body(reply)

        def _answer(self, api: str, body: dict[str, Any], reply: Reply) -> None:
            if reply.http_status is not None:
                headers = {}
                if reply.retry_after_s is not None:
                    headers["Retry-After"] = str(reply.retry_after_s)
                self._send_json(_error_payload(reply), reply.http_status, headers)
                return
            model = str(body.get("model") or "scripted")
            fragments = server.argument_fragments
            if api == "chat" and body.get("stream"):
                # Raw UTF-8 only when chunking, so the default stays as it was.
                ascii_only = server.chunk_bytes is None
                frames = (
                    b"data: " + _json_bytes(chunk, ascii_only=ascii_only) + b"\n\n"
                    for chunk in _stream_chunks(reply, model, fragments)
                )
                self._send_stream(itertools.chain(frames, [b"data: [DONE]\n\n"]))
            elif api == "chat":
                self._send_json(_completion(reply, model))
            elif body.get("stream"):
                self._send_stream(
                    f"event: {event['type']}\n".encode()
                    + b"data: "
                    + _json_bytes(event, ascii_only=False)
                    + b"\n\n"
                    for event in _response_events(reply, model, fragments)
                )
            else:
                self._send_json(_response_object(reply, model))

        def _body_writer(self) -> io.BufferedIOBase | _LimitedWriter:
            """The socket writer, behind a `_LimitedWriter` when the body stops early."""
            limit = self._reply.body_limit if self._reply is not None else None
            return self.wfile if limit is None else _LimitedWriter(self.wfile, limit)

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
            if isinstance(writer, _LimitedWriter):
                writer.finish()

        def _stop_body(self, reply: Reply) -> None:
            """The body stopped early: hold the connection (never_ends) until
            the server closes, then reset it."""
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.wfile.flush()
            if reply.never_ends:
                server._wait(None)
            self._reset()

        def _reset(self) -> None:
            """Close with an RST, as a crashed peer does: SO_LINGER 0, then the
            descriptor closed at once (the handler's file objects still hold
            the socket object, so `close()` alone would defer it and the
            server's own shutdown(SHUT_WR) would send an orderly FIN first).

            An RST throws away whatever the kernel has not sent yet, so the
            bytes written are first given up to `RESET_DRAIN_S` to be
            acknowledged: the client gets exactly the scripted bytes, then
            the reset."""
            _wait_until_acknowledged(self.connection, RESET_DRAIN_S)
            with contextlib.suppress(OSError):
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            with contextlib.suppress(OSError):
                os.close(self.connection.detach())

        def _send_stream(self, frames: Iterator[bytes]) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            writer = _ChunkedWriter(self._body_writer(), server.chunk_bytes)
            with contextlib.suppress(ConnectionError):  # the client hung up
                for frame in frames:
                    writer.write(frame)
                writer.finish()

    return Handler


def _api_for(path: str) -> str | None:
    """Which API a request path asks for, whatever prefix the client uses."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/chat/completions"):
        return "chat"
    if route.endswith("/responses"):
        return "responses"
    return None


class _LimitedWriter:
    """The response body, up to `limit` bytes (None: all of it).

    Writing the byte that reaches the limit writes what fits and raises
    `_BodyStopError`; the handler then holds or resets the connection.
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
            raise _BodyStopError
        self._room -= len(data)

    def flush(self) -> None:
        self._out.flush()

    def finish(self) -> None:
        """The whole body went out; a limit at its very end still stops here."""
        self._out.flush()
        if self._room == 0:
            raise _BodyStopError


class _ChunkedWriter:
    """Write a byte stream whole per frame, or in pieces of `chunk_bytes`.

    Pieces run across frame boundaries (one write may end one event and
    start the next) and are flushed one by one, so with TCP_NODELAY each
    becomes its own segment and the client's reads split where real
    networks split.
    """

    def __init__(self, out: io.BufferedIOBase | _LimitedWriter, chunk_bytes: int | None) -> None:
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


def _json_bytes(payload: Any, *, ascii_only: bool) -> bytes:
    return json.dumps(payload, ensure_ascii=ascii_only).encode()


def _split(text: str, pieces: int) -> list[str]:
    """`text` in `pieces` consecutive parts of near-equal length (some may
    be empty when the text is shorter); they join back to `text`."""
    return [text[len(text) * i // pieces : len(text) * (i + 1) // pieces] for i in range(pieces)]


# OpenAI's error `type` and `code` per status, so clients that branch on
# them (rate limits, auth) see what the real service would send.
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def _error_payload(reply: Reply) -> dict[str, Any]:
    """The OpenAI-style error body for a reply with `http_status`."""
    status = reply.http_status or HTTPStatus.INTERNAL_SERVER_ERROR
    kind, code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    message = reply.text or f"Scripted HTTP {status}: {phrase}"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _tool_calls_payload(reply: Reply, *, with_index: bool) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(reply.tool_calls):
        item: dict[str, Any] = {
            "id": call.call_id or f"call_{index + 1}_{int(time.time() * 1000)}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json()},
        }
        if with_index:
            item["index"] = index
        calls.append(item)
    return calls


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls_payload(reply, with_index=False)
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _USAGE,
    }


def _stream_chunks(
    reply: Reply, model: str, argument_fragments: int = 1
) -> Iterator[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if reply.text:
        yield chunk({"content": reply.text})
    calls = _tool_calls_payload(reply, with_index=True)
    if calls and argument_fragments == 1:
        yield chunk({"tool_calls": calls})
    else:
        # As real servers stream calls: the first delta names the call, the
        # later ones carry only its index and more of the arguments.
        for call in calls:
            first, *rest = _split(call["function"]["arguments"], argument_fragments)
            header = {**call, "function": {"name": call["function"]["name"], "arguments": first}}
            yield chunk({"tool_calls": [header]})
            for piece in rest:
                more = {"index": call["index"], "function": {"arguments": piece}}
                yield chunk({"tool_calls": [more]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield {**base, "choices": [], "usage": _USAGE}


# -- the Responses API --------------------------------------------------------

_RESPONSES_USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


def _output_items(reply: Reply) -> list[dict[str, Any]]:
    """A reply as completed Responses output items: the message (if any)
    first, then one `function_call` per tool call, as the real API orders
    them. A reply with neither still yields an (empty) message, so every
    response has output."""
    token = uuid.uuid4().hex[:16]
    items: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        items.append(
            {
                "type": "message",
                "id": f"msg_{token}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}],
            }
        )
    for index, call in enumerate(reply.tool_calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{token}_{index + 1}",
                "call_id": call.call_id or f"call_{token}_{index + 1}",
                "name": call.name,
                "arguments": call.arguments_json(),
                "status": "completed",
            }
        )
    return items


def _response_object(
    reply: Reply,
    model: str,
    *,
    response_id: str | None = None,
    created_at: int | None = None,
    status: str = "completed",
    output: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A `response` object: the non-streamed answer, and the payload of the
    stream's `response.created` / `.in_progress` / `.completed` events."""
    done = status == "completed"
    return {
        "id": response_id or f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()) if created_at is None else created_at,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": model,
        "output": _output_items(reply) if output is None else output,
        "usage": _RESPONSES_USAGE if done else None,
    }


def _response_events(
    reply: Reply, model: str, argument_fragments: int = 1
) -> Iterator[dict[str, Any]]:
    """The streamed response as event payloads, each with `type` and an
    increasing `sequence_number` (the SSE `event:` line repeats `type`)."""
    items = _output_items(reply)
    response_id = f"resp_{uuid.uuid4().hex}"
    created_at = int(time.time())

    def response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return _response_object(
            reply,
            model,
            response_id=response_id,
            created_at=created_at,
            status=status,
            output=output,
        )

    def events() -> Iterator[tuple[str, dict[str, Any]]]:
        yield "response.created", {"response": response("in_progress", [])}
        yield "response.in_progress", {"response": response("in_progress", [])}
        for index, item in enumerate(items):
            at = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                part = item["content"][0]
                text = part["text"]
                started = {**item, "status": "in_progress", "content": []}
                yield "response.output_item.added", {"output_index": index, "item": started}
                empty = {**part, "text": ""}
                yield "response.content_part.added", {**at, "content_index": 0, "part": empty}
                delta = {**at, "content_index": 0, "delta": text, "logprobs": []}
                yield "response.output_text.delta", delta
                done = {**at, "content_index": 0, "text": text, "logprobs": []}
                yield "response.output_text.done", done
                yield "response.content_part.done", {**at, "content_index": 0, "part": part}
            else:
                started = {**item, "arguments": "", "status": "in_progress"}
                yield "response.output_item.added", {"output_index": index, "item": started}
                for piece in _split(item["arguments"], argument_fragments):
                    yield "response.function_call_arguments.delta", {**at, "delta": piece}
                finished = {**at, "name": item["name"], "arguments": item["arguments"]}
                yield "response.function_call_arguments.done", finished
            yield "response.output_item.done", {"output_index": index, "item": item}
        yield "response.completed", {"response": response("completed", items)}

    for sequence_number, (kind, payload) in enumerate(events()):
        yield {"type": kind, "sequence_number": sequence_number, **payload}


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground: `python -m copilot_driver.testing.model_server`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--script", type=Path, help="JSON script file (default: greet)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--chunk-bytes", type=int, default=None, help="write streams in pieces of N bytes"
    )
    parser.add_argument(
        "--argument-fragments", type=int, default=1, help="stream tool arguments in N deltas"
    )
    args = parser.parse_args(argv)
    script = Script.from_dict(json.loads(args.script.read_text())) if args.script else Script()
    with ScriptedModelServer(
        script,
        port=args.port,
        chunk_bytes=args.chunk_bytes,
        argument_fragments=args.argument_fragments,
    ) as server:
        print(f"scripted model listening on {server.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
