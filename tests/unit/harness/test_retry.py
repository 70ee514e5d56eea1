"""Which failed tries the harness runs again (`harness.retry`), on the runtime's real words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.retry import FailedTry, RetryPolicy, next_delay, transient_cause

# What the Copilot CLI 1.0.102 ended turns with after its own retries (measured).
HTTP_500 = (
    "the session failed: Failed to get response from the AI model; retried 5 times (total "
    "retry wait time: 13.71 seconds) Last error: 500 Scripted HTTP 500: Internal Server Error"
)
RESET = (
    "the session failed: Failed to get response from the AI model; retried 5 times (total "
    "retry wait time: 5.00 seconds) Last error: Failed native model HTTP request: error "
    "decoding response body: error reading a body from connection: Connection reset by peer "
    "(os error 104) [ECONNRESET]"
)


def failed(message: str | None = HTTP_500, **overrides: object) -> FailedTry:
    fields: dict[str, object] = {
        "exit_code": 1,
        "error_kind": "session_error",
        "message": message,
        "status_code": 500,
        "error_type": "query",
    }
    fields.update(overrides)
    return FailedTry(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("attempt", "cause"),
    [
        (failed(), "the model provider answered HTTP 500"),
        (failed(status_code=503), "the model provider answered HTTP 503"),
        (failed(status_code=429, error_type="rate_limit"), "the model provider is rate limiting"),
        (failed(status_code=None, error_type="rate_limit"), "the model provider is rate limiting"),
        (failed(RESET, status_code=None), "the connection to the model provider failed"),
    ],
)
def test_transient_failures_are_named(attempt: FailedTry, cause: str) -> None:
    assert transient_cause(attempt) == cause


@pytest.mark.parametrize(
    "attempt",
    [
        failed(started_tools=True),  # a tool may have changed something
        failed(printed_answer=True),
        failed("the session failed: ... Last error: 400 Bad Request", status_code=400),
        failed("the session failed: No GitHub OAuth token", status_code=None),
        failed(exit_code=3, error_kind="tool_denials_exceeded"),
        failed(exit_code=2, error_kind=None),
        failed(exit_code=1, error_kind="send_timeout"),
        failed(exit_code=143, error_kind="interrupted"),
    ],
)
def test_anything_else_is_never_retried(attempt: FailedTry) -> None:
    assert transient_cause(attempt) is None
    assert next_delay(RetryPolicy(), attempt, 1, None) is None


def test_delays_double_from_the_first_and_are_capped() -> None:
    policy = RetryPolicy(tries=6, first_delay_s=5, max_delay_s=30)
    assert [policy.delay_before(n) for n in range(2, 7)] == [5, 10, 20, 30, 30]


def test_tries_are_bounded_in_count_and_by_the_deadline() -> None:
    policy = RetryPolicy(tries=3)
    assert next_delay(policy, failed(), 1, None) == (5.0, "the model provider answered HTTP 500")
    assert next_delay(policy, failed(), 2, None) == (10.0, "the model provider answered HTTP 500")
    assert next_delay(policy, failed(), 3, None) is None  # three tries in all
    assert next_delay(policy, failed(), 1, 4.0) is None  # the wait would end past the deadline
    assert next_delay(RetryPolicy(tries=1), failed(), 1, None) is None


@given(
    st.integers(min_value=-5, max_value=300),
    st.one_of(st.none(), st.text(max_size=40)),
    st.one_of(st.none(), st.integers(min_value=0, max_value=999)),
    st.booleans(),
    st.booleans(),
)
def test_a_try_with_side_effects_or_success_is_never_repeated(
    code: int, kind: str | None, status: int | None, tools: bool, answer: bool
) -> None:
    attempt = FailedTry(code, kind, HTTP_500, status, "rate_limit", tools, answer)
    decision = next_delay(RetryPolicy(tries=10), attempt, 1, None)
    if tools or answer or code != 1:
        assert decision is None
