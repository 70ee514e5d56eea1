"""The run-wide tool-call budget: counted before each call, withheld past the limit."""

from __future__ import annotations

import asyncio

from copilot_driver.permissions.budget import ToolCallBudget, budget_feedback


async def test_calls_within_the_budget_are_left_to_the_policy() -> None:
    tripped: list[tuple[str, int, int]] = []
    budget = ToolCallBudget(2, lambda *call: tripped.append(call))
    assert await budget.pre_tool_use({"toolName": "view"}, {}) is None
    assert await budget.pre_tool_use({"toolName": "bash"}, {}) is None
    assert tripped == []
    assert budget.count == 2


async def test_the_first_call_past_it_trips_once_and_waits_for_the_turn_to_stop() -> None:
    tripped: list[tuple[str, int, int]] = []
    budget = ToolCallBudget(1, lambda *call: tripped.append(call))
    await budget.pre_tool_use({"toolName": "view"}, {})
    withheld = asyncio.ensure_future(budget.pre_tool_use({"toolName": "bash"}, {}))
    second = asyncio.ensure_future(budget.pre_tool_use({"toolName": "edit"}, {}))
    await asyncio.sleep(0.05)
    assert not withheld.done(), "no answer while the turn runs: the model is not asked again"
    assert tripped == [("bash", 2, 1)]
    budget.turn_stopped()
    denial = {"permissionDecision": "deny", "permissionDecisionReason": budget_feedback(1)}
    assert await withheld == denial
    assert await second == denial
    assert tripped == [("bash", 2, 1)], "tripped once"


async def test_a_failure_in_the_hook_denies_and_never_raises() -> None:
    def explode(*_: object) -> None:
        raise RuntimeError("boom")

    budget = ToolCallBudget(0, explode)
    answer = await budget.pre_tool_use({"toolName": "bash"}, {})
    assert answer["permissionDecision"] == "deny"


async def test_a_withheld_call_is_denied_if_the_turn_never_stops() -> None:
    budget = ToolCallBudget(0, lambda *_: None, withhold_timeout=0.05)
    answer = await budget.pre_tool_use({"toolName": "bash"}, {})
    assert answer["permissionDecision"] == "deny"


def test_the_feedback_tells_the_model_to_stop_using_tools() -> None:
    assert budget_feedback(3) == (
        "The workflow aggregate tool-call budget is exhausted (3 calls). This tool was not "
        "executed; stop using tools and provide the best result from completed work."
    )
