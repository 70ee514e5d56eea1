"""The account side: tokens, the `copilot_internal/user` answer, and the
error bodies GitHub and the Copilot API send (as measured against Copilot
CLI 1.0.102, which quotes them to the SDK)."""

from __future__ import annotations

import secrets
import string
from datetime import UTC, datetime, timedelta
from typing import Any

from copilot_driver.testing.github_api.switches import Switches

_TOKEN_ALPHABET = string.ascii_letters + string.digits

LOGIN = "octocat"

DOCS_URL = "https://docs.github.com/rest"

BAD_CREDENTIALS: dict[str, Any] = {
    "message": "Bad credentials",
    "documentation_url": DOCS_URL,
    "status": "401",
}
"""GitHub's answer to a token it does not know (any GitHub API path)."""

NOT_ACCESSIBLE: dict[str, Any] = {
    "message": "Resource not accessible by personal access token",
    "documentation_url": DOCS_URL,
    "status": "403",
}
"""GitHub's answer to `copilot_internal/user` for a token without Copilot access."""

NOT_LICENSED: dict[str, Any] = {
    "error": {
        "message": "You are not licensed to use Copilot. Check your subscription.",
        "code": "no_copilot_license",
    }
}
"""The Copilot API's 403 for an account whose `chat_enabled` is false."""

RATE_LIMITED: dict[str, Any] = {
    "error": {
        "message": "Sorry, you have been rate-limited. Please wait a moment before trying again.",
        "code": "rate_limited",
    }
}

QUOTA_EXCEEDED: dict[str, Any] = {
    "error": {
        "message": "You have no premium requests left this month. "
        "Please upgrade your plan or wait for the allowance to reset.",
        "code": "quota_exceeded",
    }
}


def new_token() -> str:
    """A fresh, random token shaped like a GitHub OAuth token (`gho_` + 36)."""
    return "gho_" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(36))


def quota_reset_date(now: datetime | None = None) -> str:
    """The first day of next month (UTC), as GitHub writes it."""
    today = (now or datetime.now(UTC)).date().replace(day=1)
    return (today + timedelta(days=32)).replace(day=1).isoformat()


def _snapshot(quota_id: str, entitlement: int, remaining: int) -> dict[str, Any]:
    return {
        "entitlement": entitlement,
        "remaining": remaining,
        "percent_remaining": round(100 * remaining / entitlement, 1) if entitlement else 0,
        "unlimited": False,
        "overage_count": 0,
        "overage_permitted": False,
        "quota_id": quota_id,
    }


def user_answer(switches: Switches, endpoints: dict[str, str]) -> dict[str, Any]:
    """The 200 answer of `GET /copilot_internal/user` under `switches`."""
    premium = 0 if switches.quota_exhausted else switches.premium_entitlement
    return {
        "login": LOGIN,
        "access_type_sku": switches.sku,
        "analytics_tracking_id": "0123456789abcdef0123456789abcdef",
        "chat_enabled": switches.chat_enabled,
        "copilot_plan": switches.plan,
        "endpoints": endpoints,
        "quota_snapshots": {
            "chat": _snapshot("chat", 50, 50),
            "completions": _snapshot("completions", 2000, 2000),
            "premium_interactions": _snapshot(
                "premium_interactions", switches.premium_entitlement, premium
            ),
        },
        "quota_reset_date": quota_reset_date(),
        "organization_list": [],
        "restricted_telemetry": False,
    }


def github_not_found() -> dict[str, Any]:
    """GitHub's 404 body."""
    return {"message": "Not Found", "documentation_url": DOCS_URL, "status": "404"}


def scripted_failure(status: int, *, github: bool) -> dict[str, Any]:
    """The body of a status a test forces on a path: GitHub's shape on the
    GitHub API, the Copilot API's `error` object elsewhere."""
    message = f"Scripted HTTP {status}"
    if github:
        return {"message": message, "documentation_url": DOCS_URL, "status": str(status)}
    return {"error": {"message": message, "code": f"http_{status}"}}
