"""The Copilot account behind a run on a GitHub token, checked before any prompt. Pure.

On the subscription path (no bring-your-own-model provider) the sidecar signs
in to GitHub with the token it was given, and every model call spends the
account's requests. Left to itself, the Copilot CLI reports a refused token
only when the session is created, a model the account cannot use by falling
back to another one ("auto"), and an exhausted quota only after the prompt
was sent. So once connected, before the session exists, the driver reads the
sidecar's sign-in (`account.getCurrentAuth`) and the account's model catalog
(`models.list`) and stops with one sentence when:

    no sign-in at all                    not_signed_in      exit 2
    GitHub refused the token (401)       token_refused      exit 2
    the token has no Copilot access      no_copilot_access  exit 2
      (403, or `chat_enabled: false`)
    GitHub could not be reached          github_unreachable exit 1
      (a network error, a proxy asking for a login: 407)
    GitHub failing at sign-in (5xx, 429) copilot_api_error  exit 1, retried
    the model is not in the catalog      model_unavailable  exit 2
      (the catalog's models are named; `auto` only when asked for)
    a premium model, premium quota gone  quota_exceeded     exit 1
    the catalog cannot be read           (401, 403 as above) or copilot_api_error exit 1

and, when the turn fails anyway, `turn_failure` names a rate limit
(`rate_limited`, retried by the harness) or an exhausted quota with the
account's numbers and reset date.

The texts read here are the Copilot CLI's own (1.0.102): the sign-in error
is `Failed to validate SDK token (401): GitHub returned: Bad credentials`, or
`Failed to validate SDK token: network fetch failed: ... (http://host/...)`.
The sign-in's secret fields are never read: only the names below are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from copilot_driver.driver.failures import Failure
from copilot_driver.env import PLATFORM_TOKENS
from copilot_driver.errors import CopilotDriverError
from copilot_driver.exit_codes import ExitCode
from copilot_driver.vocabulary import DriverErrorKind

AUTO_MODEL = "auto"
"""The Copilot CLI's model router: a model the account chooses per request."""
TOKEN_VARIABLES = f"{', '.join(PLATFORM_TOKENS[:-1])} or {PLATFORM_TOKENS[-1]}"
"""Where the sidecar's token comes from (the driver itself never reads them)."""
ACCEPTED_TOKENS = (
    'a fine-grained personal access token with the "Copilot Requests" permission, an OAuth '
    "token (`gh auth token`), or in GitHub Actions a GITHUB_TOKEN with "
    "`permissions: copilot-requests: write`"
)
SETTINGS_URL = "https://github.com/settings/copilot/features"
_STATUS = re.compile(r"\((\d{3})\)")
_URL = re.compile(r"\((https?://[^)\s]+)\)|(https?://\S+)")
_UNREACHABLE = (
    "network fetch failed",
    "error sending request",
    "connection refused",
    "timed out",
    "enotfound",
    "dns error",
)


class AccountError(CopilotDriverError):
    """The account cannot serve this run; `failure` says how, with the fix."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@dataclass(frozen=True)
class Quota:
    """One of the account's quotas (`chat`, `premium_interactions`), as
    `copilot_internal/user` gives it."""

    name: str
    entitlement: float | None
    remaining: float | None
    unlimited: bool
    overage_permitted: bool

    @property
    def exhausted(self) -> bool:
        return (
            not self.unlimited
            and not self.overage_permitted
            and self.remaining is not None
            and self.remaining <= 0
        )

    def describe(self) -> str:
        if self.unlimited:
            return f"{self.name}: unlimited"
        whole = f" of {_number(self.entitlement)}" if self.entitlement is not None else ""
        return f"{self.name}: {_number(self.remaining)}{whole} left"


@dataclass(frozen=True)
class Account:
    """Who the sidecar is signed in as, and what the account may use."""

    host: str | None = None
    login: str | None = None
    plan: str | None = None
    chat_enabled: bool | None = None
    premium: Quota | None = None
    chat: Quota | None = None
    reset_date: str | None = None
    api_url: str | None = None
    """The Copilot API the account uses (`endpoints.api`)."""

    def quotas(self) -> str:
        """The account's quotas in words, with their reset date ("" when none is known)."""
        known = [quota.describe() for quota in (self.premium, self.chat) if quota is not None]
        if not known:
            return ""
        reset = f", reset on {self.reset_date}" if self.reset_date else ""
        return "; ".join(known) + reset

    def log_fields(self) -> dict[str, Any]:
        return {
            "githubHost": self.host,
            "login": self.login,
            "plan": self.plan,
            "premiumRemaining": self.premium.remaining if self.premium else None,
            "quotaResetDate": self.reset_date,
        }


@dataclass(frozen=True)
class CatalogModel:
    """A model of the account's catalog, as the CLI lists it (`models.list`)."""

    id: str
    premium_multiplier: float | None = None
    """Premium requests per call (0: included in the plan); None when not said."""


def read_sign_in(raw: object) -> Account:
    """The sidecar's sign-in (`account.getCurrentAuth`'s answer) as an Account;
    raises AccountError when there is none, naming why."""
    answer = raw if isinstance(raw, Mapping) else {}
    info = answer.get("authInfo")
    if not isinstance(info, Mapping):
        said = answer.get("authErrors")
        errors = [text for text in said if isinstance(text, str)] if isinstance(said, list) else []
        raise AccountError(_sign_in_failure(errors))
    user = info.get("copilotUser")
    user = user if isinstance(user, Mapping) else {}
    chat_enabled = user.get("chat_enabled")
    endpoints = user.get("endpoints")
    snapshots = user.get("quota_snapshots")
    snapshots = snapshots if isinstance(snapshots, Mapping) else {}
    account = Account(
        host=_text(info.get("host")),
        login=_text(user.get("login")),
        plan=_text(user.get("copilot_plan")),
        chat_enabled=chat_enabled if isinstance(chat_enabled, bool) else None,
        premium=_quota("premium requests", snapshots.get("premium_interactions")),
        chat=_quota("chat", snapshots.get("chat")),
        reset_date=_text(user.get("quota_reset_date")),
        api_url=_text(endpoints.get("api")) if isinstance(endpoints, Mapping) else None,
    )
    if account.chat_enabled is False:
        raise AccountError(
            Failure(
                DriverErrorKind.NO_COPILOT_ACCESS,
                f"the GitHub account {account.login or '(unknown)'} has no Copilot access "
                "(GitHub says chat_enabled: false): assign it a Copilot seat, or enable "
                f"Copilot Chat for it, or use another account's token ({TOKEN_VARIABLES})",
                ExitCode.CONFIG,
            )
        )
    return account


def catalog_failure(said: str, account: Account) -> Failure:
    """The account's catalog could not be read (the CLI's `models.list` failed with
    `said`, which carries the HTTP answer as JSON: `GenericFailure, {"kind": "http",
    "status": 500, "statusText": ..., "body": ...}`)."""
    status, detail = _http_answer(said)
    where = f"the Copilot API at {account.api_url}" if account.api_url else "the Copilot API"
    answered = f"HTTP {status}{': ' + detail if detail else ''}" if status else said[:300]
    if status == 401:
        return _refused(f"{where} answered {answered}")
    if status == 403:
        return _no_access(f"{where} answered {answered}")
    return Failure(
        DriverErrorKind.COPILOT_API_ERROR,
        f"{where} could not list the account's models ({answered}), after the CLI's own "
        "retries; nothing was sent to a model. GitHub may be having an incident "
        "(https://www.githubstatus.com): run again later",
    )


def check_model(model: str, catalog: Sequence[CatalogModel], account: Account) -> None:
    """Raises AccountError when `model` is not in the account's catalog (the CLI would
    silently switch to another model), or when it costs premium requests the account
    no longer has."""
    if model == AUTO_MODEL:
        return
    chosen = next((entry for entry in catalog if entry.id == model), None)
    if chosen is None:
        offered = ", ".join(entry.id for entry in catalog) or "none"
        raise AccountError(
            Failure(
                DriverErrorKind.MODEL_UNAVAILABLE,
                f"COPILOT_MODEL={model}: The requested model is not supported for this "
                f"account by this Copilot CLI; it offers: {offered}. Set COPILOT_MODEL to "
                f"one of them (`{AUTO_MODEL}` lets Copilot choose per request)",
                ExitCode.CONFIG,
            )
        )
    costly = chosen.premium_multiplier is not None and chosen.premium_multiplier > 0
    if costly and account.premium is not None and account.premium.exhausted:
        included = [entry.id for entry in catalog if entry.premium_multiplier == 0]
        raise AccountError(
            Failure(
                DriverErrorKind.QUOTA_EXCEEDED,
                f"COPILOT_MODEL={model} costs premium requests and the account has none left "
                f"({account.quotas()}): nothing was sent. Use a "
                f"model the plan includes ({', '.join(included) or 'none listed'}), or raise "
                f"the budget at {SETTINGS_URL}",
            )
        )


@dataclass(frozen=True)
class TurnError:
    """The `session.error` event that ended a turn: the runtime's classification."""

    error_type: str | None = None
    status_code: int | None = None
    error_code: str | None = None
    message: str | None = None

    @classmethod
    def from_event_data(cls, data: Mapping[str, Any]) -> TurnError:
        status = data.get("statusCode")
        return cls(
            _text(data.get("errorType")),
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            _text(data.get("errorCode")),
            _text(data.get("message")),
        )


def turn_failure(error: TurnError, reason: str, account: Account | None) -> Failure | None:
    """What a failed turn on the subscription path means, when it is about the account
    (None: an ordinary session error). `reason` is the runtime's own words."""
    known = account.quotas() if account else ""
    quota = f" (at the run's start: {known})" if known else ""
    quota_gone = error.error_type == "quota" or error.error_code == "quota_exceeded"
    if quota_gone or error.status_code == 402:
        return Failure(
            DriverErrorKind.QUOTA_EXCEEDED,
            f"the Copilot account's quota is used up{quota}: {reason}. Use a model the plan "
            f"includes, wait for the reset, or raise the budget at {SETTINGS_URL}",
        )
    if error.error_type == "rate_limit" or error.status_code == 429:
        return Failure(
            DriverErrorKind.RATE_LIMITED,
            f"Copilot rate-limited the account (HTTP {error.status_code or 429}"
            f"{', ' + error.error_code if error.error_code else ''}) after the CLI's own "
            f"retries{quota}: {reason}",
        )
    if error.status_code == 401:
        return _refused(f"HTTP 401: {reason}")
    if error.status_code == 403:
        return _no_access(f"HTTP 403: {reason}")
    return None


def _sign_in_failure(errors: Sequence[str]) -> Failure:
    said = "; ".join(errors)
    if not errors:
        return Failure(
            DriverErrorKind.NOT_SIGNED_IN,
            "the Copilot CLI sidecar has no GitHub sign-in (No GitHub OAuth token or Copilot "
            f"HMAC key provided): start it with a token in {TOKEN_VARIABLES} "
            f"({ACCEPTED_TOKENS}), or configure a bring-your-own-model provider "
            "(COPILOT_PROVIDER_BASE_URL)",
            ExitCode.CONFIG,
        )
    found = _STATUS.search(said)
    code = found.group(1) if found else None
    proxy_login = code == "407"  # a proxy on the way wants a login: GitHub never answered
    if proxy_login or (code is None and any(words in said.lower() for words in _UNREACHABLE)):
        host = _host_of(said)
        return Failure(
            DriverErrorKind.GITHUB_UNREACHABLE,
            f"the Copilot CLI could not reach GitHub at {host or 'its API host'} to check its "
            f"token ({said}): allow that host through the proxy or firewall (HTTPS_PROXY, "
            "NO_PROXY, NODE_EXTRA_CA_CERTS for an intercepting proxy; the harness's sandbox: "
            "--allow-domain), then run again",
        )
    if code == "403":
        return _no_access(said)
    if code is not None and (code == "429" or code.startswith("5")):
        return Failure(
            DriverErrorKind.COPILOT_API_ERROR,
            f"GitHub could not check the sidecar's token ({said}): it is failing or "
            "rate-limiting, not refusing the token. GitHub may be having an incident "
            "(https://www.githubstatus.com): run again later",
        )
    return _refused(said)


def _refused(said: str) -> Failure:
    return Failure(
        DriverErrorKind.TOKEN_REFUSED,
        f"Authentication failed: GitHub refused the sidecar's token ({said}): it may be "
        f"mistyped, expired or revoked. Give the sidecar a valid one in {TOKEN_VARIABLES}: "
        f"{ACCEPTED_TOKENS}",
        ExitCode.CONFIG,
    )


def _no_access(said: str) -> Failure:
    return Failure(
        DriverErrorKind.NO_COPILOT_ACCESS,
        f"the sidecar's GitHub token has no Copilot access ({said}): a fine-grained token "
        'needs the "Copilot Requests" permission and its account a Copilot seat; give the '
        f"sidecar such a token in {TOKEN_VARIABLES}",
        ExitCode.CONFIG,
    )


def _http_answer(said: str) -> tuple[int | None, str]:
    """The HTTP status and the error's message in the CLI's `GenericFailure, {...}`."""
    start = said.find("{")
    try:
        answer, _ = json.JSONDecoder().raw_decode(said[start:]) if start >= 0 else ({}, 0)
    except (ValueError, RecursionError):  # what the CLI quotes may be anything
        return None, ""
    if not isinstance(answer, Mapping):
        return None, ""
    status = answer.get("status")
    reason = _text(answer.get("statusText")) or ""
    body = answer.get("body")
    message = ""
    if isinstance(body, str):
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            parsed = None
        error = parsed.get("error") if isinstance(parsed, Mapping) else None
        found = error.get("message") if isinstance(error, Mapping) else None
        if found is None and isinstance(parsed, Mapping):
            found = parsed.get("message")
        message = found if isinstance(found, str) else body[:200]
    detail = " ".join(part for part in (reason, f"({message})" if message else "") if part)
    valid = isinstance(status, int) and not isinstance(status, bool)
    return (status if valid else None), detail


def _host_of(text: str) -> str | None:
    found = _URL.search(text)
    if found is None:
        return None
    try:
        parts = urlsplit(found.group(1) or found.group(2))
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if host is None:
        return None
    if ":" in host:  # an IPv6 address: bracketed, so its port reads as a port
        host = f"[{host}]"
    return f"{host}:{port}" if port else host


def _quota(name: str, data: object) -> Quota | None:
    if not isinstance(data, Mapping):
        return None
    return Quota(
        name,
        entitlement=_float(data.get("entitlement")),
        remaining=_float(data.get("remaining")),
        unlimited=data.get("unlimited") is True,
        overage_permitted=data.get("overage_permitted") is True,
    )


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _number(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:.0f}" if value.is_integer() else f"{value:g}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
