"""The connection boundary's transport helpers, on real sockets (no sidecar)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from copilot_driver.driver.connection import (
    SDK_PROTOCOL_LOGGER,
    NotificationGuard,
    ProtocolErrors,
    SidecarNotReadyError,
    is_connected,
    release_transport,
    sidecar_ready,
    transport_socket,
)


def _pair() -> tuple[socket.socket, socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    server.close()
    return client, accepted


def test_transport_socket_finds_the_sdk_socket_or_nothing() -> None:
    client, peer = _pair()
    try:
        assert transport_socket(SimpleNamespace(_process=SimpleNamespace(_socket=client))) is client
        assert transport_socket(SimpleNamespace(_process=None)) is None
        assert transport_socket(SimpleNamespace(_process=SimpleNamespace(_socket="x"))) is None
        assert transport_socket(object()) is None
    finally:
        client.close()
        peer.close()


def test_release_transport_wakes_a_blocked_reader_and_tolerates_repeats() -> None:
    client, peer = _pair()
    holder = SimpleNamespace(_process=SimpleNamespace(_socket=client))
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(client.recv(10)))
    reader.start()
    try:
        release_transport(holder)
        reader.join(5)
        assert not reader.is_alive()
        assert received == [b""]  # the read ended, as at the end of the stream
        assert peer.recv(10) == b""  # and the peer saw the connection close
        release_transport(holder)  # a second release is harmless
        client.close()
        release_transport(holder)  # so is one after the socket was closed
    finally:
        client.close()
        peer.close()


def test_is_connected_reads_the_sdk_state_and_defaults_to_connected() -> None:
    assert is_connected(SimpleNamespace(_state="connected"))
    assert not is_connected(SimpleNamespace(_state="disconnected"))
    assert not is_connected(SimpleNamespace(_state="error"))
    assert is_connected(SimpleNamespace())


def test_the_sdk_reader_s_reason_for_closing_is_kept_without_printing_it() -> None:

    sdk_reader = logging.getLogger(SDK_PROTOCOL_LOGGER)
    logging.getLogger("copilot").setLevel(logging.CRITICAL + 1)  # as a quiet driver sets it
    errors = ProtocolErrors()
    errors.attach()
    try:
        sdk_reader.warning("Notification handler raised")  # not about the stream
        assert errors.last is None
        try:
            json.loads("not json")
        except ValueError:
            sdk_reader.warning("Failed to parse incoming JSON-RPC message", exc_info=True)
    finally:
        errors.detach()
    assert errors.last is not None
    assert errors.last.startswith("sent a message the SDK could not read (JSONDecodeError: ")
    assert sdk_reader.level == logging.NOTSET
    assert errors not in sdk_reader.handlers


# -- the harness's ready pipe --------------------------------------------------------------


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def test_a_line_on_the_ready_pipe_lets_the_driver_connect() -> None:
    read_end, write_end = os.pipe()

    async def main() -> None:
        waiting = asyncio.ensure_future(sidecar_ready(read_end, "127.0.0.1:1"))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # nothing said yet: it waits
        os.write(write_end, b"ready\n")
        await asyncio.wait_for(waiting, 5)

    asyncio.run(main())
    os.close(write_end)
    assert _closed(read_end)


def test_end_of_file_on_the_ready_pipe_fails_at_once() -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)  # the harness's sidecar did not start

    with pytest.raises(SidecarNotReadyError, match="did not start") as caught:
        asyncio.run(asyncio.wait_for(sidecar_ready(read_end, "127.0.0.1:1"), 5))
    assert caught.value.failure_kind == "sidecar_unreachable"
    assert _closed(read_end)


# -- NotificationGuard ---------------------------------------------------------


class _Calls:
    def __init__(self) -> None:
        self.first: list[str] = []
        self.broken: list[tuple[int, str]] = []

    def guard(self, **options: int) -> NotificationGuard:
        return NotificationGuard(
            self.first.append, lambda count, first: self.broken.append((count, first)), **options
        )


def test_the_first_unreadable_notification_is_reported_once_and_the_limit_once() -> None:
    calls = _Calls()
    guard = calls.guard(limit=3)
    for number in range(10):
        guard.count_unreadable(f"session.event: KeyError: {number}")
    assert calls.first == ["session.event: KeyError: 0"]
    assert calls.broken == [(3, "session.event: KeyError: 0")]
    assert guard.unreadable == 10


def test_a_long_detail_is_cut_short() -> None:
    calls = _Calls()
    calls.guard().count_unreadable("x" * 10_000)
    assert calls.first == ["x" * 200 + "..."]


class _Rpc:
    """The part of the SDK's JsonRpcClient the guard wraps."""

    def __init__(self, handler: Any) -> None:
        self.notification_handler = handler
        self._running = True
        self.taken: list[dict[str, Any]] = []

    def set_notification_handler(self, handler: Any) -> None:
        self.notification_handler = handler

    def _handle_message(self, message: dict[str, Any]) -> None:
        self.taken.append(message)


def test_a_handler_that_raises_is_counted_not_raised() -> None:
    def sdk_handler(method: str, params: dict[str, Any]) -> None:
        params["sessionId"]

    calls = _Calls()
    guard = calls.guard()
    rpc = _Rpc(sdk_handler)
    loop = asyncio.new_event_loop()
    try:
        guard.install(rpc, loop)
        rpc.notification_handler("session.event", {})
        rpc.notification_handler("session.event", {"sessionId": "s"})
        rpc._handle_message({"method": "x"})
    finally:
        loop.close()
    assert guard.unreadable == 1
    assert calls.first == ["session.event: KeyError: 'sessionId'"]
    assert rpc.taken == [{"method": "x"}]


READER_TEST_BACKLOG = 32
READER_TEST_MESSAGES = 600


def _reader_lead(*, guarded: bool) -> int:
    """How far the SDK's own reader thread ran ahead of the event loop (messages
    read but not yet handled), fed notifications over a real socket while the
    loop takes a millisecond for each."""
    from copilot._jsonrpc import JsonRpcClient

    feeder, reading = _pair()
    read = 0
    handled = 0
    lead: list[int] = []
    done = threading.Event()

    def slow_handler(method: str, params: dict[str, Any]) -> None:
        nonlocal handled
        lead.append(read - handled)
        handled += 1
        time.sleep(0.001)  # the loop's cost per message, well above the reader's
        if handled == READER_TEST_MESSAGES:
            done.set()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        transport = SimpleNamespace(stdin=None, stdout=reading.makefile("rb"), stderr=None)
        rpc = JsonRpcClient(transport)  # type: ignore[no-untyped-call]
        rpc.set_notification_handler(slow_handler)
        take = rpc._handle_message

        def counting(message: dict[str, Any]) -> None:
            nonlocal read
            read += 1
            take(message)

        rpc._handle_message = counting  # type: ignore[method-assign]
        if guarded:
            guard = NotificationGuard(lambda _: None, lambda *_: None, backlog=READER_TEST_BACKLOG)
            guard.install(rpc, loop)
        rpc.start(loop)
        body = json.dumps({"jsonrpc": "2.0", "method": "session.lifecycle", "params": {}})
        message = f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
        await asyncio.to_thread(feeder.sendall, message * READER_TEST_MESSAGES)
        await asyncio.to_thread(done.wait, 30)
        rpc._running = False
        feeder.close()

    try:
        asyncio.run(main())
    finally:
        reading.close()
    assert handled == READER_TEST_MESSAGES
    return max(lead)


def test_the_real_sdk_reader_waits_for_a_slow_loop_every_backlog_messages() -> None:
    """Unguarded, the reader runs hundreds of messages ahead (each one a queued
    callback, without bound); guarded, never more than a backlog."""
    assert _reader_lead(guarded=False) > 4 * READER_TEST_BACKLOG
    assert _reader_lead(guarded=True) <= READER_TEST_BACKLOG + 1
