"""JsonRpcConnection over an in-memory transport (no process, no pipes).

The peer's output is an async iterator fed from a queue; what the
connection writes is recorded line by line, so each test plays the peer by
hand: it reads the requests the connection wrote and feeds back responses,
notifications and requests of its own.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.core.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ConnectionClosedError,
    JsonRpcConnection,
    RpcError,
)
from copilot_driver.adapters.core.process import LineOverflow

SLOW_HANDLER_S = 0.3

Incoming = str | LineOverflow | None


class Peer:
    """The other side of the connection: feeds lines in, records lines out."""

    def __init__(self, write_delay_s: float = 0.0) -> None:
        self.inbox: asyncio.Queue[Incoming] = asyncio.Queue()
        self.written: list[str] = []
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.notifications: list[tuple[str, Any]] = []
        self.write_delay_s = write_delay_s

    async def lines(self) -> AsyncIterator[str | LineOverflow]:
        while (line := await self.inbox.get()) is not None:
            yield line

    async def write(self, line: str) -> None:
        if self.write_delay_s:
            await asyncio.sleep(self.write_delay_s)
        self.written.append(line)
        self.outbox.put_nowait(json.loads(line))

    def notified(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def send(self, message: dict[str, Any] | str | LineOverflow) -> None:
        self.inbox.put_nowait(json.dumps(message) if isinstance(message, dict) else message)

    def end(self) -> None:
        self.inbox.put_nowait(None)

    async def next_written(self, timeout_s: float = 2.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.outbox.get(), timeout_s)

    async def flush(self) -> None:
        """Waits until every line fed so far has been dispatched."""
        while not self.inbox.empty():
            await asyncio.sleep(0.001)
        for _ in range(5):
            await asyncio.sleep(0)


Handler = Callable[[str, Any], Awaitable[Any]]


class Harness:
    def __init__(self, peer: Peer, connection: JsonRpcConnection) -> None:
        self.peer = peer
        self.connection = connection
        self.serving: asyncio.Task[None] = asyncio.create_task(connection.serve(peer.lines()))

    async def stop(self) -> None:
        self.peer.end()
        await asyncio.wait_for(self.serving, 2.0)


def connect(peer: Peer, handler: Handler | None = None) -> Harness:
    connection = JsonRpcConnection(peer.write, on_notification=peer.notified, on_request=handler)
    return Harness(peer, connection)


@pytest.fixture
def peer() -> Peer:
    return Peer()


# -- outgoing requests -----------------------------------------------------


async def test_request_writes_a_json_rpc_line_with_a_fresh_id(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("thread/start", {"cwd": "/w"}))
    sent = await peer.next_written()
    assert sent == {"jsonrpc": "2.0", "id": 1, "method": "thread/start", "params": {"cwd": "/w"}}
    peer.send({"id": 1, "result": {"thread": {"id": "t1"}}})
    assert await call == {"thread": {"id": "t1"}}
    second = asyncio.create_task(harness.connection.request("account/read"))
    sent = await peer.next_written()
    assert sent == {"jsonrpc": "2.0", "id": 2, "method": "account/read"}, "no params key for None"
    peer.send({"id": 2, "result": None})
    assert await second is None
    await harness.stop()


async def test_out_of_order_responses_reach_their_own_requests(peer: Peer) -> None:
    harness = connect(peer)
    calls = [asyncio.create_task(harness.connection.request(f"m{n}", {"n": n})) for n in range(5)]
    sent = [await peer.next_written() for _ in calls]
    ids = {message["params"]["n"]: message["id"] for message in sent}
    assert len(set(ids.values())) == 5
    for n in (3, 0, 4, 2, 1):
        peer.send({"id": ids[n], "result": f"answer {n}"})
    assert await asyncio.gather(*calls) == [f"answer {n}" for n in range(5)]
    await harness.stop()


@pytest.mark.parametrize(
    ("error", "code", "message", "data"),
    [
        ({"code": -32600, "message": "Not initialized"}, -32600, "Not initialized", None),
        (
            {"code": -32602, "message": "bad params", "data": {"field": "cwd"}},
            -32602,
            "bad params",
            {"field": "cwd"},
        ),
        ({"message": "no code"}, INTERNAL_ERROR, "no code", None),
        ({"code": "x", "message": "string code"}, INTERNAL_ERROR, "string code", None),
        ({"code": 7}, 7, "error", None),
        ("just a string", INTERNAL_ERROR, "just a string", None),
    ],
)
async def test_error_responses_raise_rpc_error(
    peer: Peer, error: Any, code: int, message: str, data: Any
) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("thread/resume"))
    request_id = (await peer.next_written())["id"]
    peer.send({"id": request_id, "error": error})
    with pytest.raises(RpcError) as raised:
        await call
    assert (raised.value.code, raised.value.message, raised.value.data) == (code, message, data)
    assert message in str(raised.value)
    await harness.stop()


async def test_a_response_without_jsonrpc_field_is_accepted(peer: Peer) -> None:
    """The Codex app-server never writes `"jsonrpc": "2.0"`."""
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("initialize", {}))
    request_id = (await peer.next_written())["id"]
    peer.send(f'{{"id": {request_id}, "result": {{"userAgent": "codex"}}, "extra": 1}}')
    assert await call == {"userAgent": "codex"}
    await harness.stop()


async def test_notify_writes_no_id(peer: Peer) -> None:
    harness = connect(peer)
    await harness.connection.notify("initialized")
    await harness.connection.notify("progress", {"step": 1})
    assert [json.loads(line) for line in peer.written] == [
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "method": "progress", "params": {"step": 1}},
    ]
    await harness.stop()


async def test_request_timeout_raises_and_forgets_the_request(peer: Peer) -> None:
    harness = connect(peer)
    with pytest.raises(TimeoutError):
        await harness.connection.request("turn/start", timeout=0.05)
    assert harness.connection._pending == {}
    assert (await peer.next_written())["id"] == 1
    # The late answer is ignored, and the connection still works.
    peer.send({"id": 1, "result": "late"})
    call = asyncio.create_task(harness.connection.request("again"))
    request_id = (await peer.next_written())["id"]
    assert request_id == 2
    peer.send({"id": 2, "result": "fine"})
    assert await call == "fine"
    await harness.stop()


async def test_a_cancelled_request_is_forgotten(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("slow"))
    await peer.next_written()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert harness.connection._pending == {}
    await harness.stop()


async def test_close_fails_pending_and_later_requests_with_the_reason(peer: Peer) -> None:
    harness = connect(peer)
    calls = [asyncio.create_task(harness.connection.request(f"m{n}")) for n in range(3)]
    for _ in calls:
        await peer.next_written()
    reason = "codex app-server closed its output (status 1): boom"
    harness.connection.close(reason)
    for call in calls:
        with pytest.raises(ConnectionClosedError, match="boom") as raised:
            await call
        assert str(raised.value) == reason
    written_before = len(peer.written)
    with pytest.raises(ConnectionClosedError) as later:
        await harness.connection.request("after/close")
    assert str(later.value) == reason
    assert len(peer.written) == written_before, "a request after close is never written"
    assert harness.connection._pending == {}
    await harness.stop()


async def test_close_leaves_already_answered_requests_alone(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("m"))
    request_id = (await peer.next_written())["id"]
    peer.send({"id": request_id, "result": 1})
    await peer.flush()
    harness.connection.close("gone")
    assert await call == 1
    await harness.stop()


async def test_end_of_input_does_not_fail_requests_by_itself(peer: Peer) -> None:
    """serve() only returns; the owner decides (close) with its own reason."""
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("m"))
    await peer.next_written()
    await harness.stop()
    await asyncio.sleep(0.02)
    assert not call.done()
    harness.connection.close("eof")
    with pytest.raises(ConnectionClosedError, match="eof"):
        await call


async def test_a_failing_write_fails_the_request_and_forgets_it() -> None:
    async def broken(line: str) -> None:
        raise ConnectionClosedError("stdin is closed")

    connection = JsonRpcConnection(broken, on_notification=lambda method, params: None)
    with pytest.raises(ConnectionClosedError, match="stdin is closed"):
        await connection.request("m")
    assert connection._pending == {}


# -- incoming notifications and junk ---------------------------------------


async def test_notifications_are_dispatched_in_order(peer: Peer) -> None:
    harness = connect(peer)
    for n in range(50):
        peer.send({"method": "item/agentMessage/delta", "params": {"delta": str(n)}})
    peer.send({"method": "no/params"})
    peer.send({"jsonrpc": "2.0", "method": "with/null/id", "id": None, "params": [1]})
    await harness.stop()
    assert peer.notifications == [
        *[("item/agentMessage/delta", {"delta": str(n)}) for n in range(50)],
        ("no/params", None),
        ("with/null/id", [1]),
    ]
    assert peer.written == [], "a notification is never answered"


JUNK_LINES = [
    "",
    "   ",
    "not json",
    "{truncated",
    "[1, 2, 3]",
    '"a string"',
    "42",
    "null",
    "{}",
    '{"foo": "bar"}',
    '{"id": 5}',
    '{"id": 5, "foo": 1}',
    '{"id": 12345, "result": "for nobody"}',
    '{"id": "abc", "error": {"code": 1, "message": "for nobody"}}',
    '{"id": null, "error": {"code": -32700, "message": "Parse error"}}',
    '{"method": 5, "params": {}}',
    '{"method": null, "id": 3}',
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "1" * 10_000,
    "\ufffd\x00\x7f",
    '{"method": "x", "params": 1}\n{"method": "y"}',
]


async def test_unknown_shapes_and_bad_lines_are_skipped(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("m"))
    request_id = (await peer.next_written())["id"]
    for line in JUNK_LINES:
        peer.send(line)
    peer.send(LineOverflow(20_000_000))
    peer.send({"method": "still/alive"})
    peer.send({"id": request_id, "result": "answered"})
    assert await call == "answered"
    await harness.stop()
    assert harness.serving.exception() is None
    assert peer.notifications == [("still/alive", None)]
    assert peer.written == [json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "m"})]


async def test_a_duplicate_response_is_ignored(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("m"))
    request_id = (await peer.next_written())["id"]
    peer.send({"id": request_id, "result": "first"})
    peer.send({"id": request_id, "result": "second"})
    peer.send({"id": request_id, "error": {"code": 1, "message": "third"}})
    assert await call == "first"
    await harness.stop()
    assert harness.serving.exception() is None


async def test_a_response_with_an_unhashable_id_does_not_stop_serve(peer: Peer) -> None:
    harness = connect(peer)
    peer.send('{"id": [1], "result": 1}')
    peer.send('{"id": {"a": 1}, "error": {"code": 1, "message": "x"}}')
    peer.send({"method": "after"})
    await harness.stop()
    assert peer.notifications == [("after", None)]


async def test_a_boolean_id_does_not_answer_request_one(peer: Peer) -> None:
    harness = connect(peer)
    call = asyncio.create_task(harness.connection.request("m"))
    assert (await peer.next_written())["id"] == 1
    peer.send('{"id": true, "result": "not yours"}')
    await peer.flush()
    assert not call.done()
    peer.send({"id": 1, "result": "yours"})
    assert await call == "yours"
    await harness.stop()


# -- incoming requests -------------------------------------------------------


async def test_peer_requests_are_answered_with_the_handler_result(peer: Peer) -> None:
    seen: list[tuple[str, Any]] = []

    async def handler(method: str, params: Any) -> Any:
        seen.append((method, params))
        return {"contentItems": [{"type": "inputText", "text": "42"}], "success": True}

    harness = connect(peer, handler)
    # Codex numbers its own requests from 0, in an id space of their own.
    peer.send({"id": 0, "method": "item/tool/call", "params": {"tool": "lookup_answer"}})
    reply = await peer.next_written()
    assert reply == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"contentItems": [{"type": "inputText", "text": "42"}], "success": True},
    }
    peer.send({"id": "req-7", "method": "currentTime/read"})
    assert (await peer.next_written())["id"] == "req-7"
    assert seen == [("item/tool/call", {"tool": "lookup_answer"}), ("currentTime/read", None)]
    await harness.stop()


async def test_a_null_result_is_still_written(peer: Peer) -> None:
    async def handler(method: str, params: Any) -> Any:
        return None

    harness = connect(peer, handler)
    peer.send({"id": 3, "method": "m"})
    assert await peer.next_written() == {"jsonrpc": "2.0", "id": 3, "result": None}
    await harness.stop()


async def test_a_handler_rpc_error_becomes_an_error_reply(peer: Peer) -> None:
    async def handler(method: str, params: Any) -> Any:
        if method == "with/data":
            raise RpcError(-32000, "no user can answer", {"why": "unattended"})
        raise RpcError(-32602, "bad params")

    harness = connect(peer, handler)
    peer.send({"id": 1, "method": "with/data"})
    peer.send({"id": 2, "method": "without/data"})
    replies = {reply["id"]: reply for reply in [await peer.next_written() for _ in range(2)]}
    assert replies[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32000, "message": "no user can answer", "data": {"why": "unattended"}},
    }
    assert replies[2] == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32602, "message": "bad params"},
    }
    await harness.stop()


async def test_a_handler_exception_becomes_an_internal_error_reply(
    peer: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(method: str, params: Any) -> Any:
        raise KeyError("tool exploded")

    harness = connect(peer, handler)
    peer.send({"id": 9, "method": "item/tool/call"})
    reply = await peer.next_written()
    assert reply["id"] == 9
    assert reply["error"]["code"] == INTERNAL_ERROR == -32603
    assert "tool exploded" in reply["error"]["message"]
    assert "handler for item/tool/call failed" in caplog.text
    await harness.stop()


async def test_without_a_handler_requests_get_method_not_found(peer: Peer) -> None:
    harness = connect(peer, handler=None)
    peer.send({"id": 4, "method": "item/tool/requestUserInput", "params": {}})
    reply = await peer.next_written()
    assert reply["id"] == 4
    assert reply["error"]["code"] == METHOD_NOT_FOUND == -32601
    assert "item/tool/requestUserInput" in reply["error"]["message"]
    await harness.stop()


async def test_slow_peer_requests_are_answered_concurrently(peer: Peer) -> None:
    async def handler(method: str, params: Any) -> Any:
        await asyncio.sleep(SLOW_HANDLER_S)
        return params

    harness = connect(peer, handler)
    started = time.monotonic()
    peer.send({"id": 1, "method": "slow", "params": "a"})
    peer.send({"id": 2, "method": "slow", "params": "b"})
    replies = [await peer.next_written(timeout_s=5) for _ in range(2)]
    elapsed = time.monotonic() - started
    assert sorted((r["id"], r["result"]) for r in replies) == [(1, "a"), (2, "b")]
    assert elapsed < SLOW_HANDLER_S * 1.8, f"answered one after the other ({elapsed:.2f} s)"
    await harness.stop()


async def test_a_slow_handler_does_not_hold_up_notifications_or_responses(peer: Peer) -> None:
    release = asyncio.Event()

    async def handler(method: str, params: Any) -> Any:
        await release.wait()
        return "done"

    harness = connect(peer, handler)
    call = asyncio.create_task(harness.connection.request("mine"))
    request_id = (await peer.next_written())["id"]
    peer.send({"id": 0, "method": "blocked"})
    peer.send({"method": "note"})
    peer.send({"id": request_id, "result": "ok"})
    assert await asyncio.wait_for(call, 2) == "ok"
    assert peer.notifications == [("note", None)]
    release.set()
    assert await peer.next_written() == {"jsonrpc": "2.0", "id": 0, "result": "done"}
    await harness.stop()


async def test_replies_and_requests_never_interleave_on_the_wire() -> None:
    """A writer that yields mid-line: the lock keeps every line whole."""
    chunks: list[str] = []

    async def chunked_write(line: str) -> None:
        for start in range(0, len(line), 5):
            chunks.append(line[start : start + 5])
            await asyncio.sleep(0)
        chunks.append("\n")

    async def handler(method: str, params: Any) -> Any:
        await asyncio.sleep(0.001 * (params % 3))
        return {"echo": params, "padding": "x" * 40}

    peer = Peer()
    connection = JsonRpcConnection(chunked_write, on_notification=peer.notified, on_request=handler)
    serving = asyncio.create_task(connection.serve(peer.lines()))
    for n in range(30):
        peer.send({"id": n, "method": "echo", "params": n})
    notifies = [asyncio.create_task(connection.notify("note", {"n": n})) for n in range(10)]
    await asyncio.gather(*notifies)
    await connection.drain()
    peer.end()
    await serving
    lines = "".join(chunks).splitlines()
    messages = [json.loads(line) for line in lines]  # each line is whole JSON
    assert sorted(m["id"] for m in messages if "id" in m) == list(range(30))
    assert sorted(m["params"]["n"] for m in messages if "method" in m) == list(range(10))


async def test_a_reply_that_cannot_be_written_is_dropped_quietly(peer: Peer) -> None:
    async def broken(line: str) -> None:
        raise BrokenPipeError("stdin closed")

    async def handler(method: str, params: Any) -> Any:
        return 1

    connection = JsonRpcConnection(broken, on_notification=peer.notified, on_request=handler)
    serving = asyncio.create_task(connection.serve(peer.lines()))
    peer.send({"id": 1, "method": "m"})
    peer.send({"method": "after"})
    await peer.flush()
    await connection.drain()
    peer.end()
    await serving
    assert serving.exception() is None
    assert peer.notifications == [("after", None)]


async def test_drain_waits_for_in_flight_handlers(peer: Peer) -> None:
    release = asyncio.Event()

    async def handler(method: str, params: Any) -> Any:
        await release.wait()
        return method

    harness = connect(peer, handler)
    peer.send({"id": 1, "method": "first"})
    peer.send({"id": 2, "method": "second"})
    await peer.flush()
    draining = asyncio.create_task(harness.connection.drain())
    await asyncio.sleep(0.05)
    assert not draining.done(), "drain returned while handlers still run"
    assert peer.written == []
    release.set()
    await asyncio.wait_for(draining, 2)
    assert sorted(json.loads(line)["result"] for line in peer.written) == ["first", "second"]
    await harness.stop()


async def test_drain_also_waits_for_handlers_started_while_draining(peer: Peer) -> None:
    gates = [asyncio.Event(), asyncio.Event()]

    async def handler(method: str, params: Any) -> Any:
        await gates[params].wait()
        return params

    harness = connect(peer, handler)
    peer.send({"id": 1, "method": "m", "params": 0})
    await peer.flush()
    draining = asyncio.create_task(harness.connection.drain())
    await asyncio.sleep(0.01)
    peer.send({"id": 2, "method": "m", "params": 1})
    await peer.flush()
    gates[0].set()
    await asyncio.sleep(0.05)
    assert not draining.done()
    gates[1].set()
    await asyncio.wait_for(draining, 2)
    assert len(peer.written) == 2
    await harness.stop()


async def test_drain_returns_at_once_without_handlers(peer: Peer) -> None:
    harness = connect(peer)
    await asyncio.wait_for(harness.connection.drain(), 0.5)
    await harness.stop()


async def test_aclose_cancels_handlers_without_answering(peer: Peer) -> None:
    cancelled = asyncio.Event()

    async def handler(method: str, params: Any) -> Any:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return None

    harness = connect(peer, handler)
    peer.send({"id": 1, "method": "forever"})
    await peer.flush()
    await asyncio.wait_for(harness.connection.aclose(), 2)
    assert cancelled.is_set()
    assert peer.written == []
    await harness.stop()


# -- property: serve() survives anything -------------------------------------

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
_json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_hashable_ids = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
"""Unhashable ids are left out: see test_a_response_with_an_unhashable_id_does_not_stop_serve."""
_message_keys = st.sampled_from(["id", "method", "params", "result", "error", "jsonrpc"])
_messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | _json_values,
        "id": _hashable_ids,
        "method": st.text(max_size=12) | _json_scalars,
        "params": _json_values,
        "result": _json_values,
        "error": _json_values
        | st.fixed_dictionaries(
            {}, optional={"code": _json_scalars, "message": _json_values, "data": _json_values}
        ),
    },
)
_lines = st.one_of(
    st.text(max_size=200),
    _json_values.map(json.dumps),
    _messages.map(json.dumps),
    st.dictionaries(_message_keys, _json_scalars).map(json.dumps),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=st.lists(_lines, max_size=12))
def test_serve_never_raises_on_arbitrary_lines(lines: list[str]) -> None:
    async def run() -> None:
        peer = Peer()

        async def handler(method: str, params: Any) -> Any:
            if method.startswith("e"):
                raise ValueError(method)
            return params

        connection = JsonRpcConnection(
            peer.write, on_notification=peer.notified, on_request=handler
        )
        pending = asyncio.create_task(connection.request("mine", timeout=5))
        await peer.next_written()
        for line in lines:
            peer.send(line)
        peer.send({"id": 1, "result": "sentinel"})
        peer.end()
        await asyncio.wait_for(connection.serve(peer.lines()), 5)
        await asyncio.wait_for(connection.drain(), 5)
        connection.close("done")
        outcome = await asyncio.gather(pending, return_exceptions=True)
        # request 1 was answered: by the sentinel, or by a generated response for id 1.
        assert not isinstance(outcome[0], ConnectionClosedError | TimeoutError)
        for line in peer.written[1:]:
            reply = json.loads(line)
            assert "result" in reply or "error" in reply

    asyncio.run(run())
