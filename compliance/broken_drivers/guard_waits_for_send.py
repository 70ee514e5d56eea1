"""Broken: the denials guard records its event but the run waits for send_and_wait
(breaks T-CSD-114 and 115).

Spec 1.0.3 4.5: reaching the threshold MUST stop inference and settle the run
independently of the in-flight SDK request. Here the guard's decision is sent
like any other and the turn goes on until it ends by itself or times out. (A
sidecar that stops answering is still noticed by the driver's own watchdog,
which ends the run within the budget: T-CSD-116 holds.)
"""

from _wrap import run_real_driver_in_process

from copilot_driver.driver import stop as driver
from copilot_driver.permissions import handler

_stop_for = driver.StopRequests.stop_for


def stop_for(self: driver.StopRequests, reason: driver.StopRequestedError) -> None:
    if not isinstance(reason, driver.ToolDenialsExceededError):
        _stop_for(self, reason)


driver.StopRequests.stop_for = stop_for  # type: ignore[method-assign]
_record = handler.DenialGuard.record
handler.DenialGuard.record = lambda self: _record(self) and False  # type: ignore[method-assign]
run_real_driver_in_process()
