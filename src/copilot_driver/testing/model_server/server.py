"""The server itself: one thread serving 127.0.0.1, a record of every
request, and a `close()` that ends every connection."""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from copilot_driver.testing.model_server.handler import api_for, handler_for
from copilot_driver.testing.script import Script

CLOSE_TIMEOUT_S = 5.0
"""How long `close()` waits for the serving thread, then for request threads."""


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

    The defaults (`None`, `1`) write each frame whole, send each call's
    arguments in one delta and keep the chat stream's JSON ASCII-escaped.
    Both are plain attributes, so a test may change them, like `script`,
    while the server runs.
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
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler_for(self))
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
        return [r for r in self.requests if r.method == "POST" and api_for(r.path) == "responses"]

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

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> None:
        with self._lock:
            self._requests.append(RecordedRequest(method, path, headers, body))

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


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.testing.model_server",
        description="A scripted OpenAI-compatible model server on 127.0.0.1.",
    )
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
