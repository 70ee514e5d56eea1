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
The sign-in's secret fields are never read: only the names below are. What
the CLI said is turned into each failure's sentence in account_failures.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from copilot_driver.driver.account_failures import (
    SETTINGS_URL,
    TOKEN_VARIABLES,
    nonempty_text,
    sign_in_failure,
)
from copilot_driver.driver.failures import Failure
from copilot_driver.errors import CopilotDriverError
from copilot_driver.exit_codes import ExitCode
from copilot_driver.vocabulary import DriverErrorKind

AUTO_MODEL = "auto"
"""The Copilot CLI's model router: a model the account chooses per request."""


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
        raise AccountError(sign_in_failure(errors))
    user = info.get("copilotUser")
    user = user if isinstance(user, Mapping) else {}
    chat_enabled = user.get("chat_enabled")
    endpoints = user.get("endpoints")
    snapshots = user.get("quota_snapshots")
    snapshots = snapshots if isinstance(snapshots, Mapping) else {}
    account = Account(
        host=nonempty_text(info.get("host")),
        login=nonempty_text(user.get("login")),
        plan=nonempty_text(user.get("copilot_plan")),
        chat_enabled=chat_enabled if isinstance(chat_enabled, bool) else None,
        premium=_quota("premium requests", snapshots.get("premium_interactions")),
        chat=_quota("chat", snapshots.get("chat")),
        reset_date=nonempty_text(user.get("quota_reset_date")),
        api_url=nonempty_text(endpoints.get("api")) if isinstance(endpoints, Mapping) else None,
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
