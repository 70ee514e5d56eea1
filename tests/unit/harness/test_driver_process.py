"""The driver process: started with its environment, its output read, waited for."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from types import SimpleNamespace
from typing import cast

import pytest

from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness import driver_process
from copilot_driver.harness.driver_process import (
    DriverProcess,
    DriverStartError,
    cause_of_failure,
    kind_of_exit,
)
from copilot_driver.harness.sidecar import Sidecar
from copilot_driver.vocabulary import HarnessErrorKind

TOKEN = "f3c1a9e07b2d4c6e8a0b1c2d3e4f5a6b"
URI = "http://127.0.0.1:4321"


def live_sidecar() -> Sidecar:
    """Only what `wait` reads of a sidecar: a process that has not exited."""
    return cast(Sidecar, SimpleNamespace(process=SimpleNamespace(poll=lambda: None)))


def start(script: str, lines: list[str], **env: str) -> DriverProcess:
    return DriverProcess.start(
        [sys.executable, "-c", textwrap.dedent(script)],
        env={"PATH": os.environ.get("PATH", ""), "GITHUB_TOKEN": "ghs_secret", **env},
        sdk_uri=URI,
        token=TOKEN,
        on_log_line=lines.append,
    )


def test_the_log_is_handed_on_by_line_and_the_answer_kept_whole() -> None:
    lines: list[str] = []
    driver = start(
        """
        import os, sys
        print("first", file=sys.stderr)
        print("second", file=sys.stderr)
        sys.stdout.write("the answer\\n")
        sys.exit(3)
        """,
        lines,
    )
    code, sidecar_died = driver.wait(live_sidecar(), lambda: None)
    assert (code, sidecar_died) == (3, False)
    assert lines == ["first\n", "second\n"]
    assert driver.output == "the answer\n"
    assert driver.ended()


def test_the_driver_gets_the_sidecar_and_the_token_but_no_github_credential() -> None:
    lines: list[str] = []
    driver = start(
        """
        import os, sys
        for name in ("COPILOT_SDK_URI", "COPILOT_CONNECTION_TOKEN", "GITHUB_TOKEN"):
            print(f"{name}={os.environ.get(name)}", file=sys.stderr)
        """,
        lines,
    )
    driver.wait(live_sidecar(), lambda: None)
    assert lines == [
        f"COPILOT_SDK_URI={URI}\n",
        f"COPILOT_CONNECTION_TOKEN={TOKEN}\n",
        "GITHUB_TOKEN=None\n",
    ]


def test_a_stop_signal_is_forwarded_and_its_status_is_the_shells() -> None:
    lines: list[str] = []
    driver = start(
        """
        import sys, time
        print("up", file=sys.stderr, flush=True)
        time.sleep(60)
        """,
        lines,
    )
    code, _ = driver.wait(live_sidecar(), lambda: signal.SIGTERM if lines else None)
    assert code == 128 + signal.SIGTERM
    assert lines == ["up\n"]


def test_a_driver_that_outlives_its_sidecar_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_process, "SIDECAR_DEATH_GRACE_S", 0.1)
    driver = start("import time; time.sleep(60)", [])
    dead = cast(Sidecar, SimpleNamespace(process=SimpleNamespace(poll=lambda: 1)))
    code, sidecar_died = driver.wait(dead, lambda: None)
    assert (code, sidecar_died) == (128 + signal.SIGTERM, True)


def test_a_driver_whose_sidecar_never_started_is_abandoned() -> None:
    read_end, write_end = os.pipe()
    lines: list[str] = []
    try:
        driver = DriverProcess.start(
            [sys.executable, "-c", "import os, sys; os.read(int(sys.argv[1]), 1)", str(read_end)],
            env={"PATH": os.environ.get("PATH", "")},
            sdk_uri=URI,
            token=TOKEN,
            on_log_line=lines.append,
            ready_fd=read_end,
        )
    finally:
        os.close(read_end)
    os.close(write_end)  # end of file: the driver gives up
    driver.abandon()
    assert driver.process.returncode == 0


def test_a_command_that_cannot_run_is_said() -> None:
    with pytest.raises(DriverStartError, match=r"^cannot start the driver /nonexistent/driver: "):
        DriverProcess.start(
            ["/nonexistent/driver"], env={}, sdk_uri=URI, token=TOKEN, on_log_line=print
        )


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (ExitCode.OK, None),
        (ExitCode.CONFIG, HarnessErrorKind.CONFIG),
        (1, HarnessErrorKind.DRIVER_FAILED),
    ],
)
def test_the_kind_of_an_exit_the_driver_did_not_name(code: int, kind: str | None) -> None:
    assert kind_of_exit(code) == kind


def test_the_cause_is_the_last_error_or_every_configuration_refusal() -> None:
    errors = ["one", "two"]
    assert cause_of_failure(1, errors) == "two"
    assert cause_of_failure(ExitCode.CONFIG, errors) == "one\ntwo"
    assert cause_of_failure(ExitCode.OK, errors) is None
    assert cause_of_failure(1, []) is None
