"""The run-wide tool-call budget (the tool contract's `maxToolCalls`).

The SDK calls `pre_tool_use` before every tool call, subagents' included,
whatever the permission policy will say. Calls up to the limit go on to the
policy (the hook answers nothing, so the permission handler still decides).
The first call past it trips the budget once (`on_exhausted`: the driver
records the guard event and stops the run) and, like the denials guard, its
answer is withheld until the turn is stopped: the runtime waits for it, so
the model is never asked again. It is then denied; the tool never runs.

The SDK treats a hook that raises as having no opinion (the tool would run),
so this one never raises: anything unexpected denies the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

WITHHOLD_TIMEOUT_S = 30.0
"""A withheld call is denied after this long even if the turn was never stopped."""


def budget_feedback(limit: int) -> str:
    """What the model is told about a call past the budget."""
    return (
        f"The workflow aggregate tool-call budget is exhausted ({limit} calls). This tool was "
        "not executed; stop using tools and provide the best result from completed work."
    )


class ToolCallBudget:
    def __init__(
        self,
        limit: int,
        on_exhausted: Callable[[str, int, int], None],
        *,
        withhold_timeout: float = WITHHOLD_TIMEOUT_S,
    ) -> None:
        self.limit = limit
        self.count = 0
        self.exhausted = False
        self._on_exhausted = on_exhausted
        self._withhold_timeout = withhold_timeout
        self._turn_stopped = asyncio.Event()

    async def pre_tool_use(self, hook_input: Mapping[str, Any], context: Any) -> Any:
        """The SDK's `on_pre_tool_use` hook: None within the budget, else a denial."""
        try:
            self.count += 1
            if self.count <= self.limit:
                return None
            if not self.exhausted:
                self.exhausted = True
                tool = hook_input.get("toolName") if isinstance(hook_input, Mapping) else None
                self._on_exhausted(str(tool or "a tool"), self.count, self.limit)
            try:
                async with asyncio.timeout(self._withhold_timeout):
                    await self._turn_stopped.wait()
            except TimeoutError:
                pass
        except Exception:  # noqa: S110 - denied below: a failure never lets a tool run
            pass
        return {
            "permissionDecision": "deny",
            "permissionDecisionReason": budget_feedback(self.limit),
        }

    def turn_stopped(self) -> None:
        """The turn is over: withheld calls are denied now."""
        self._turn_stopped.set()
