"""The exit statuses every command documents."""

from __future__ import annotations

import signal

from copilot_driver.exit_codes import AdapterExitCode, ExitCode, for_signal, from_returncode


def test_exit_code_values() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "FAILURE": 1,
        "CONFIG": 2,
        "TOOL_DENIALS": 3,
        "START_FAILED": 4,
        "SIDECAR_DIED": 5,
        "TOOL_CALL_BUDGET": 6,
        "SEND_TIMEOUT": 124,
    }


def test_the_adapters_share_the_common_codes() -> None:
    assert {code.name: int(code) for code in AdapterExitCode} == {
        "OK": int(ExitCode.OK),
        "TURN_FAILED": int(ExitCode.FAILURE),
        "USAGE": int(ExitCode.CONFIG),
        "START_FAILED": int(ExitCode.START_FAILED),
        "TIMEOUT": int(ExitCode.SEND_TIMEOUT),
    }


def test_exit_code_for_signal() -> None:
    assert for_signal(15) == 143
    assert for_signal(signal.SIGTERM) == 143
    assert for_signal(signal.SIGINT) == 130


def test_a_child_killed_by_a_signal_reports_128_plus_n() -> None:
    assert from_returncode(-signal.SIGKILL) == 137
    assert from_returncode(0) == 0
    assert from_returncode(3) == 3


def test_no_code_of_ours_means_something_else_to_gh_aws_harness() -> None:
    """gh-aw's harness reads 78 as a model-routing failure (terminal, under
    GH_AW_MODEL_ROUTING=1) and 128+N as a death by signal N (a crash signal is retried
    fresh): our own codes are none of these, so a run is never misjudged by its code.
    (../shared/notes/gh-aw-engine-driver.md, "Exit codes it distinguishes".)"""
    ours = {int(code) for code in ExitCode}
    assert 78 not in ours
    assert not {code for code in ours if 128 < code <= 128 + 64}
