"""A short soak in every test run (`make reliability` does the 200-run one).

Consecutive driver runs against one sidecar, cycling through a plain turn,
an allowed tool and a denied tool: none may fail, and the sidecar may hold
no more file descriptors at the end than after the first run (which opens
its session store).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.e2e

RELIABILITY = Path(__file__).parents[2] / "benchmarks" / "reliability.py"
RUNS = 12
"""Four of each kind of turn: enough for a per-session leak to show."""


def _reliability() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reliability", RELIABILITY)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reliability"] = module
    spec.loader.exec_module(module)
    return module


def test_consecutive_runs_against_one_sidecar_all_succeed_and_leak_no_fd(
    copilot_cli: Path, tmp_path: Path
) -> None:
    report = _reliability().soak(RUNS, tmp_path).as_dict()
    assert report["runs"] == RUNS
    assert report["failures"] == 0, report["failureTails"]
    assert report["sidecarFds"]["leftOpen"] <= 0, report["sidecarFds"]
    # No memory figure here: a child's peak RSS (wait4) starts from its
    # parent's at the fork, and this test process holds hundreds of MB.
    # `make reliability` reports it from a small process.
