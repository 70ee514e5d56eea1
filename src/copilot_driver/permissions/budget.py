"""The run-wide tool-call budget (the tool contract's `maxToolCalls`), a soft stop as
gh-aw keeps it.

The SDK calls `pre_tool_use` before every tool call, subagents' included,
whatever the permission policy will say. Every call is debited (`on_debit`:
the driver writes gh-aw's `guard.tool_call_budget_debit` record). Calls up to
the limit go on to the policy (the hook answers nothing, so the permission
handler still decides). A call past it is denied with gh-aw's reason: the tool
does not run, the model is told to stop using tools and answer from what it
has, and the run goes on to end as it would have (exit 0 on an answer). That
is what gh-aw's own driver does, so gh-aw's harness sees a success, not a
failure to retry (a retry would run the calls within the budget again).

A model that ignores the reason and keeps calling tools would be denied until
the send timeout, a failure the harness retries. So the budget keeps a bound
of its own: the `OVERRUN_LIMIT`-th call denied past the budget trips
`on_overrun` once (the driver stops the turn: exit 6), and that call's answer
is withheld until the turn is stopped, so the model is not asked again. Each
denied call is logged as a permission denial (`on_denied`), so by then gh-aw's
harness counts more than its three "permission denied" lines and does not
retry either.

The SDK treats a hook that raises as having no opinion (the tool would run),
so this one never raises: anything unexpected denies the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

OVERRUN_LIMIT = 10
"""Calls denied past the budget before the driver stops the turn itself: enough for a
model to read the reason and answer (it usually stops at the first), few enough that
a model looping on tools ends in seconds, not at the send timeout."""
WITHHOLD_TIMEOUT_S = 30.0
"""A withheld call is denied after this long even if the turn was never stopped."""


def budget_feedback(limit: int) -> str:
    """What the model is told about a call past the budget (gh-aw's words)."""
    return (
        f"The workflow aggregate tool-call budget is exhausted ({limit} calls). This tool was "
        "not executed; stop using tools and provide the best result from completed work."
    )


@dataclass(frozen=True)
class Debit:
    """One call counted against the budget (gh-aw's `guard.tool_call_budget_debit`)."""

    tool: str
    session_id: str | None
    count: int
    limit: int

    @property
    def exhausted(self) -> bool:
        """True for a call past the budget: it is denied."""
        return self.count > self.limit


class ToolCallBudget:
    def __init__(
        self,
        limit: int,
        *,
        on_debit: Callable[[Debit], None],
        on_denied: Callable[[Debit], None],
        on_overrun: Callable[[Debit], None],
        overrun_limit: int = OVERRUN_LIMIT,
        withhold_timeout: float = WITHHOLD_TIMEOUT_S,
    ) -> None:
        self.limit = limit
        self.count = 0
        self.overrun = False
        self._on_debit = on_debit
        self._on_denied = on_denied
        self._on_overrun = on_overrun
        self._overrun_limit = overrun_limit
        self._withhold_timeout = withhold_timeout
        self._turn_stopped = asyncio.Event()

    async def pre_tool_use(self, hook_input: Mapping[str, Any], context: Any) -> Any:
        """The SDK's `on_pre_tool_use` hook: None within the budget, else a denial."""
        try:
            self.count += 1
            debit = Debit(*_caller(hook_input), self.count, self.limit)
            self._on_debit(debit)
            if not debit.exhausted:
                return None
            self._on_denied(debit)
            if not self.overrun and debit.count - self.limit >= self._overrun_limit:
                self.overrun = True
                self._on_overrun(debit)
            if self.overrun:
                await self._withhold()
        except Exception:  # noqa: S110 - denied below: a failure never lets a tool run
            pass
        return {
            "permissionDecision": "deny",
            "permissionDecisionReason": budget_feedback(self.limit),
        }

    def turn_stopped(self) -> None:
        """The turn is over: withheld calls are denied now."""
        self._turn_stopped.set()

    async def _withhold(self) -> None:
        try:
            async with asyncio.timeout(self._withhold_timeout):
                await self._turn_stopped.wait()
        except TimeoutError:
            pass


def _caller(hook_input: Mapping[str, Any]) -> tuple[str, str | None]:
    """The tool's name and the calling session's id (a subagent's own, when it calls)."""
    if not isinstance(hook_input, Mapping):
        return "a tool", None
    tool, session = hook_input.get("toolName"), hook_input.get("sessionId")
    return str(tool or "a tool"), session if isinstance(session, str) else None
