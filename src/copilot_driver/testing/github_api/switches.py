"""The switches a test flips to make the fake GitHub misbehave.

`Switches` is frozen: a test replaces the whole value while the server runs
(`fake.switches = replace(fake.switches, token_refused=True)`, or
`fake.switch(token_refused=True)`), so a request always sees one
consistent set.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from copilot_driver.testing.github_api.catalog import DEFAULT_CATALOG, CatalogModel

MODEL_PATHS = ("/responses", "/chat/completions")
"""The paths that run a model, which rate limits and quotas apply to."""


@dataclass(frozen=True)
class RateLimit:
    """Answer model calls 429 with `Retry-After: retry_after_s`: the next
    `times` of them (counted from when this value is set), or all (None)."""

    times: int | None = None
    retry_after_s: int = 2

    def __post_init__(self) -> None:
        if self.times is not None and self.times < 1:
            raise ValueError(f"times must be at least 1 (or None for always), not {self.times}")
        if self.retry_after_s < 0:
            raise ValueError(f"retry_after_s must be 0 or more, not {self.retry_after_s}")


@dataclass(frozen=True)
class Switches:
    """How the fake answers; the defaults are a healthy free-plan account.

    - `token_refused`: every request (telemetry aside) gets 401 Bad credentials;
    - `copilot_access=False`: `copilot_internal/user` answers 403 "Resource
      not accessible by personal access token";
    - `chat_enabled=False`: the user answer says so, and Copilot API calls
      answer 403 "not licensed to use Copilot";
    - `rate_limit`: model calls answer 429 (see `RateLimit`);
    - `quota_exhausted`: model calls answer 402 `quota_exceeded`, and the
      user answer's premium quota shows 0 remaining;
    - `catalog`: what `GET /models` lists (see `catalog.catalog_without`);
    - `delays`: path -> seconds to wait before answering (woken by `close()`);
    - `failures`: path -> HTTP status to answer instead (after auth);
    - `auto_model`: the catalog model auto mode picks, or None for the 404s
      a fake without auto mode gives (see `auto`);
    - `mcp_read_only=False`: the MCP tools lose their `readOnlyHint`, so
      the CLI asks for an `mcp` permission before calling one (it calls
      GitHub's read-only tools without asking);
    - `plan`, `sku`, `premium_entitlement`: the account in the user answer.

    Paths are the request paths without a query (`/responses`,
    `/copilot_internal/user`).
    """

    token_refused: bool = False
    copilot_access: bool = True
    chat_enabled: bool = True
    rate_limit: RateLimit | None = None
    quota_exhausted: bool = False
    catalog: tuple[CatalogModel, ...] = DEFAULT_CATALOG
    delays: Mapping[str, float] = field(default_factory=dict)
    failures: Mapping[str, int] = field(default_factory=dict)
    auto_model: str | None = None
    mcp_read_only: bool = True
    plan: str = "individual"
    sku: str = "free_limited_copilot"
    premium_entitlement: int = 50


class RateLimitCounter:
    """Counts the 429s given under one `RateLimit` value, so `times` means
    "the next N model calls after the switch was set"."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: RateLimit | None = None
        self._given = 0

    def take(self, limit: RateLimit | None) -> bool:
        """Whether this model call is refused under `limit`."""
        if limit is None:
            return False
        with self._lock:
            if limit is not self._current:
                self._current, self._given = limit, 0
            if limit.times is not None and self._given >= limit.times:
                return False
            self._given += 1
            return True
