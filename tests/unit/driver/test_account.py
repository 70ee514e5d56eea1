"""The subscription path's account decisions: the sign-in, the catalog, a failed turn."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.driver.account import (
    Account,
    AccountError,
    CatalogModel,
    Quota,
    check_model,
    read_sign_in,
)
from copilot_driver.driver.account_failures import TurnError, catalog_failure, turn_failure
from copilot_driver.exit_codes import ExitCode
from copilot_driver.vocabulary import DriverErrorKind

SECRET = "gho_canarySignInToken0000000000000000"
USER = {
    "login": "octocat",
    "copilot_plan": "individual",
    "chat_enabled": True,
    "endpoints": {"api": "https://api.individual.githubcopilot.com"},
    "quota_snapshots": {
        "chat": {"entitlement": 50, "remaining": 12, "unlimited": False},
        "premium_interactions": {"entitlement": 50, "remaining": 0, "unlimited": False},
    },
    "quota_reset_date": "2026-12-01",
}
SIGNED_IN = {"authInfo": {"type": "token", "host": "https://github.com", "copilotUser": USER}}
CATALOG = (
    CatalogModel("auto"),
    CatalogModel("gpt-5-mini", 0.0),
    CatalogModel("gpt-5.2", 1.0),
)


def failure_of(raw: Any) -> Any:
    with pytest.raises(AccountError) as raised:
        read_sign_in(raw)
    return raised.value.failure


def test_a_sign_in_is_read_as_the_account() -> None:
    account = read_sign_in(SIGNED_IN)

    assert account.host == "https://github.com"
    assert account.login == "octocat"
    assert account.plan == "individual"
    assert account.api_url == "https://api.individual.githubcopilot.com"
    assert account.premium == Quota("premium requests", 50.0, 0.0, False, False)
    assert account.quotas() == (
        "premium requests: 0 of 50 left; chat: 12 of 50 left, reset on 2026-12-01"
    )
    assert account.log_fields()["premiumRemaining"] == 0.0


@pytest.mark.parametrize(
    ("raw", "kind", "exit_code", "says"),
    [
        ({}, "not_signed_in", 2, "No GitHub OAuth token"),
        (
            {
                "authErrors": [
                    "Failed to validate SDK token (401): GitHub returned: Bad credentials"
                ]
            },
            "token_refused",
            2,
            "Authentication failed: GitHub refused the sidecar's token (Failed to validate",
        ),
        (
            {"authErrors": ["Failed to validate SDK token (403): GitHub returned: Resource no"]},
            "no_copilot_access",
            2,
            'needs the "Copilot Requests" permission',
        ),
        (
            {
                "authErrors": [
                    "Failed to validate SDK token: network fetch failed: request failed: error "
                    "sending request for url (http://127.0.0.1:18080/copilot_internal/user)"
                ]
            },
            "github_unreachable",
            1,
            "could not reach GitHub at 127.0.0.1:18080 ",
        ),
        (
            {
                "authErrors": [
                    "network fetch failed (https://api.acme.ghe.com/copilot_internal/user)"
                ]
            },
            "github_unreachable",
            1,
            "could not reach GitHub at api.acme.ghe.com ",
        ),
        (
            {
                "authInfo": {
                    "host": "https://github.com",
                    "copilotUser": {**USER, "chat_enabled": False},
                }
            },
            "no_copilot_access",
            2,
            "octocat has no Copilot access (GitHub says chat_enabled: false)",
        ),
    ],
)
def test_a_sign_in_that_cannot_serve_the_run_is_one_failure(
    raw: Any, kind: str, exit_code: int, says: str
) -> None:
    failure = failure_of(raw)

    assert failure.kind == kind
    assert failure.exit_code == exit_code
    assert says in failure.message


def test_the_sign_ins_secret_fields_are_never_read() -> None:
    raw = {"authInfo": {**SIGNED_IN["authInfo"], "token": SECRET}}
    account = read_sign_in(raw)
    refused = failure_of({"authInfo": {**raw["authInfo"], "copilotUser": {"chat_enabled": False}}})

    assert SECRET not in repr(account)
    assert SECRET not in json.dumps(account.log_fields())
    assert SECRET not in refused.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries({"authInfo": json_values}),
        st.fixed_dictionaries({"authInfo": st.fixed_dictionaries({"copilotUser": json_values})}),
        st.fixed_dictionaries({"authErrors": json_values}),
    )
)
def test_any_answer_is_an_account_or_an_account_error(raw: Any) -> None:
    try:
        account: Account | str = read_sign_in(raw)
    except AccountError as error:
        account = error.failure.message
    if isinstance(account, Account):
        account.quotas()
        assert set(account.log_fields()) >= {"login", "plan"}
    else:
        assert account  # every refusal says why


def test_auto_and_any_model_in_the_catalog_pass() -> None:
    account = read_sign_in(SIGNED_IN)
    for model in ("auto", "gpt-5-mini"):
        check_model(model, CATALOG, account)
    check_model("auto", (), account)


def test_a_model_not_in_the_catalog_names_those_that_are() -> None:
    with pytest.raises(AccountError) as raised:
        check_model("gpt-4.1", CATALOG, read_sign_in(SIGNED_IN))
    failure = raised.value.failure

    assert failure.kind == DriverErrorKind.MODEL_UNAVAILABLE
    assert failure.exit_code == ExitCode.CONFIG
    assert "COPILOT_MODEL=gpt-4.1: The requested model is not supported" in failure.message
    assert "it offers: auto, gpt-5-mini, gpt-5.2." in failure.message


def test_a_premium_model_without_premium_requests_is_refused_naming_the_included() -> None:
    with pytest.raises(AccountError) as raised:
        check_model("gpt-5.2", CATALOG, read_sign_in(SIGNED_IN))
    failure = raised.value.failure

    assert failure.kind == DriverErrorKind.QUOTA_EXCEEDED
    assert failure.exit_code == ExitCode.FAILURE
    assert "premium requests: 0 of 50 left" in failure.message
    assert "reset on 2026-12-01" in failure.message
    assert "(gpt-5-mini)" in failure.message


@pytest.mark.parametrize(
    "quota", [{"unlimited": True}, {"overage_permitted": True}, {"remaining": 3}]
)
def test_unlimited_overage_or_left_premium_requests_pass(quota: dict[str, Any]) -> None:
    premium = {"entitlement": 50, "remaining": 0, **quota}
    user = {**USER, "quota_snapshots": {"premium_interactions": premium}}
    account = read_sign_in({"authInfo": {"copilotUser": user}})

    check_model("gpt-5.2", CATALOG, account)


MODELS_FAILED = (
    "JSON-RPC Error -32603: Request models.list failed with message: GenericFailure, "
    '{"kind":"http","status":%d,"statusText":"%s","body":"{\\"error\\": {\\"message\\": '
    '\\"boom\\"}}","hasRequestId":true,"headers":[{"name":"x-secret-header","value":"v"}]}'
)


@pytest.mark.parametrize(
    ("status", "reason", "kind", "exit_code"),
    [
        (500, "Internal Server Error", "copilot_api_error", 1),
        (503, "Service Unavailable", "copilot_api_error", 1),
        (401, "Unauthorized", "token_refused", 2),
        (403, "Forbidden", "no_copilot_access", 2),
    ],
)
def test_a_catalog_that_cannot_be_read_says_which_api_answered_what(
    status: int, reason: str, kind: str, exit_code: int
) -> None:
    failure = catalog_failure(MODELS_FAILED % (status, reason), read_sign_in(SIGNED_IN))

    assert failure.kind == kind
    assert failure.exit_code == exit_code
    assert (
        f"https://api.individual.githubcopilot.com answered HTTP {status}" in failure.message
        or (f"(HTTP {status}: {reason} (boom))" in failure.message)
    )
    assert "x-secret-header" not in failure.message


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_catalog_failure_text_is_described(said: str) -> None:
    failure = catalog_failure(said, Account())
    assert failure.message


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (
            {"errorType": "rate_limit", "statusCode": 429, "errorCode": "rate_limited"},
            "rate_limited",
        ),
        ({"statusCode": 429}, "rate_limited"),
        ({"errorType": "quota", "statusCode": 402}, "quota_exceeded"),
        ({"errorCode": "quota_exceeded"}, "quota_exceeded"),
        ({"statusCode": 401}, "token_refused"),
        ({"statusCode": 403}, "no_copilot_access"),
        ({"statusCode": 500}, None),
        ({"errorType": "query"}, None),
        ({"statusCode": True, "errorType": 7}, None),
        ({"statusCode": "429"}, None),
    ],
)
def test_a_failed_turn_is_read_for_what_it_says_about_the_account(
    data: dict[str, Any], kind: str | None
) -> None:
    failure = turn_failure(TurnError.from_event_data(data), "the CLI's words", None)

    assert (failure.kind if failure else None) == kind
    if failure is not None:
        assert "the CLI's words" in failure.message


def test_a_rate_limit_or_a_quota_names_the_accounts_quotas() -> None:
    account = read_sign_in(SIGNED_IN)
    limited = turn_failure(TurnError("rate_limit", 429, "rate_limited"), "wait", account)
    gone = turn_failure(TurnError("quota", 402, "quota_exceeded"), "none left", account)

    assert limited is not None
    assert "(HTTP 429, rate_limited)" in limited.message
    assert "at the run's start: premium requests: 0 of 50 left" in limited.message
    assert gone is not None
    assert "reset on 2026-12-01" in gone.message


# -- more of the sign-in ----------------------------------------------------------------------


@pytest.mark.parametrize("raw", [None, [], "signed in", 7, {"authInfo": None}, {"authErrors": []}])
def test_an_answer_without_a_sign_in_or_an_error_is_no_sign_in(raw: Any) -> None:
    failure = failure_of(raw)

    assert failure.kind == DriverErrorKind.NOT_SIGNED_IN
    assert failure.exit_code == ExitCode.CONFIG
    assert "No GitHub OAuth token" in failure.message
    assert "COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN" in failure.message


def test_errors_that_are_not_text_are_ignored_and_the_rest_are_quoted_together() -> None:
    failure = failure_of(
        {"authErrors": [7, None, "Failed to validate SDK token (401): one", "and two"]}
    )

    assert failure.kind == DriverErrorKind.TOKEN_REFUSED
    assert "(Failed to validate SDK token (401): one; and two)" in failure.message


@pytest.mark.parametrize(
    ("said", "where"),
    [
        ("connection refused (http://10.0.0.7:3128/user)", "10.0.0.7:3128"),
        ("request timed out: https://api.github.com/copilot_internal/user", "api.github.com"),
        ("network fetch failed", "its API host"),
        ("error sending request for url (https://host:notaport/x)", "its API host"),
    ],
)
def test_github_out_of_reach_names_the_host_it_tried_or_says_it_does_not_know(
    said: str, where: str
) -> None:
    failure = failure_of({"authErrors": [said]})

    assert failure.kind == DriverErrorKind.GITHUB_UNREACHABLE
    assert failure.exit_code == ExitCode.FAILURE
    assert f"could not reach GitHub at {where} to check its token ({said})" in failure.message
    for fix in ("HTTPS_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "--allow-domain"):
        assert fix in failure.message


def test_an_unreachable_ipv6_host_is_named_in_brackets() -> None:
    failure = failure_of(
        {
            "authErrors": [
                "network fetch failed: error sending request for url (http://[::1]:18080/u)"
            ]
        }
    )
    assert "could not reach GitHub at [::1]:18080 " in failure.message


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_github_failing_at_sign_in_is_not_a_refused_token(status: int) -> None:
    failure = failure_of(
        {"authErrors": [f"Failed to validate SDK token ({status}): GitHub returned: oops"]}
    )

    assert failure.kind != DriverErrorKind.TOKEN_REFUSED
    assert failure.exit_code == ExitCode.FAILURE


def test_a_sign_in_without_quotas_or_endpoints_is_still_an_account() -> None:
    account = read_sign_in({"authInfo": {"host": "https://acme.ghe.com", "copilotUser": {}}})

    assert account == Account(host="https://acme.ghe.com")
    assert account.quotas() == ""
    assert account.log_fields() == {
        "githubHost": "https://acme.ghe.com",
        "login": None,
        "plan": None,
        "premiumRemaining": None,
        "quotaResetDate": None,
    }


@pytest.mark.parametrize(
    ("snapshot", "described", "exhausted"),
    [
        ({"unlimited": True, "remaining": 0}, "premium requests: unlimited", False),
        ({"remaining": 0, "entitlement": 300}, "premium requests: 0 of 300 left", True),
        ({"remaining": -2.5}, "premium requests: -2.5 left", True),
        ({"remaining": 0, "overage_permitted": True}, "premium requests: 0 left", False),
        ({"remaining": "0", "entitlement": True}, "premium requests: unknown left", False),
        ({}, "premium requests: unknown left", False),
    ],
)
def test_a_quota_is_read_for_what_it_says_and_odd_numbers_are_unknown(
    snapshot: dict[str, Any], described: str, exhausted: bool
) -> None:
    user = {"quota_snapshots": {"premium_interactions": snapshot}}
    premium = read_sign_in({"authInfo": {"copilotUser": user}}).premium

    assert premium is not None
    assert premium.describe() == described
    assert premium.exhausted is exhausted


SECRET_PLACES = st.sampled_from(["answer", "authInfo", "copilotUser", "endpoints"])


@settings(max_examples=200, deadline=None)
@given(SECRET_PLACES, json_values, st.booleans(), st.booleans())
def test_a_token_in_the_sign_in_never_reaches_the_account_or_a_message(
    place: str, extra: Any, chat_enabled: bool, signed_in: bool
) -> None:
    endpoints: dict[str, Any] = {"api": "https://api.example", "extra": extra}
    user: dict[str, Any] = {**USER, "chat_enabled": chat_enabled, "endpoints": endpoints}
    info: dict[str, Any] = {"type": "token", "host": "https://github.com", "copilotUser": user}
    answer: dict[str, Any] = (
        {"authInfo": info} if signed_in else {"authErrors": ["(401) Bad credentials"]}
    )
    {"answer": answer, "authInfo": info, "copilotUser": user, "endpoints": endpoints}[place][
        "token"
    ] = SECRET
    try:
        account: Account | None = read_sign_in(answer)
        said = [repr(account)]
    except AccountError as error:
        account = None
        said = [error.failure.message, str(error)]
    if account is not None:
        said.append(json.dumps(account.log_fields()))
        said.append(account.quotas())
        said.append(catalog_failure(MODELS_FAILED % (500, "x"), account).message)
        spent = turn_failure(TurnError("quota", 402), "spent", account)
        assert spent is not None
        said.append(spent.message)

    assert not [text for text in said if SECRET in text]


# -- more of the catalog ------------------------------------------------------------------------


def test_a_catalog_failure_without_an_api_url_says_the_copilot_api() -> None:
    failure = catalog_failure(MODELS_FAILED % (500, "Internal Server Error"), Account())

    assert failure.message.startswith("the Copilot API could not list the account's models ")
    assert "(HTTP 500: Internal Server Error (boom))" in failure.message
    assert "githubstatus.com" in failure.message


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ('{"message": "top-level words"}', "(top-level words)"),
        ("plain text, not JSON", "(plain text, not JSON)"),
        ('{"error": {"message": 7}}', '({"error": {"message": 7}})'),
        ("x" * 500, "(" + "x" * 200 + ")"),
    ],
)
def test_the_catalogs_error_body_is_quoted_in_its_own_words(body: str, shown: str) -> None:
    answer = {"kind": "http", "status": 502, "statusText": "Bad Gateway", "body": body}
    said = "Request models.list failed with message: GenericFailure, " + json.dumps(answer)
    failure = catalog_failure(said, read_sign_in(SIGNED_IN))

    assert failure.kind == DriverErrorKind.COPILOT_API_ERROR
    assert f"(HTTP 502: Bad Gateway {shown})" in failure.message


@pytest.mark.parametrize(
    "said",
    [
        "Request models.list failed with message: connection reset",
        "GenericFailure, {not json",
        'GenericFailure, {"kind": "http", "status": "500"}',
        'GenericFailure, {"kind": "http", "status": true}',
        "GenericFailure, [1, 2]",
    ],
)
def test_a_catalog_failure_without_a_readable_status_is_quoted_whole(said: str) -> None:
    failure = catalog_failure(said, read_sign_in(SIGNED_IN))

    assert failure.kind == DriverErrorKind.COPILOT_API_ERROR
    assert failure.exit_code == ExitCode.FAILURE
    assert f"could not list the account's models ({said})" in failure.message


def test_a_refused_catalog_names_the_api_and_the_fix() -> None:
    account = read_sign_in(SIGNED_IN)
    refused = catalog_failure(MODELS_FAILED % (401, "Unauthorized"), account)
    no_access = catalog_failure(MODELS_FAILED % (403, "Forbidden"), account)

    assert refused.message.startswith("Authentication failed")
    assert "https://api.individual.githubcopilot.com answered HTTP 401" in refused.message
    assert "https://api.individual.githubcopilot.com answered HTTP 403" in no_access.message
    assert 'the "Copilot Requests" permission' in no_access.message


HEADER_CANARY = "hdr-canary-"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=100, max_value=599),
    st.text(max_size=30),
    st.text(max_size=40),
)
def test_the_http_answers_headers_never_reach_the_message(
    status: int, reason: str, header_value: str
) -> None:
    answer = {
        "kind": "http",
        "status": status,
        "statusText": reason,
        "body": '{"error": {"message": "m"}}',
        "headers": [{"name": "x-request-id", "value": HEADER_CANARY + header_value}],
    }
    said = "Request models.list failed with message: GenericFailure, " + json.dumps(answer)
    failure = catalog_failure(said, read_sign_in(SIGNED_IN))

    assert HEADER_CANARY not in failure.message
    assert f"HTTP {status}" in failure.message


@pytest.mark.parametrize(
    "said",
    [
        'GenericFailure, {"kind": "http", "status": 500, "x": ' + "[" * 100_000,
        'GenericFailure, {"kind": "http", "status": 500, "body": "' + "[" * 100_000 + '"}',
    ],
)
def test_a_deeply_nested_catalog_failure_is_described_not_raised(said: str) -> None:
    failure = catalog_failure(said, Account())
    assert failure.kind == DriverErrorKind.COPILOT_API_ERROR


# -- more of the model check --------------------------------------------------------------------

EXHAUSTED = read_sign_in(SIGNED_IN)


@pytest.mark.parametrize(
    ("catalog", "model"),
    [
        ((CatalogModel("gpt-5.2", None),), "gpt-5.2"),
        ((CatalogModel("gpt-5-mini", 0.0),), "gpt-5-mini"),
        ((), "auto"),
    ],
)
def test_no_premium_cost_said_or_none_charged_passes_on_an_exhausted_quota(
    catalog: tuple[CatalogModel, ...], model: str
) -> None:
    assert EXHAUSTED.premium is not None
    assert EXHAUSTED.premium.exhausted
    check_model(model, catalog, EXHAUSTED)


def test_a_premium_model_passes_when_the_account_says_nothing_of_its_quota() -> None:
    check_model("gpt-5.2", CATALOG, Account(login="octocat"))


def test_an_empty_catalog_offers_none_and_included_models_none_listed() -> None:
    with pytest.raises(AccountError) as missing:
        check_model("gpt-5.2", (), EXHAUSTED)
    with pytest.raises(AccountError) as premium:
        check_model("gpt-5.2", (CatalogModel("gpt-5.2", 1.0),), EXHAUSTED)

    assert "it offers: none." in missing.value.failure.message
    assert "(none listed)" in premium.value.failure.message
    assert "https://github.com/settings/copilot/features" in premium.value.failure.message


MODEL_IDS = st.text(alphabet="abcdefgpt-.0123456789", min_size=1, max_size=10)


@given(st.lists(MODEL_IDS, unique=True, max_size=8), MODEL_IDS)
def test_a_model_outside_any_catalog_is_refused_naming_every_model_in_it(
    ids: list[str], model: str
) -> None:
    catalog = tuple(CatalogModel(entry, 0.0) for entry in ids)
    if model in ids or model == "auto":
        check_model(model, catalog, EXHAUSTED)
        return
    with pytest.raises(AccountError) as raised:
        check_model(model, catalog, EXHAUSTED)
    failure = raised.value.failure

    assert failure.kind == DriverErrorKind.MODEL_UNAVAILABLE
    assert failure.exit_code == ExitCode.CONFIG
    assert f"COPILOT_MODEL={model}: The requested model is not supported" in failure.message
    assert f"it offers: {', '.join(ids) or 'none'}." in failure.message


# -- more of a failed turn ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, TurnError()),
        (
            {"errorType": "rate_limit", "statusCode": 429, "errorCode": "x", "message": "m"},
            TurnError("rate_limit", 429, "x", "m"),
        ),
        ({"statusCode": True}, TurnError()),
        ({"statusCode": "429"}, TurnError()),
        ({"statusCode": None}, TurnError()),
        ({"statusCode": 429.0}, TurnError()),
        ({"errorType": "", "errorCode": 5, "message": ["m"]}, TurnError()),
    ],
)
def test_a_session_error_is_read_tolerating_wrong_types(
    data: dict[str, Any], expected: TurnError
) -> None:
    assert TurnError.from_event_data(data) == expected


@given(
    st.dictionaries(
        st.sampled_from(["errorType", "statusCode", "errorCode", "message"]), json_values
    )
)
def test_any_session_error_is_read_and_judged_without_raising(data: dict[str, Any]) -> None:
    error = TurnError.from_event_data(data)
    failure = turn_failure(error, "why", read_sign_in(SIGNED_IN))
    assert failure is None or "why" in failure.message


@pytest.mark.parametrize(
    ("error", "kind", "exit_code"),
    [
        (TurnError("rate_limit"), DriverErrorKind.RATE_LIMITED, ExitCode.FAILURE),
        (TurnError(status_code=429), DriverErrorKind.RATE_LIMITED, ExitCode.FAILURE),
        (TurnError(status_code=402), DriverErrorKind.QUOTA_EXCEEDED, ExitCode.FAILURE),
        (TurnError("quota"), DriverErrorKind.QUOTA_EXCEEDED, ExitCode.FAILURE),
        (TurnError(error_code="quota_exceeded"), DriverErrorKind.QUOTA_EXCEEDED, ExitCode.FAILURE),
        (TurnError(status_code=401), DriverErrorKind.TOKEN_REFUSED, ExitCode.CONFIG),
        (TurnError(status_code=403), DriverErrorKind.NO_COPILOT_ACCESS, ExitCode.CONFIG),
    ],
)
def test_a_failed_turn_about_the_account_has_its_kind_and_exit_status(
    error: TurnError, kind: DriverErrorKind, exit_code: int
) -> None:
    failure = turn_failure(error, "the runtime's words", None)

    assert failure is not None
    assert (failure.kind, failure.exit_code) == (kind, exit_code)
    assert "the runtime's words" in failure.message


def test_without_an_account_a_rate_limit_names_no_quota_and_defaults_to_429() -> None:
    failure = turn_failure(TurnError("rate_limit"), "slow down", None)

    assert failure is not None
    assert "(HTTP 429) after the CLI's own retries: slow down" in failure.message
    assert "at the run's start" not in failure.message


def test_an_exhausted_quota_names_the_accounts_quotas_and_the_reset() -> None:
    failure = turn_failure(TurnError(error_code="quota_exceeded"), "none left", EXHAUSTED)

    assert failure is not None
    assert (
        "(at the run's start: premium requests: 0 of 50 left; chat: 12 of 50 left, "
        "reset on 2026-12-01): none left" in failure.message
    )
    assert "https://github.com/settings/copilot/features" in failure.message


# -- the premium check, whatever the quota says ---------------------------------------------

QUOTA_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "entitlement": st.one_of(st.integers(0, 1500), st.none()),
        "remaining": st.one_of(st.integers(-3, 300), st.floats(-1, 300), st.none(), st.just("0")),
        "unlimited": st.one_of(st.booleans(), st.just("true")),
        "overage_permitted": st.one_of(st.booleans(), st.none()),
    },
)


@given(QUOTA_FIELDS, st.one_of(st.none(), st.sampled_from([0.0, 0.33, 1.0, 10.0])))
def test_a_model_is_refused_for_its_price_exactly_when_it_costs_premium_requests_none_left(
    premium: dict[str, Any], multiplier: float | None
) -> None:
    user = {**USER, "quota_snapshots": {"premium_interactions": premium}}
    account = read_sign_in({"authInfo": {"copilotUser": user}})
    catalog = (CatalogModel("gpt-5-mini", 0.0), CatalogModel("chosen", multiplier))
    remaining = premium.get("remaining")
    none_left = (
        isinstance(remaining, int | float)
        and remaining <= 0
        and premium.get("unlimited") is not True
        and premium.get("overage_permitted") is not True
    )
    refused = none_left and multiplier is not None and multiplier > 0

    if not refused:
        check_model("chosen", catalog, account)
        return
    with pytest.raises(AccountError) as raised:
        check_model("chosen", catalog, account)
    assert raised.value.failure.kind == DriverErrorKind.QUOTA_EXCEEDED
    assert "(gpt-5-mini)" in raised.value.failure.message


def test_a_quota_code_on_a_rate_limit_is_a_used_up_quota_not_retried_as_a_rate_limit() -> None:
    failure = turn_failure(TurnError("rate_limit", 429, "quota_exceeded"), "none left", None)

    assert failure is not None
    assert failure.kind == DriverErrorKind.QUOTA_EXCEEDED


@pytest.mark.parametrize(
    "said",
    [
        "Failed to validate SDK token: Network Fetch Failed (https://api.github.com/u)",
        "Failed to validate SDK token: CONNECTION REFUSED (https://api.github.com/u)",
    ],
)
def test_github_out_of_reach_is_recognised_in_any_case(said: str) -> None:
    failure = failure_of({"authErrors": [said]})

    assert failure.kind == DriverErrorKind.GITHUB_UNREACHABLE
    assert "could not reach GitHub at api.github.com " in failure.message


def test_a_sign_in_error_beside_a_sign_in_is_the_sign_in() -> None:
    answer = {**SIGNED_IN, "authErrors": ["Failed to validate SDK token (401): stale"]}
    assert read_sign_in(answer).login == "octocat"


def test_a_large_quota_is_written_in_whole_numbers() -> None:
    snapshot = {"entitlement": 10_000_000, "remaining": 1_234_567}
    user = {"quota_snapshots": {"premium_interactions": snapshot}}
    premium = read_sign_in({"authInfo": {"copilotUser": user}}).premium

    assert premium is not None
    assert premium.describe() == "premium requests: 1234567 of 10000000 left"


@pytest.mark.parametrize(
    "said",
    [
        "Failed to validate SDK token (407): Proxy Authentication Required",
        "Failed to validate SDK token: getaddrinfo ENOTFOUND api.github.com",
        "request failed: dns error: failed to lookup address information",
    ],
)
def test_a_proxy_login_or_a_name_that_does_not_resolve_is_github_out_of_reach(said: str) -> None:
    failure = failure_of({"authErrors": [said]})

    assert failure.kind == DriverErrorKind.GITHUB_UNREACHABLE
    assert failure.exit_code == ExitCode.FAILURE
