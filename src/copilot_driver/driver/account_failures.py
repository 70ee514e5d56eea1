"""What the Copilot CLI said about the account, as a failure with its fix. Pure.

The sign-in's errors (`authErrors`), the catalog's HTTP answer and a failed turn's
`session.error` are read here into the driver's failures (table in account.py);
each sentence names what to change: the token, the model, the budget, or the
network path to GitHub.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from copilot_driver.driver.failures import Failure
from copilot_driver.env_commands import PLATFORM_TOKENS
from copilot_driver.exit_codes import ExitCode
from copilot_driver.vocabulary import DriverErrorKind

if TYPE_CHECKING:
    from copilot_driver.driver.account import Account

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
            nonempty_text(data.get("errorType")),
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            nonempty_text(data.get("errorCode")),
            nonempty_text(data.get("message")),
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


def sign_in_failure(errors: Sequence[str]) -> Failure:
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
    reason = nonempty_text(answer.get("statusText")) or ""
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


def nonempty_text(value: object) -> str | None:
    """`value` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None
