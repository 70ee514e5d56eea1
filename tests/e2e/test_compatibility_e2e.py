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

import asyncio
import importlib.metadata
import statistics
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.compatibility import (
    COMPATIBILITY_EVENT,
    TESTED_CLI_VERSIONS,
    TESTED_SDK_VERSIONS,
    untested_versions,
)
from copilot_driver.driver.config import load_config
from copilot_driver.driver.connection import create_client
from copilot_driver.testing import ScriptedModelServer, TestSidecar, driver_environment
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


def _at(entry: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))


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
    # Asked for beside the session, logged once it exists, before the prompt: no wait.
    events = [entry["event"] for entry in run.log_entries]
    assert events.index("session.created") + 1 == events.index(COMPATIBILITY_EVENT)
    assert events.index(COMPATIBILITY_EVENT) < events.index("prompt.dispatched")
    (created,) = run.entries("session.created")
    assert (_at(warning) - _at(created)).total_seconds() < 0.1
    assert run.result()["exitCode"] == 0


async def test_reading_the_cli_version_costs_well_under_10_ms(
    copilot_sidecar: TestSidecar, scripted_model: ScriptedModelServer, tmp_path: Path
) -> None:
    """The most the check could add to a run (it overlaps session creation): one
    `status.get` round trip and the decision."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text("say hello")
    env = driver_environment(
        prompt_file=prompt,
        sdk_uri=copilot_sidecar.uri,
        token=copilot_sidecar.token,
        model_base_url=scripted_model.base_url,
        state_dir=tmp_path / "state",
    )
    client = create_client(load_config(env, cwd=tmp_path))
    await client.start()
    costs = []
    try:
        for _ in range(20):
            started = time.perf_counter()
            status = await client.get_status()
            untested_versions(status.version, SDK_VERSION)
            costs.append(time.perf_counter() - started)
    finally:
        await asyncio.wait_for(client.stop(), 10)

    assert status.version in TESTED_CLI_VERSIONS
    assert statistics.median(costs) < 0.010, f"{[round(c * 1000, 2) for c in costs]} ms"
