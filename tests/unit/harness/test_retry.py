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


@pytest.mark.parametrize(
    ("kind", "retried"),
    [
        ("rate_limited", True),
        ("copilot_api_error", True),
        ("quota_exceeded", False),
        ("token_refused", False),
        ("no_copilot_access", False),
        ("model_unavailable", False),
        ("github_unreachable", False),
        ("not_signed_in", False),
    ],
)
def test_on_a_github_token_only_a_rate_limit_or_a_failing_api_is_tried_again(
    kind: str, retried: bool
) -> None:
    failed = FailedTry(1, kind, "it failed")

    assert (transient_cause(failed) is not None) == retried
    assert transient_cause(FailedTry(1, kind, "it failed", started_tools=True)) is None


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        ("rate_limited", "Copilot is rate limiting the account"),
        ("copilot_api_error", "the Copilot API failed"),
    ],
)
def test_an_account_failure_worth_retrying_is_waited_for_and_named(kind: str, cause: str) -> None:
    attempt = FailedTry(1, kind, "it failed", status_code=None, error_type=None)

    assert next_delay(RetryPolicy(), attempt, 1, None) == (5.0, cause)
    assert next_delay(RetryPolicy(), attempt, 3, None) is None
    assert next_delay(RetryPolicy(), attempt, 1, 5.0) is None


@pytest.mark.parametrize("kind", ["rate_limited", "copilot_api_error"])
@pytest.mark.parametrize(
    "overrides",
    [
        {"printed_answer": True},
        {"started_tools": True},
        {"exit_code": 2},
        {"exit_code": 3},
        {"exit_code": 124},
    ],
)
def test_an_account_failure_is_not_retried_after_side_effects_or_with_another_exit(
    kind: str, overrides: dict[str, object]
) -> None:
    assert transient_cause(failed(HTTP_500, error_kind=kind, **overrides)) is None


NEVER_RETRIED = ("quota_exceeded", "token_refused", "no_copilot_access", "model_unavailable")


@given(
    st.sampled_from([*NEVER_RETRIED, "github_unreachable", "not_signed_in"]),
    st.one_of(st.none(), st.sampled_from([429, 500, 502, 503])),
    st.one_of(st.none(), st.sampled_from(["rate_limit", "quota", "query"])),
    st.sampled_from([HTTP_500, RESET, "Last error: 429 Too Many Requests", None]),
)
def test_an_account_failure_that_another_try_cannot_mend_is_never_retried(
    kind: str, status: int | None, error_type: str | None, message: str | None
) -> None:
    """Whatever HTTP status or transient-looking words came with it."""
    attempt = FailedTry(1, kind, message, status, error_type)

    assert transient_cause(attempt) is None
    assert next_delay(RetryPolicy(tries=10), attempt, 1, None) is None


@given(
    st.one_of(st.none(), st.integers(100, 599)),
    st.one_of(st.none(), st.sampled_from(["rate_limit", "quota", "query"])),
    st.one_of(st.none(), st.text(max_size=30)),
)
def test_a_rate_limit_on_the_account_is_retried_whatever_came_with_it(
    status: int | None, error_type: str | None, message: str | None
) -> None:
    attempt = FailedTry(1, "rate_limited", message, status, error_type)

    assert transient_cause(attempt) == "Copilot is rate limiting the account"
    assert next_delay(RetryPolicy(), attempt, 1, None) == (
        5.0,
        "Copilot is rate limiting the account",
    )
    assert next_delay(RetryPolicy(), attempt, 2, None) == (
        10.0,
        "Copilot is rate limiting the account",
    )
