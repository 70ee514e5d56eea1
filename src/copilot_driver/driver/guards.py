"""The run's guards on tool use: what each one records and when it stops the run.

The tool-denials guard (GH_AW_MAX_TOOL_DENIALS) and the tool contract's
tool-call budget (`maxToolCalls`) decide inside the permission handler and
the pre-tool-use hook; here their decisions become records in the events
file, log entries and stop requests. A guard's record is written the moment
it trips (spec 4.5: preserved whatever the cleanup meets), before the stop.
"""

from __future__ import annotations

from copilot_driver.driver.config import DriverConfig
from copilot_driver.driver.sink import EventsSink
from copilot_driver.driver.stop import (
    StopRequests,
    ToolCallBudgetExceededError,
    ToolDenialsExceededError,
)
from copilot_driver.logs import DriverLog
from copilot_driver.permissions.budget import Debit, ToolCallBudget
from copilot_driver.permissions.handler import DecisionsInFlight, DenialGuard
from copilot_driver.records import (
    budget_debit_record,
    budget_record,
    denial_record,
    guard_record,
)
from copilot_driver.vocabulary import Denial, LogEvent


class ToolGuards:
    """The denials guard, the tool-call budget (None without a limit) and the
    permission decisions still on their way to the runtime."""

    def __init__(
        self, config: DriverConfig, sink: EventsSink, stop: StopRequests, log: DriverLog
    ) -> None:
        self.sink = sink
        self.stop = stop
        self.log = log
        self.decisions = DecisionsInFlight()
        self.denials = DenialGuard(config.max_tool_denials, self._guard_tripped)
        limit = config.tool_contract.max_tool_calls if config.tool_contract else None
        self.budget = (
            ToolCallBudget(
                limit,
                on_debit=self._budget_debit,
                on_denied=self._budget_denied,
                on_overrun=self._budget_overrun,
            )
            if limit
            else None
        )

    def turn_stopped(self) -> None:
        """The turn is over: requests the guards withheld end now."""
        self.denials.turn_stopped()
        if self.budget is not None:
            self.budget.turn_stopped()

    def record_denial(self, denial: Denial) -> None:
        """The policy's reason and the allowing rule, beside the runtime's events."""
        self.sink.write_record(denial_record(denial))

    def _guard_tripped(self, count: int, threshold: int) -> None:
        """The denial that reached the threshold was just logged: record the guard's
        event at once, then stop."""
        stop = ToolDenialsExceededError(count, threshold)
        self.sink.write_record(guard_record(count, threshold, stop.explanation))
        self.stop.stop_for(stop)

    def _budget_debit(self, debit: Debit) -> None:
        self.sink.write_record(
            budget_debit_record(debit.tool, debit.session_id, debit.count, debit.limit)
        )

    def _budget_denied(self, debit: Debit) -> None:
        self.log.warning(
            LogEvent.TOOL_CALL_BUDGET_DENIED,
            f"permission denied by the tool-call budget: {debit.tool} (call {debit.count}, "
            f"budget {debit.limit}); the model is told to answer without tools",
            toolName=debit.tool,
            callCount=debit.count,
            maxToolCalls=debit.limit,
        )

    def _budget_overrun(self, debit: Debit) -> None:
        """The model ignored the budget's denials: record it at once, then stop."""
        stop = ToolCallBudgetExceededError(debit.tool, debit.count, debit.limit)
        self.log.warning(
            LogEvent.TOOL_CALL_BUDGET_EXCEEDED,
            str(stop),
            toolName=debit.tool,
            maxToolCalls=debit.limit,
        )
        self.sink.write_record(
            budget_record(debit.tool, debit.session_id, debit.count, debit.limit, stop.explanation)
        )
        self.stop.stop_for(stop)
