"""The SDK boundary: the SDK's failures mapped to the driver's own, by type first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from copilot._jsonrpc import JsonRpcError, ProcessExitedError

from copilot_driver.driver.failures import (
    SessionFailedError,
    SidecarAuthError,
    SidecarDisconnectedError,
    SidecarRefusedError,
    as_raised,
)
from copilot_driver.driver.sdk import SdkSession, sdk_failure


def _raised_while_refused() -> RuntimeError:
    """The SDK's `_connect_via_tcp`: the socket's error becomes a RuntimeError."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as error:
            raise RuntimeError(f"Failed to connect to CLI server at h:1: {error}")  # noqa: B904
    except RuntimeError as failure:
        return failure


def test_a_refused_socket_under_the_sdks_error_is_recognised_by_type() -> None:
    error = _raised_while_refused()
    mapped = sdk_failure(error)
    assert isinstance(mapped, SidecarRefusedError)
    assert as_raised(mapped) is error
    assert str(mapped) == str(error)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (JsonRpcError(-32002, "Authentication failed"), SidecarAuthError),
        (ProcessExitedError("CLI exited"), SidecarDisconnectedError),
        (RuntimeError("Session closed before response completed"), SidecarDisconnectedError),
        (Exception("Session error: boom"), SessionFailedError),
    ],
)
def test_sdk_failures_become_the_drivers_own(error: Exception, kind: type[Exception]) -> None:
    assert isinstance(sdk_failure(error), kind)


def test_an_unrecognised_failure_passes_as_it_came() -> None:
    error = JsonRpcError(-32601, "Method not found")
    assert sdk_failure(error) is error


def test_a_session_error_from_send_is_raised_mapped_with_the_sdks_error_as_cause() -> None:
    class Session:
        session_id = "s"

        async def send_and_wait(self, prompt: str, *, timeout: float) -> Any:
            raise Exception("Session error: Execution failed: boom")

    with pytest.raises(SessionFailedError) as raised:
        asyncio.run(SdkSession(Session()).send_and_wait("hi", timeout=1))  # type: ignore[arg-type]
    assert raised.value.reason == "Execution failed: boom"
    assert raised.value.__cause__ is raised.value.sdk_error
