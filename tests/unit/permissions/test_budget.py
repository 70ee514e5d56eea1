"""The run-wide tool-call budget: every call debited, calls past it denied (a soft
stop, as gh-aw keeps it), and a model that ignores the denials stopped."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.permissions.budget import OVERRUN_LIMIT, Debit, ToolCallBudget, budget_feedback


class Calls:
    def __init__(self) -> None:
        self.debits: list[Debit] = []
        self.denied: list[Debit] = []
        self.overruns: list[Debit] = []

    def budget(self, limit: int, **options: float) -> ToolCallBudget:
        return ToolCallBudget(
            limit,
            on_debit=self.debits.append,
            on_denied=self.denied.append,
            on_overrun=self.overruns.append,
            **options,  # type: ignore[arg-type]
        )


DENIAL = {"permissionDecision": "deny", "permissionDecisionReason": budget_feedback(2)}


async def test_calls_within_the_budget_are_left_to_the_policy_and_debited() -> None:
    calls = Calls()
    budget = calls.budget(2)
    assert await budget.pre_tool_use({"toolName": "view", "sessionId": "root"}, {}) is None
    assert await budget.pre_tool_use({"toolName": "bash", "sessionId": "sub"}, {}) is None
    assert calls.debits == [Debit("view", "root", 1, 2), Debit("bash", "sub", 2, 2)]
    assert not any(debit.exhausted for debit in calls.debits)
    assert calls.denied == calls.overruns == []


async def test_a_call_past_the_budget_is_denied_at_once_with_gh_aws_reason() -> None:
    calls = Calls()
    budget = calls.budget(2)
    for tool in ("view", "bash"):
        await budget.pre_tool_use({"toolName": tool}, {})
    assert await budget.pre_tool_use({"toolName": "edit"}, {}) == DENIAL
    assert calls.debits[-1] == Debit("edit", None, 3, 2)
    assert calls.debits[-1].exhausted
    assert calls.denied == [Debit("edit", None, 3, 2)]
    assert calls.overruns == [], "a soft stop: the turn goes on"


async def test_a_model_that_ignores_the_denials_is_stopped_once_and_not_asked_again() -> None:
    calls = Calls()
    budget = calls.budget(2, overrun_limit=3)
    for _ in range(4):  # 2 within the budget, 2 denied at once
        await budget.pre_tool_use({"toolName": "bash"}, {})
    withheld = asyncio.ensure_future(budget.pre_tool_use({"toolName": "bash"}, {}))
    later = asyncio.ensure_future(budget.pre_tool_use({"toolName": "view"}, {}))
    await asyncio.sleep(0.05)
    assert not withheld.done(), "no answer while the turn runs: the model is not asked again"
    assert calls.overruns == [Debit("bash", None, 5, 2)]
    budget.turn_stopped()
    assert await withheld == DENIAL
    assert await later == DENIAL
    assert len(calls.overruns) == 1, "tripped once"
    assert len(calls.denied) == 4


async def test_a_failure_in_a_callback_denies_and_never_raises() -> None:
    def explode(_: Debit) -> None:
        raise RuntimeError("boom")

    budget = ToolCallBudget(5, on_debit=explode, on_denied=explode, on_overrun=explode)
    answer = await budget.pre_tool_use({"toolName": "bash"}, {})
    assert answer["permissionDecision"] == "deny"


async def test_an_unreadable_hook_input_is_still_counted() -> None:
    calls = Calls()
    budget = calls.budget(1)
    await budget.pre_tool_use("not a mapping", {})  # type: ignore[arg-type]
    assert calls.debits == [Debit("a tool", None, 1, 1)]


async def test_a_withheld_call_is_denied_if_the_turn_never_stops() -> None:
    calls = Calls()
    budget = calls.budget(0, overrun_limit=1, withhold_timeout=0.05)
    answer = await budget.pre_tool_use({"toolName": "bash"}, {})
    assert answer["permissionDecision"] == "deny"
    assert len(calls.overruns) == 1


@given(limit=st.integers(1, 20), made=st.integers(0, 60))
def test_every_call_is_debited_and_only_those_past_the_budget_are_denied(
    limit: int, made: int
) -> None:
    calls = Calls()

    async def run() -> list[object]:
        budget = calls.budget(limit, withhold_timeout=0)
        return [await budget.pre_tool_use({"toolName": "t"}, {}) for _ in range(made)]

    answers = asyncio.run(run())
    assert [debit.count for debit in calls.debits] == list(range(1, made + 1))
    assert answers.count(None) == min(made, limit)
    assert len(calls.denied) == max(0, made - limit)
    assert len(calls.overruns) == (1 if made - limit >= OVERRUN_LIMIT else 0)


def test_the_feedback_tells_the_model_to_stop_using_tools() -> None:
    assert budget_feedback(3) == (
        "The workflow aggregate tool-call budget is exhausted (3 calls). This tool was not "
        "executed; stop using tools and provide the best result from completed work."
    )
