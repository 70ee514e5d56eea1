"""describe_failure: one actionable sentence per SDK failure, as the SDK boundary
(sdk.py) hands the failure over."""

from __future__ import annotations

from typing import Any

import pytest
from copilot._jsonrpc import JsonRpcError, ProcessExitedError

from copilot_driver.driver.failures import (
    AUTHENTICATION_FAILED,
    AUTHENTICATION_NOT_CONFIGURED,
    AUTHENTICATION_REQUIRED,
    Failure,
    Phase,
)
from copilot_driver.driver.failures import describe_failure as describe_mapped
from copilot_driver.driver.sdk import sdk_failure

URI = "127.0.0.1:4321"
REFUSED = "Failed to connect to CLI server at h:1: [Errno 111] Connection refused"


def describe_failure(error: BaseException, **where: Any) -> Failure:
    """What the SDK raised, mapped at the boundary, then described."""
    return describe_mapped(sdk_failure(error), **where)


def test_auth_codes_are_the_cli_handshake_codes() -> None:
    assert AUTHENTICATION_REQUIRED == -32001
    assert AUTHENTICATION_FAILED == -32002
    assert AUTHENTICATION_NOT_CONFIGURED == -32003


@pytest.mark.parametrize("phase", [Phase.CONNECT, Phase.SESSION_CREATION, Phase.TURN])
def test_code_32002_is_auth_failed(phase: Phase) -> None:
    failure = describe_failure(JsonRpcError(-32002, "rpc failure"), phase=phase, sdk_uri=URI)
    assert failure.kind == "auth_failed"
    assert URI in failure.message
    assert "COPILOT_CONNECTION_TOKEN" in failure.message


def test_code_32003_is_auth_not_configured() -> None:
    failure = describe_failure(
        JsonRpcError(-32003, "rpc failure"), phase=Phase.CONNECT, sdk_uri=URI
    )
    assert failure.kind == "auth_not_configured"
    assert URI in failure.message


def test_real_json_rpc_error_auth_failed() -> None:
    error = JsonRpcError(-32002, "Authentication failed")
    failure = describe_failure(error, phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "auth_failed"
    assert "rejected the connection token" in failure.message


def test_real_json_rpc_error_auth_not_configured() -> None:
    error = JsonRpcError(-32003, "Authentication not configured")
    failure = describe_failure(error, phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "auth_not_configured"
    assert "without a connection token" in failure.message


def test_real_json_rpc_error_auth_required() -> None:
    failure = describe_failure(JsonRpcError(-32001, "required"), phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "auth_required"


def test_other_json_rpc_codes_are_not_auth_failures() -> None:
    failure = describe_failure(
        JsonRpcError(-32601, "Method not found"), phase=Phase.TURN, sdk_uri=URI
    )
    assert failure.kind == "unexpected"
    assert "JsonRpcError" in failure.message
    assert "Method not found" in failure.message


def test_connection_refused_while_connecting_is_sidecar_unreachable() -> None:
    failure = describe_failure(RuntimeError(REFUSED), phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "sidecar_unreachable"
    assert URI in failure.message
    assert "connection refused" in failure.message
    assert REFUSED in failure.message, "the SDK's own text is kept for searching"


def test_connection_refused_oserror_is_sidecar_unreachable() -> None:
    error = ConnectionRefusedError(111, "Connection refused")
    failure = describe_failure(error, phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "sidecar_unreachable"
    assert URI in failure.message


def test_timeout_while_connecting_is_sidecar_unresponsive() -> None:
    failure = describe_failure(TimeoutError(), phase=Phase.CONNECT, sdk_uri=URI)
    assert failure.kind == "sidecar_unresponsive"
    assert URI in failure.message


def test_other_connect_errors_are_sidecar_unreachable_with_the_uri() -> None:
    failure = describe_failure(
        OSError("Name or service not known"), phase=Phase.CONNECT, sdk_uri="nohost:1"
    )
    assert failure.kind == "sidecar_unreachable"
    assert "nohost:1" in failure.message
    assert "Name or service not known" in failure.message


def test_session_error_keeps_the_runtime_reason() -> None:
    error = Exception("Session error: Execution failed: boom")
    failure = describe_failure(error, phase=Phase.TURN, sdk_uri=URI)
    assert failure.kind == "session_error"
    assert "boom" in failure.message
    assert "Session error:" not in failure.message


def test_closed_before_response_is_sidecar_lost() -> None:
    error = RuntimeError("Session closed before response completed")
    failure = describe_failure(error, phase=Phase.TURN, sdk_uri=URI)
    assert failure.kind == "sidecar_lost"
    assert URI in failure.message
    assert "the turn" in failure.message


def test_process_exited_is_sidecar_lost() -> None:
    failure = describe_failure(
        ProcessExitedError("CLI exited"), phase=Phase.SESSION_CREATION, sdk_uri=URI
    )
    assert failure.kind == "sidecar_lost"


def test_a_client_the_sdk_disconnected_is_sidecar_lost() -> None:
    """The SDK's own words when its connection closed before the request was sent."""
    error = RuntimeError("Client not connected")
    failure = describe_failure(error, phase=Phase.SESSION_CREATION, sdk_uri=URI)
    assert failure.kind == "sidecar_lost"
    assert "session creation" in failure.message


def test_any_sdk_error_on_a_closed_connection_is_sidecar_lost() -> None:
    error = ValueError("Invalid JSON-RPC response")
    assert describe_failure(error, phase=Phase.TURN, sdk_uri=URI).kind == "unexpected"
    failure = describe_failure(error, phase=Phase.TURN, sdk_uri=URI, connected=False)
    assert failure.kind == "sidecar_lost"
    assert "Invalid JSON-RPC response" in failure.message  # the SDK's text is kept


def test_a_session_error_stays_one_when_the_connection_closed_after_it() -> None:
    error = Exception("Session error: Execution failed: boom")
    failure = describe_failure(error, phase=Phase.TURN, sdk_uri=URI, connected=False)
    assert failure.kind == "session_error"


def test_timeout_after_connecting_is_sidecar_unresponsive() -> None:
    failure = describe_failure(TimeoutError("late"), phase=Phase.SESSION_CREATION, sdk_uri=URI)
    assert failure.kind == "sidecar_unresponsive"
    assert "session creation" in failure.message


def test_anything_else_is_unexpected_with_the_type_name() -> None:
    failure = describe_failure(KeyError("missing"), phase=Phase.TURN, sdk_uri=URI)
    assert failure.kind == "unexpected"
    assert "KeyError" in failure.message
    assert "missing" in failure.message
    assert "the turn" in failure.message


def test_unexpected_error_without_text_names_its_type() -> None:
    failure = describe_failure(ValueError(), phase=Phase.TURN, sdk_uri=URI)
    assert failure.kind == "unexpected"
    assert "ValueError" in failure.message


def test_multi_line_sdk_text_becomes_one_line() -> None:
    error = RuntimeError("first line\n  second line\tthird")
    failure = describe_failure(error, phase=Phase.TURN, sdk_uri=URI)
    assert "\n" not in failure.message
    assert "first line second line third" in failure.message
