"""Faults under the harness (`python -m copilot_driver.harness`), which starts
the real sidecar and then the driver: every run ends by itself within a
bound, with the documented harness exit status, the driver's error kept in
its output, a valid events file, no secret (the harness's own per-run token
included, read from the sidecar's /proc environ) and no process left behind
(the test process is a child subreaper, so orphans of the harness's children
would be re-parented to it and seen).

Cases, and the bound each must meet:

- the sidecar binary missing (`COPILOT_CLI_PATH` names nothing): exit 2, one
  error line, nothing started, within `START_FAILURE_BOUND_S` of the start.
- the sidecar exiting at start (`COPILOT_CLI_PATH` names a script that
  exits 1): exit 4 with its
  output quoted, within `START_FAILURE_BOUND_S`.
- the sidecar never becoming ready, and ignoring SIGTERM: exit 4 after
  `--ready-timeout`, the script SIGKILLed, within `NEVER_READY_BOUND_S`.
- the sidecar killed mid-turn: the driver notices (`sidecar_lost`, exit 1),
  the harness exits 5 naming the driver's status, within
  `SIDECAR_LOST_BOUND_S` of the kill.
- the sidecar frozen mid-turn: the driver notices (exit 1, which the harness
  returns: the sidecar did not exit), the frozen sidecar is stopped, within
  `SIDECAR_FROZEN_BOUND_S` of the freeze.
- SIGTERM to the harness mid-turn: forwarded to the driver, which aborts the
  turn and exits 143; harness, driver and sidecar all gone within
  `STOP_BOUND_S` of the signal.
- SIGKILL to the harness mid-turn: driver and sidecar die with it
  (PR_SET_PDEATHSIG), checked by the orphan watch.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from copilot_driver.driver.lifecycle import (
    ABORT_TIMEOUT_S,
    DISCONNECT_TIMEOUT_S,
    EVENTS_CLOSE_TIMEOUT_S,
    STOP_TIMEOUT_S,
)
from copilot_driver.harness.driver_process import SIDECAR_DEATH_GRACE_S
from copilot_driver.harness.run import SIDECAR_STOP_GRACE_S
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, harness_environment
from copilot_driver.testing.faults import BoundedProcess, Ended, FaultCase, check_events_file
from copilot_driver.testing.fixtures import parse_log

pytestmark = pytest.mark.e2e

HARNESS_PREFIX = "[copilot-driver-harness] error: "
NOTICE_BOUND_S = 5.0
"""The issue's bound for noticing a lost or frozen sidecar."""
START_FAILURE_BOUND_S = 10.0
"""No sidecar to wait for: interpreter start-up on a loaded 2-CPU machine."""
READY_TIMEOUT_S = 2.0
SIDECAR_START_STOP_GRACE_S = 2.0
"""`Sidecar.start` gives a sidecar that failed to start this long after SIGTERM."""
NEVER_READY_BOUND_S = READY_TIMEOUT_S + SIDECAR_START_STOP_GRACE_S + START_FAILURE_BOUND_S
SIDECAR_LOST_BOUND_S = NOTICE_BOUND_S + 3.0
"""The driver notices within 5 s (else the harness stops it after
SIDECAR_DEATH_GRACE_S); then the harness reaps the dead sidecar's group and
moves its log: 3 s for that on a loaded machine."""
SIDECAR_FROZEN_BOUND_S = NOTICE_BOUND_S + SIDECAR_STOP_GRACE_S + 3.0
"""The driver notices within 5 s; a stopped sidecar cannot act on SIGTERM, so
the harness waits its SIDECAR_STOP_GRACE_S before SIGKILL."""
STOP_BOUND_S = (
    ABORT_TIMEOUT_S
    + DISCONNECT_TIMEOUT_S
    + EVENTS_CLOSE_TIMEOUT_S
    + STOP_TIMEOUT_S
    + SIDECAR_STOP_GRACE_S
    + 2.0
)
"""The driver's bounded cleanup steps, then the sidecar's stop grace."""
assert SIDECAR_DEATH_GRACE_S <= NOTICE_BOUND_S


class HarnessRun:
    """A hermetic environment for the harness on the real CLI and the scripted model."""

    def __init__(self, tmp: Path, model: ScriptedModelServer, cli: Path, cache: Path) -> None:
        self.tmp = tmp
        self.cli = cli
        self.state = tmp / "state"
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        self.prompt = tmp / "prompt.md"
        self.prompt.write_text("HANG until something breaks\n")
        self.env = harness_environment(
            tmp / "home",
            model_base_url=model.base_url,
            prompt_file=self.prompt,
            workspace=self.workspace,
            state_dir=self.state,
            cache_home=cache,
            CI="true",
        )

    def command(self, *args: str, copilot: Path | None = None) -> list[str]:
        named = ["--copilot", str(copilot or self.cli)]
        return [sys.executable, "-m", "copilot_driver.harness", *named, *args]

    def fake_sidecar(self, body: str) -> Path:
        path = self.tmp / "fake-copilot"
        path.write_text(f"#!{sys.executable}\nimport signal, sys, time\n{textwrap.dedent(body)}\n")
        path.chmod(0o755)
        return path


@pytest.fixture
def harness(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> HarnessRun:
    scripted_model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    return HarnessRun(tmp_path, scripted_model, copilot_cli, copilot_cache_home)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _wait_until(condition: Callable[[], object], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _start_mid_turn(
    fault: FaultCase, harness: HarnessRun, model: ScriptedModelServer
) -> tuple[BoundedProcess, int]:
    """The harness with a turn in flight; returns it and the Copilot CLI's pid (in
    the sandbox, below bubblewrap and its helper).

    The harness's per-run token (read from the CLI's environment) joins the
    secrets every file and output is scanned for.
    """
    process = fault.start(harness.env, command=harness.command())
    _wait_until(model.chat_requests, "the turn to reach the model")
    sidecars = [pid for pid in _children(process.pid) if "--headless" in _cmdline(pid)]
    assert len(sidecars) == 1, [_cmdline(pid) for pid in _children(process.pid)]
    while below := [pid for pid in _children(sidecars[0]) if "--headless" in _cmdline(pid)]:
        sidecars = below
    fault.secrets.append(_environ(sidecars[0])["COPILOT_CONNECTION_TOKEN"])
    return process, sidecars[0]


def _harness_errors(ended: Ended) -> list[str]:
    return [line for line in ended.stderr.splitlines() if line.startswith(HARNESS_PREFIX)]


def _driver_error_echoed(ended: Ended) -> list[str]:
    """What the harness adds when the driver failed: the driver's own error, once (its
    fix follows on a line of its own)."""
    (error,) = [e for e in parse_log(ended.stderr) if e["event"] == "error"]
    return [f"{HARNESS_PREFIX}{error['message']}"]


def _events(harness: HarnessRun) -> list[dict[str, object]]:
    (events_file,) = harness.state.glob("*/events.jsonl")
    assert (events_file.parent / "sidecar.log").is_file(), "the sidecar log is not kept"
    return check_events_file(events_file)


# -- the sidecar cannot start ---------------------------------------------------------


def test_a_missing_sidecar_binary_is_a_usage_error(fault: FaultCase, harness: HarnessRun) -> None:
    missing = harness.tmp / "no-such-copilot"
    command = [sys.executable, "-m", "copilot_driver.harness"]

    ended = fault.run(
        {**harness.env, "COPILOT_CLI_PATH": str(missing)},
        bound_s=START_FAILURE_BOUND_S,
        command=command,
    )

    assert ended.exit_code == 2, ended.stderr
    (error,) = _harness_errors(ended)
    assert f"COPILOT_CLI_PATH={missing} does not exist: " in error
    assert ended.stderr.strip() == error
    assert ended.stdout == ""
    assert not harness.state.exists()  # nothing was started or written
    fault.check_clean(ended)


def test_a_sidecar_that_exits_at_start_fails_with_its_output(
    fault: FaultCase, harness: HarnessRun
) -> None:
    """Named by COPILOT_CLI_PATH, the way a workflow points at its CLI."""
    fake = harness.fake_sidecar('print("fatal: cannot bind", file=sys.stderr)\nsys.exit(1)')
    command = [sys.executable, "-m", "copilot_driver.harness"]

    ended = fault.run(
        {**harness.env, "COPILOT_CLI_PATH": str(fake)},
        bound_s=START_FAILURE_BOUND_S,
        command=command,
    )

    assert ended.exit_code == 4, ended.stderr
    (error,) = _harness_errors(ended)
    assert "the Copilot CLI sidecar could not start" in error
    assert "exited with status 1 before listening" in error
    assert "fatal: cannot bind" in ended.stderr  # its output is quoted
    # The driver, started beside the sidecar, never connected: it gave up when told.
    entries = parse_log(ended.stderr)
    assert not [e for e in entries if e["event"] in ("client.started", "session.created")]
    assert [e["errorKind"] for e in entries if e["event"] == "error"] == ["sidecar_unreachable"]
    fault.check_clean(ended)


def test_a_sidecar_that_never_becomes_ready_and_ignores_sigterm_is_killed(
    fault: FaultCase, harness: HarnessRun
) -> None:
    fake = harness.fake_sidecar(
        """
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("warming up forever", flush=True)
        time.sleep(600)
        """
    )
    command = harness.command("--ready-timeout", f"{READY_TIMEOUT_S:g}", copilot=fake)

    ended = fault.run(harness.env, bound_s=NEVER_READY_BOUND_S, command=command)

    assert ended.exit_code == 4, ended.stderr
    (error,) = _harness_errors(ended)
    assert f"did not listen within {READY_TIMEOUT_S:g}s" in error
    assert "warming up forever" in ended.stderr
    assert ended.seconds >= READY_TIMEOUT_S
    fault.check_clean(ended)  # the script was SIGKILLed: nothing left


# -- the sidecar fails mid-turn ------------------------------------------------------------


def test_a_sidecar_killed_mid_turn_under_the_harness(
    fault: FaultCase, harness: HarnessRun, scripted_model: ScriptedModelServer
) -> None:
    process, sidecar = _start_mid_turn(fault, harness, scripted_model)
    os.kill(sidecar, signal.SIGKILL)
    process.mark_fault()

    ended = process.end(bound_s=SIDECAR_LOST_BOUND_S)

    # The driver noticed by itself (its own summary, not the harness's SIGTERM)...
    fault.check(ended, exit_code=5, error_kind="sidecar_lost", mentions=["127.0.0.1:"])
    assert parse_log(ended.stderr)[-1]["exitCode"] == 1
    # ...and the harness says what happened, with the driver's status.
    (error,) = _harness_errors(ended)
    assert f"sidecar exited with status {-signal.SIGKILL}" in error
    assert "driver exit status 1" in error
    assert any(record["type"] == "user.message" for record in _events(harness))


def test_a_sidecar_frozen_mid_turn_under_the_harness(
    fault: FaultCase, harness: HarnessRun, scripted_model: ScriptedModelServer
) -> None:
    process, sidecar = _start_mid_turn(fault, harness, scripted_model)
    os.kill(sidecar, signal.SIGSTOP)
    process.mark_fault()
    try:
        ended = process.end(bound_s=SIDECAR_FROZEN_BOUND_S)
    finally:
        if Path(f"/proc/{sidecar}").exists():
            os.kill(sidecar, signal.SIGCONT)

    # The sidecar did not exit: the harness returns the driver's status.
    fault.check(ended, exit_code=1, error_kind="sidecar_lost", mentions=["127.0.0.1:"])
    assert _harness_errors(ended) == _driver_error_echoed(ended)
    assert any(record["type"] == "user.message" for record in _events(harness))


# -- the harness is stopped mid-turn ----------------------------------------------------------


def test_sigterm_to_the_harness_mid_turn_stops_everything(
    fault: FaultCase, harness: HarnessRun, scripted_model: ScriptedModelServer
) -> None:
    process, _ = _start_mid_turn(fault, harness, scripted_model)
    process.send(signal.SIGTERM)

    ended = process.end(bound_s=STOP_BOUND_S)

    # The driver's own status (128 + SIGTERM) after its own cleanup.
    fault.check(ended, exit_code=128 + signal.SIGTERM, error_kind="interrupted")
    assert _harness_errors(ended) == _driver_error_echoed(ended)
    types = [record["type"] for record in _events(harness)]
    assert "user.message" in types
    assert "abort" in types  # the driver aborted the turn before it disconnected


def test_sigkill_to_the_harness_mid_turn_leaves_nothing_behind(
    fault: FaultCase, harness: HarnessRun, scripted_model: ScriptedModelServer
) -> None:
    process, sidecar = _start_mid_turn(fault, harness, scripted_model)
    children = _children(process.pid)
    assert len(children) == 2, [_cmdline(pid) for pid in children]  # sidecar and driver
    process.send(signal.SIGKILL)

    ended = process.end(bound_s=START_FAILURE_BOUND_S)

    assert ended.exit_code == -signal.SIGKILL
    # Driver and sidecar were re-parented to this test (the subreaper) if they
    # survived; the orphan watch fails the case if they are still running.
    fault.check_clean(ended)
    assert not Path(f"/proc/{sidecar}/cmdline").exists() or not _cmdline(sidecar)
