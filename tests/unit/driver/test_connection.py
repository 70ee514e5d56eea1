"""The connection boundary's transport helpers, on real sockets (no sidecar)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
from types import SimpleNamespace

import pytest

from copilot_driver.driver.connection import (
    SDK_PROTOCOL_LOGGER,
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
