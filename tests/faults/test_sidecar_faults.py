"""The sidecar failing under a running driver: the driver must notice by itself.

Whatever the send timeout (the default 10 minutes here), a sidecar that dies
or freezes mid-turn ends the run within seconds: exit 1, one error line
naming the sidecar, the events written before the fault kept and valid.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar
from copilot_driver.testing.faults import BoundedProcess, FaultCase
from copilot_driver.testing.fixtures import DriverRunner

pytestmark = pytest.mark.e2e

NOTICE_BOUND_S = 5.0
"""The issue's bound for noticing a lost sidecar."""
RUN_BOUND_S = 20.0
"""Noticing, plus start-up and the bounded cleanup steps."""


def _start_slow_turn(
    fault: FaultCase, driver: DriverRunner, model: ScriptedModelServer
) -> BoundedProcess:
    model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    return fault.start(driver.environment("HANG until the sidecar goes away"))


def _wait_for_the_model_call(model: ScriptedModelServer, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not model.chat_requests():
        assert time.monotonic() < deadline, "the turn never reached the model"
        time.sleep(0.05)


def _check_outcome(
    fault: FaultCase, process: BoundedProcess, sidecar: TestSidecar, state_dir: Path
) -> None:
    ended = process.end(bound_s=RUN_BOUND_S)
    assert ended.seconds < NOTICE_BOUND_S, f"took {ended.seconds:.1f}s after the fault"
    fault.secrets.append(sidecar.token)
    events = fault.check(
        ended,
        exit_code=1,
        error_kind="sidecar_lost",
        mentions=[sidecar.uri.split("://")[-1]],
        state_dir=state_dir,
    )
    # Every event written before the fault is there.
    assert any(record["type"] == "user.message" for record in events)


def test_a_sidecar_killed_mid_turn_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    process = _start_slow_turn(fault, driver, scripted_model)
    _wait_for_the_model_call(scripted_model)
    os.kill(copilot_sidecar.process.process.pid, signal.SIGKILL)
    process.mark_fault()
    _check_outcome(fault, process, copilot_sidecar, driver.tmp_path / "state")


def test_a_frozen_sidecar_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    pid = copilot_sidecar.process.process.pid
    process = _start_slow_turn(fault, driver, scripted_model)
    try:
        _wait_for_the_model_call(scripted_model)
        os.kill(pid, signal.SIGSTOP)
        process.mark_fault()
        _check_outcome(fault, process, copilot_sidecar, driver.tmp_path / "state")
    finally:
        os.kill(pid, signal.SIGCONT)
