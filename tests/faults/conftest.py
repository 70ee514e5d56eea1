"""The fault suite's shared checks: every case ends bounded, clear, complete and clean.

`fault` is the fixture every case uses:

    proc = fault.start(env)          # the driver (or any command), planted tokens added
    ...inject the fault...; proc.mark_fault()
    ended = proc.end(bound_s=10)     # HungError if it outlives the bound
    fault.check(ended, exit_code=1, error_kind="sidecar_lost", state_dir=...)

`check` proves the documented exit code, one clear error line, a valid
events file, no secret (connection token, provider key, planted platform
tokens) in stdout, stderr or any file under the test's folder, and no process
left behind (the test process is a child subreaper while the suite runs).

Set COPILOT_DRIVER_FAULTS_REPORT to a path to get the suite's figures as
JSON (`make reliability` does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing.faults import TALLY, FaultCase, subreaper


@pytest.fixture(scope="session", autouse=True)
def _collect_orphans() -> Iterator[None]:
    with subreaper():
        yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not report.nodeid.startswith("tests/faults/") or report.when != "call":
        return
    TALLY.cases += 1
    if report.passed:
        TALLY.survived += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("COPILOT_DRIVER_FAULTS_REPORT")
    if target and TALLY.cases:
        Path(target).write_text(json.dumps(TALLY.as_dict(), indent=2) + "\n")


@pytest.fixture
def fault(tmp_path: Path) -> Iterator[FaultCase]:
    case = FaultCase(tmp_path)
    try:
        yield case
    finally:
        case.kill_all()
