"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

The one part of a real run that cannot be real here is model inference.
This server stands in for it: the real Copilot runtime sends it real
requests (as a bring-your-own-model provider), and its scripted answers
make the runtime perform real tool calls and send real permission requests.

It binds 127.0.0.1 only, answers streaming (SSE) and non-streaming
requests, and records every request it receives so tests can check what
the runtime sent (and that no secret reached it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
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
    """Serve `script` until `close()`; usable as a context manager."""

    def __init__(self, script: Script | None = None, *, port: int = 0) -> None:
        self.script = script or Script()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
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

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

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

    def _wait(self, seconds: float) -> bool:
        """Sleep for a scripted delay; False when the server is closing."""
        return not self._closing.wait(seconds)


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: tests read `server.requests` instead

        def do_GET(self) -> None:
            server._record(RecordedRequest("GET", self.path, dict(self.headers), None))
            if self.path.rstrip("/").endswith("/models"):
                self._send_json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
            else:
                self._send_json({"error": {"message": "not found"}}, HTTPStatus.NOT_FOUND)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            server._record(RecordedRequest("POST", self.path, dict(self.headers), body))
            if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(
                body, dict
            ):
                self._send_json({"error": {"message": "unsupported"}}, HTTPStatus.NOT_FOUND)
                return
            messages = body.get("messages")
            reply = server.script.reply_for(messages if isinstance(messages, list) else [])
            if reply.delay_s and not server._wait(reply.delay_s):
                self.close_connection = True
                return
            model = str(body.get("model") or "scripted")
            if body.get("stream"):
                self._send_stream(_stream_chunks(reply, model))
            else:
                self._send_json(_completion(reply, model))

        def _send_json(self, payload: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, chunks: Iterator[dict[str, Any]]) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in chunks:
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


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


def _stream_chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
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
    if reply.tool_calls:
        yield chunk({"tool_calls": _tool_calls_payload(reply, with_index=True)})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield {**base, "choices": [], "usage": _USAGE}


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground: `python -m copilot_driver.testing.model_server`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--script", type=Path, help="JSON script file (default: greet)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    script = Script.from_dict(json.loads(args.script.read_text())) if args.script else Script()
    with ScriptedModelServer(script, port=args.port) as server:
        print(f"scripted model listening on {server.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
