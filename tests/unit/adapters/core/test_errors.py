"""Unit tests for `copilot_driver.adapters.core.errors`: kinds, retry hints, text forms."""

from __future__ import annotations

import pytest

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.vocabulary import AdapterErrorKind

RETRYABLE = {
    AdapterErrorKind.INVALID_WORKSPACE_CWD: False,
    AdapterErrorKind.AGENT_NOT_FOUND: False,
    AdapterErrorKind.PORT_EXIT: True,
    AdapterErrorKind.RESPONSE_ERROR: False,
    AdapterErrorKind.RESPONSE_TIMEOUT: True,
    AdapterErrorKind.TURN_TIMEOUT: True,
    AdapterErrorKind.TURN_FAILED: True,
    AdapterErrorKind.TURN_CANCELLED: False,
    AdapterErrorKind.TURN_INPUT_REQUIRED: False,
}


def test_every_kind_has_an_expected_retry_default() -> None:
    assert set(RETRYABLE) == set(AdapterErrorKind)


@pytest.mark.parametrize(("kind", "retryable"), RETRYABLE.items(), ids=lambda v: str(v))
def test_retryable_default_per_kind(kind: AdapterErrorKind, retryable: bool) -> None:
    assert AgentError(kind, "x").retryable is retryable


@pytest.mark.parametrize("kind", list(AdapterErrorKind), ids=str)
@pytest.mark.parametrize("override", [True, False])
def test_retryable_override(kind: AdapterErrorKind, override: bool) -> None:
    assert AgentError(kind, "x", retryable=override).retryable is override


def test_text_forms() -> None:
    error = AgentError(AdapterErrorKind.AGENT_NOT_FOUND, "copilot not found on PATH")
    assert str(error) == "agent_not_found: copilot not found on PATH"
    assert error.message == "copilot not found on PATH"
    assert error.args == ("copilot not found on PATH",)
    assert repr(error) == (
        "AgentError('agent_not_found', 'copilot not found on PATH', retryable=False)"
    )


def test_to_dict() -> None:
    error = AgentError(AdapterErrorKind.TURN_FAILED, "boom", retryable=False)
    assert error.to_dict() == {"kind": "turn_failed", "message": "boom", "retryable": False}


def test_kind_values_are_the_specs_names() -> None:
    assert [k.value for k in AdapterErrorKind] == [
        "invalid_workspace_cwd",
        "agent_not_found",
        "port_exit",
        "response_error",
        "response_timeout",
        "turn_timeout",
        "turn_failed",
        "turn_cancelled",
        "turn_input_required",
    ]
