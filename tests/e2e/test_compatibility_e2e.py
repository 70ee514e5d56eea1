"""The compatibility warning, on the real sidecar.

Once connected the driver reads the sidecar's Copilot CLI version (`status.get`,
sent beside `session.create`) and the installed SDK's; when either is not a tested
one it logs ONE `compatibility` warning once the session exists, and goes on.
With the pinned CLI and SDK there is none. The "untested" runs are the real
driver with a tested list patched: a wrapper script sets
`copilot_driver.compatibility.TESTED_*_VERSIONS`, then runs the driver module
(`runpy`), so nothing in the driver knows it is being tested.
"""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest

from copilot_driver.compatibility import (
    COMPATIBILITY_EVENT,
    TESTED_CLI_VERSIONS,
    TESTED_SDK_VERSIONS,
)
from copilot_driver.testing.fixtures import DriverRun, DriverRunner

pytestmark = pytest.mark.e2e

SDK_VERSION = importlib.metadata.version("github-copilot-sdk")
WRAPPER = textwrap.dedent(
    """
    import runpy, sys
    import copilot_driver.compatibility as compatibility
    for name, value in zip(("TESTED_CLI_VERSIONS", "TESTED_SDK_VERSIONS"), sys.argv[1:3]):
        if value != "-":
            setattr(compatibility, name, tuple(value.split(",")))
    del sys.argv[1:3]
    runpy.run_module("copilot_driver", run_name="__main__", alter_sys=True)
    """
)
NOT_THIS_ONE = "0.0.1"


def _run_patched(driver: DriverRunner, tmp_path: Path, cli: str, sdk: str) -> DriverRun:
    """The driver with TESTED_CLI_VERSIONS / TESTED_SDK_VERSIONS replaced ("-": kept)."""
    wrapper = tmp_path / "patched_driver.py"
    wrapper.write_text(WRAPPER)
    driver.command = [sys.executable, str(wrapper), cli, sdk]
    return driver.run("say hello")


def _cli_version_of(run: DriverRun) -> str:
    """What the sidecar itself says it is: `session.start`'s copilotVersion."""
    (start,) = [event for event in run.events() if event["type"] == "session.start"]
    version: str = start["data"]["copilotVersion"]
    return version


def test_no_warning_with_the_tested_cli_and_sdk(driver: DriverRunner) -> None:
    run = driver.run("say hello")

    assert run.exit_code == 0, run.stderr
    assert _cli_version_of(run) in TESTED_CLI_VERSIONS
    assert SDK_VERSION in TESTED_SDK_VERSIONS
    assert run.entries(COMPATIBILITY_EVENT) == []
    assert "compatibility" not in run.stderr


@pytest.mark.parametrize(
    ("cli", "sdk", "untested"),
    [
        pytest.param(NOT_THIS_ONE, "-", "Copilot CLI", id="cli"),
        pytest.param("-", NOT_THIS_ONE, "github-copilot-sdk", id="sdk"),
        pytest.param(NOT_THIS_ONE, NOT_THIS_ONE, "both", id="both"),
    ],
)
def test_an_untested_version_is_one_warning_and_the_run_goes_on(
    driver: DriverRunner, tmp_path: Path, cli: str, sdk: str, untested: str
) -> None:
    run = _run_patched(driver, tmp_path, cli, sdk)

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Hello from the scripted model.\n"
    (warning,) = run.entries(COMPATIBILITY_EVENT)
    assert warning["level"] == "warning"
    assert warning["cliVersion"] == _cli_version_of(run)
    assert warning["sdkVersion"] == SDK_VERSION
    tested_cli = [NOT_THIS_ONE] if cli != "-" else list(TESTED_CLI_VERSIONS)
    tested_sdk = [NOT_THIS_ONE] if sdk != "-" else list(TESTED_SDK_VERSIONS)
    assert warning["testedCliVersions"] == tested_cli
    assert warning["testedSdkVersions"] == tested_sdk
    for part in ("Copilot CLI", "github-copilot-sdk"):
        assert (part in warning["message"]) == (untested in (part, "both"))
    assert warning["message"].endswith("the run goes on")
    # Asked for beside the session, logged once it exists, before the prompt (what it
    # costs is measured by `make bench`).
    events = [entry["event"] for entry in run.log_entries]
    assert events.index("session.created") + 1 == events.index(COMPATIBILITY_EVENT)
    assert events.index(COMPATIBILITY_EVENT) < events.index("prompt.dispatched")
    assert run.result()["exitCode"] == 0
