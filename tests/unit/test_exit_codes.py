"""The exit statuses every command documents."""

from __future__ import annotations

import signal

from copilot_driver.exit_codes import AdapterExitCode, ExitCode, for_signal, from_returncode


def test_exit_code_values() -> None:
    assert ExitCode.OK == 0
    assert ExitCode.FAILURE == 1
    assert ExitCode.CONFIG == 2
    assert ExitCode.TOOL_DENIALS == 3
    assert ExitCode.SIDECAR_START_FAILED == 4
    assert ExitCode.SIDECAR_DIED == 5
    assert ExitCode.SEND_TIMEOUT == 124
    assert {int(code) for code in ExitCode} == {0, 1, 2, 3, 4, 5, 124}


def test_the_adapters_share_the_common_codes() -> None:
    assert {int(code) for code in AdapterExitCode} == {0, 1, 2, 3, 124}
    assert AdapterExitCode.TURN_FAILED == ExitCode.FAILURE
    assert AdapterExitCode.USAGE == ExitCode.CONFIG
    assert AdapterExitCode.TIMEOUT == ExitCode.SEND_TIMEOUT


def test_exit_code_for_signal() -> None:
    assert for_signal(15) == 143
    assert for_signal(signal.SIGTERM) == 143
    assert for_signal(signal.SIGINT) == 130


def test_a_child_killed_by_a_signal_reports_128_plus_n() -> None:
    assert from_returncode(-signal.SIGKILL) == 137
    assert from_returncode(0) == 0
    assert from_returncode(3) == 3
