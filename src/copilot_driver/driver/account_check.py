"""The subscription path's steps in a run: the account checked before the session
exists, and a failed turn read for what it says about the account (account.py holds
the decisions; this module makes the SDK calls and keeps the last `session.error`)."""

from __future__ import annotations

from typing import Any

from copilot_driver.driver.account import Account, AccountError, check_model, read_sign_in
from copilot_driver.driver.account_failures import TurnError, catalog_failure, turn_failure
from copilot_driver.driver.failures import CatalogUnreadableError, Failure, SessionFailedError
from copilot_driver.driver.sdk import SdkClient, event_type
from copilot_driver.driver.stop import StopRequests
from copilot_driver.logs import DriverLog
from copilot_driver.vocabulary import LogEvent

ACCOUNT_TIMEOUT_S = 30.0
"""For the sign-in and for the model catalog, each: the catalog may come from GitHub."""


async def check_account(
    client: SdkClient, model: str, stop: StopRequests, log: DriverLog
) -> Account | None:
    """The sidecar's sign-in, and `model` in the account's catalog, before anything is
    spent; raises AccountError with the failure. None from a CLI that cannot say (the
    session then reports what goes wrong). Logs `account.checked`."""
    raw = await stop.race(client.sign_in(), timeout=ACCOUNT_TIMEOUT_S)
    if raw is None:
        return None
    account = read_sign_in(raw)
    try:
        catalog = await stop.race(client.catalog(), timeout=ACCOUNT_TIMEOUT_S)
    except CatalogUnreadableError as error:
        raise AccountError(catalog_failure(str(error), account)) from error
    check_model(model, catalog, account)
    who = f" as {account.login}" if account.login else ""
    plan = f" ({account.plan})" if account.plan else ""
    log.info(
        LogEvent.ACCOUNT_CHECKED,
        f"signed in to {account.host or 'GitHub'}{who}{plan}; {model} is in the account's "
        f"catalog of {len(catalog)} models",
        model=model,
        models=[entry.id for entry in catalog],
        **account.log_fields(),
    )
    return account


class TurnErrors:
    """The last `session.error` event of the session, to explain a failed turn."""

    def __init__(self) -> None:
        self.last: TurnError | None = None

    def observe(self, event: Any) -> None:
        if event_type(event) != "session.error":
            return
        to_dict = getattr(getattr(event, "data", None), "to_dict", None)
        raw = to_dict() if callable(to_dict) else None
        self.last = TurnError.from_event_data(raw if isinstance(raw, dict) else {})

    def explain(self, failure: Exception, account: Account | None) -> Failure | None:
        """What a failed turn means for the account (a rate limit, a quota, a refused
        token), or None: not a session error, or one about something else."""
        if not isinstance(failure, SessionFailedError) or self.last is None:
            return None
        return turn_failure(self.last, failure.reason, account)
