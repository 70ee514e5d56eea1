"""The SDK transport adaptations (connection.py) still apply.

They target github-copilot-sdk 1.0.27. If the SDK changes its TCP transport,
these tests fail, and the adaptations are re-checked or removed instead of
silently doing nothing (see docs/sdk-defects.md).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import socket
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.compatibility import TESTED_SDK_VERSIONS
from copilot_driver.driver.config import load_config
from copilot_driver.driver.connection import (
    NotificationGuard,
    create_client,
    release_transport,
    transport_socket,
)
from copilot_driver.testing.fixtures import DriverRunner

pytestmark = pytest.mark.e2e


def test_the_installed_sdk_is_a_release_the_adaptations_were_tested_on() -> None:
    assert importlib.metadata.version("github-copilot-sdk") in TESTED_SDK_VERSIONS


@pytest.fixture
async def connected(driver: DriverRunner, tmp_path: Path) -> Any:
    env = driver.environment("say hello")
    client = create_client(load_config(env, cwd=tmp_path))
    await client.start()
    try:
        yield client
    finally:
        await asyncio.wait_for(client.stop(), 10)


async def test_the_sdk_socket_has_tcp_nodelay(connected: Any) -> None:
    sock = transport_socket(connected)
    assert sock is not None, "the SDK no longer keeps its socket at client._process._socket"
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


async def test_releasing_the_transport_ends_the_reader_before_stop(connected: Any) -> None:
    reader = getattr(getattr(connected, "_client", None), "_read_thread", None)
    assert reader is not None, "the SDK no longer reads on client._client._read_thread"
    assert reader.is_alive()

    release_transport(connected)

    # stop() joins this thread (1 s timeout) before closing the socket; once
    # the socket is shut down the thread ends by itself, so stop() waits no more.
    await asyncio.to_thread(reader.join, 5)
    assert not reader.is_alive()


async def test_the_notification_guard_wraps_the_sdk_reader(
    driver: DriverRunner, tmp_path: Path
) -> None:
    guard = NotificationGuard(lambda _: None, lambda *_: None)
    client = create_client(load_config(driver.environment("say hello"), cwd=tmp_path), guard)
    await client.start()
    try:
        assert guard.installed, "the SDK's JsonRpcClient changed: see NotificationGuard.install"
        rpc: Any = client._client
        rpc.notification_handler("session.event", {})  # no sessionId: the SDK raises KeyError
        assert guard.unreadable == 1
    finally:
        await asyncio.wait_for(client.stop(), 10)
