"""Awkward and broken connections: tiny writes, cut bodies, responses that never end."""

from __future__ import annotations

import io
import json
import socket
import time
from typing import Any

import httpx
import pytest

from copilot_driver.testing.model_server import ScriptedModelServer, sockets
from copilot_driver.testing.script import Reply, Rule, Script
from helpers.model_server_client import (
    CUT,
    LONG_TEXT,
    NON_ASCII_ARGS,
    R_SCRIPT,
    normalized,
    r_user,
    raw_exchange,
    raw_stream,
    sse_events,
    tool_arguments,
    user,
)


@pytest.mark.parametrize("chunk_bytes", [1, 7])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_chunked_stream_reassembles_to_the_same_events(
    api: str, chunk_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[bytes] = []
    emit = sockets.ChunkedWriter._emit

    def recording_emit(self: Any, piece: bytes) -> None:
        writes.append(piece)
        emit(self, piece)

    monkeypatch.setattr(sockets.ChunkedWriter, "_emit", recording_emit)
    with ScriptedModelServer(R_SCRIPT) as plain:
        expected = {t: sse_events(raw_stream(plain, api, t)) for t in ("TEXT", "BOTH", "UNICODE")}
    assert not writes, "without chunk_bytes frames are written whole"
    with ScriptedModelServer(R_SCRIPT, chunk_bytes=chunk_bytes) as chunked:
        for trigger, events in expected.items():
            writes.clear()
            body = raw_stream(chunked, api, trigger)
            assert b"".join(writes) == body, "the body is exactly the chunked writes"
            assert all(len(piece) <= chunk_bytes for piece in writes)
            assert len(writes) == -(-len(body) // chunk_bytes)
            assert normalized(sse_events(body)) == normalized(events)
            if trigger == "UNICODE":
                assert tool_arguments(api, sse_events(body)) == {0: NON_ASCII_ARGS}
                # Raw UTF-8 went out; one byte per write splits every character.
                assert "日本".encode() in body
                if chunk_bytes == 1:
                    assert any(not _decodes(piece) for piece in writes)


def _decodes(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_chunked_writer_splits_across_frames_and_flushes_each_piece() -> None:
    class Sink(io.BytesIO):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[str, bytes]] = []

        def write(self, data: Any) -> int:
            self.log.append(("write", bytes(data)))
            return super().write(data)

        def flush(self) -> None:
            self.log.append(("flush", b""))

    sink = Sink()
    writer = sockets.ChunkedWriter(sink, 4)
    writer.write(b"data: 1\n\n")
    writer.write(b"data: \xc3\xbc\n\n")
    writer.finish()
    assert sink.log == [
        ("write", b"data"),
        ("flush", b""),
        ("write", b": 1\n"),
        ("flush", b""),
        ("write", b"\ndat"),
        ("flush", b""),
        ("write", b"a: \xc3"),  # the piece ends inside "ü"
        ("flush", b""),
        ("write", b"\xbc\n\n"),
        ("flush", b""),
        ("flush", b""),
    ]


def test_stream_connections_use_tcp_nodelay(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    init = sockets.ChunkedWriter.__init__

    def spy(self: Any, out: Any, chunk_bytes: int | None) -> None:
        sock = out._sock  # the handler's unbuffered socket writer
        seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        init(self, out, chunk_bytes)

    monkeypatch.setattr(sockets.ChunkedWriter, "__init__", spy)
    with ScriptedModelServer(R_SCRIPT, chunk_bytes=3) as server:
        raw_stream(server, "responses", "TEXT")
    assert seen
    assert all(seen)


def _uncut_length(api: str, stream: bool) -> int:
    """How long the same reply's body is when nothing cuts it."""
    script = Script(default=Reply(text=LONG_TEXT))
    with ScriptedModelServer(script) as whole:
        return len(raw_exchange(whole, api, "any", stream=stream).body)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_cut_body_stops_at_the_byte_and_resets_the_connection(
    broken_server: ScriptedModelServer, api: str, stream: bool
) -> None:
    got = raw_exchange(broken_server, api, "CUT", stream=stream)
    assert got.status == 200
    assert got.ending == "reset", "an abrupt end, not an orderly close"
    assert len(got.body) == CUT
    full = _uncut_length(api, stream)
    assert full > CUT
    if stream:
        assert got.headers["content-type"] == "text/event-stream"
        # The cut falls inside an event: its frame is never terminated.
        assert not got.body.endswith(b"\n\n")
        assert got.body.startswith(b"data: {" if api == "chat" else b"event: response.created")
    else:
        assert got.headers["content-length"] == str(full), "the length promised the whole body"
        assert got.body.startswith(b"{")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_cut_body_fails_a_real_client(
    broken_server: ScriptedModelServer, api: str, stream: bool
) -> None:
    path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
    body: dict[str, Any] = {"model": "m", "stream": stream}
    body.update({"messages": [user("CUT")]} if api == "chat" else {"input": [r_user("CUT")]})
    with (
        httpx.Client(trust_env=False, timeout=10) as client,
        pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)),
    ):
        client.post(f"http://127.0.0.1:{broken_server.port}{path}", json=body).read()


def test_a_cut_at_zero_sends_the_headers_only(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "chat", "CUTZERO", stream=True)
    assert (got.status, got.body, got.ending) == (200, b"", "reset")


def test_an_error_body_can_be_cut_too(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "responses", "CUTERROR", stream=False)
    assert got.status == 500
    assert got.body == b'{"error": '
    assert got.ending == "reset"


@pytest.mark.parametrize("stream", [True, False])
def test_a_cut_past_the_end_sends_the_whole_body_normally(
    broken_server: ScriptedModelServer, stream: bool
) -> None:
    got = raw_exchange(broken_server, "chat", "CUTLATE", stream=stream, wait_s=2)
    if stream:
        assert got.ending == "eof"
        assert got.body.endswith(b"data: [DONE]\n\n")
    else:
        assert got.ending == "complete"
        assert json.loads(got.body)["choices"][0]["message"]["content"] == "short"


def test_a_cut_with_tiny_writes_still_stops_at_the_byte() -> None:
    script = Script(default=Reply(text=LONG_TEXT, cut_after_bytes=CUT))
    with ScriptedModelServer(script, chunk_bytes=7) as server:
        for api in ("chat", "responses"):
            got = raw_exchange(server, api, "any", stream=True)
            assert (len(got.body), got.ending) == (CUT, "reset")


@pytest.mark.parametrize(
    ("trigger", "sent"), [("ENDLESS", 0), ("ENDLESSCHUNK", CUT)], ids=["headers", "first-chunk"]
)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_response_that_never_ends_holds_the_connection_until_close(
    api: str, stream: bool, trigger: str, sent: int
) -> None:
    server = ScriptedModelServer(
        Script(
            rules=(
                Rule(
                    "ENDLESSCHUNK", (Reply(text=LONG_TEXT, never_ends=True, cut_after_bytes=CUT),)
                ),
                Rule("ENDLESS", (Reply(text=LONG_TEXT, never_ends=True),)),
            )
        )
    )
    try:
        held: list[socket.socket] = []
        got = raw_exchange(server, api, trigger, stream=stream, wait_s=0.3, keep=held)
        assert got.status == 200
        assert got.ending == "silent"
        assert len(got.body) == sent
        assert server.active_requests() == 1
        (client,) = held
        started = time.monotonic()
        server.close()
        assert time.monotonic() - started < 2, "close() waited on the endless reply"
        assert server.active_requests() == 0, "the request's thread outlived the server"
        client.settimeout(2)
        with pytest.raises(ConnectionResetError):
            client.recv(65536)
        client.close()
    finally:
        server.close()


def test_a_json_script_can_break_connections() -> None:
    raw = {"default": {"text": LONG_TEXT, "cut_after_bytes": CUT}}
    script = Script.from_dict(json.loads(json.dumps(raw)))
    with ScriptedModelServer(script) as server:
        got = raw_exchange(server, "responses", "any", stream=True)
    assert (len(got.body), got.ending) == (CUT, "reset")
