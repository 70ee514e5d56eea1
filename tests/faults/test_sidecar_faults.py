"""The sidecar failing under a running driver: the driver must notice by itself.

Whatever the send timeout (the default 10 minutes here), a sidecar that dies
or freezes mid-turn ends the run within seconds: exit 1, one error line
naming the sidecar, the events written before the fault kept and valid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar
from copilot_driver.testing.fixtures import DriverRunner, parse_log

pytestmark = pytest.mark.e2e

NOTICE_BOUND_S = 5.0
"""The issue's bound for noticing a lost sidecar."""
RUN_BOUND_S = 20.0
"""Noticing, plus start-up and the bounded cleanup steps."""


def _start_slow_turn(driver: DriverRunner, model: ScriptedModelServer) -> subprocess.Popen[str]:
    model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    env = driver.environment("HANG until the sidecar goes away")
    return subprocess.Popen(
        [sys.executable, "-m", "copilot_driver"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_the_model_call(model: ScriptedModelServer, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not model.chat_requests():
        assert time.monotonic() < deadline, "the turn never reached the model"
        time.sleep(0.05)


def _check_outcome(
    process: subprocess.Popen[str], fault_at: float, sidecar: TestSidecar, state_dir: Path
) -> None:
    stdout, stderr = process.communicate(timeout=RUN_BOUND_S)
    ended = time.monotonic() - fault_at
    assert process.returncode == 1, stderr
    errors = [e for e in parse_log(stderr) if e.get("level") == "error"]
    assert len(errors) == 1, stderr
    assert errors[0]["errorKind"] == "sidecar_lost"
    assert sidecar.uri.split("://")[-1] in errors[0]["message"]
    assert ended < NOTICE_BOUND_S, f"took {ended:.1f}s after the fault"
    # Every event written before the fault is there, and the file is valid to its end.
    (events_file,) = state_dir.rglob("events.jsonl")
    lines = events_file.read_text().splitlines()
    assert lines
    records = [json.loads(line) for line in lines]
    assert any(r["type"] == "user.message" for r in records)
    assert sidecar.token not in stdout + stderr + events_file.read_text()


def test_a_sidecar_killed_mid_turn_is_noticed_within_seconds(
    driver: DriverRunner, copilot_sidecar: TestSidecar, scripted_model: ScriptedModelServer
) -> None:
    process = _start_slow_turn(driver, scripted_model)
    try:
        _wait_for_the_model_call(scripted_model)
        os.kill(copilot_sidecar.process.process.pid, signal.SIGKILL)
        fault_at = time.monotonic()
        _check_outcome(process, fault_at, copilot_sidecar, driver.tmp_path / "state")
    finally:
        process.kill()
        process.wait()


def test_a_frozen_sidecar_is_noticed_within_seconds(
    driver: DriverRunner, copilot_sidecar: TestSidecar, scripted_model: ScriptedModelServer
) -> None:
    pid = copilot_sidecar.process.process.pid
    process = _start_slow_turn(driver, scripted_model)
    try:
        _wait_for_the_model_call(scripted_model)
        os.kill(pid, signal.SIGSTOP)
        fault_at = time.monotonic()
        _check_outcome(process, fault_at, copilot_sidecar, driver.tmp_path / "state")
    finally:
        os.kill(pid, signal.SIGCONT)
        process.kill()
        process.wait()
