"""The compliance kit's set-up: the driver under test, shared sidecars, the report.

pytest compliance                                # this project's driver
pytest compliance --driver "node /path/driver.cjs"
COMPLIANCE_DRIVER="..." pytest compliance
pytest compliance --report-dir .                 # writes compliance-report.{md,json}
"""

from __future__ import annotations

import re
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from copilot_driver.testing import ScriptedModelServer, TestSidecar
from copilot_driver.testing.environment import start_test_sidecar

sys.path.insert(0, str(Path(__file__).parent))

# pytest imports the kit's modules as top-level ones (the line above); mypy, which
# checks this folder with tests/ (whose conftest is also top-level), names them by path.
if TYPE_CHECKING:
    from compliance.driver_check import driver_command_from
    from compliance.kitlib import Kit, sidecar_home_with_mcp
    from compliance.report import ComplianceReport
    from pluggy import Result
else:
    from driver_check import driver_command_from
    from kitlib import Kit, sidecar_home_with_mcp
    from report import ComplianceReport

pytest_plugins = ["copilot_driver.testing.fixtures"]
_TEST_ID = re.compile(r"test_t_csd_(\d{3})")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("compliance")
    group.addoption("--driver", help="the driver command under test (default: this package's)")
    group.addoption("--report-dir", help="write compliance-report.md and .json here")


def pytest_configure(config: pytest.Config) -> None:
    # A driver that cannot start is the user's typing, not 30 failed requirements.
    try:
        command = driver_command_from(config.getoption("--driver"))
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_REPORT] = ComplianceReport(command)


_REPORT = pytest.StashKey[ComplianceReport]()


@pytest.fixture(scope="session")
def driver_command(pytestconfig: pytest.Config) -> list[str]:
    return pytestconfig.stash[_REPORT].driver_command


@pytest.fixture(scope="session")
def kit_model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture(scope="session")
def kit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compliance")


def _sidecar(
    kit_dir: Path, name: str, model: ScriptedModelServer, cli: Path, cache: Path, offline: str
) -> TestSidecar:
    workdir = kit_dir / name
    sidecar_home_with_mcp(workdir / "sidecar-home", sys.executable)
    return start_test_sidecar(
        workdir,
        model_base_url=model.base_url,
        binary=cli,
        cache_home=cache,
        extra_env={"COPILOT_OFFLINE": offline},
    )


@pytest.fixture(scope="session")
def sidecar(
    kit_dir: Path, kit_model: ScriptedModelServer, copilot_cli: Path, copilot_cache_home: Path
) -> Iterator[TestSidecar]:
    """The kit's sidecar: offline, with the `fake` MCP server in its own configuration."""
    started = _sidecar(kit_dir, "sidecar", kit_model, copilot_cli, copilot_cache_home, "true")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def online_sidecar(
    kit_dir: Path, kit_model: ScriptedModelServer, copilot_cli: Path, copilot_cache_home: Path
) -> Iterator[TestSidecar]:
    """For `url` requests only: web_fetch is offered only outside offline mode (the
    runtime still talks to 127.0.0.1 alone: the model is local and it blocks
    loopback fetches itself)."""
    started = _sidecar(kit_dir, "online", kit_model, copilot_cli, copilot_cache_home, "false")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def kit(driver_command: list[str], kit_model: ScriptedModelServer, tmp_path: Path) -> Kit:
    return Kit(driver_command, kit_model, tmp_path)


@pytest.fixture
def evidence(request: pytest.FixtureRequest) -> Any:
    """Tests note what they observed (and in which log form) for the report."""

    def note(text: str) -> None:
        request.node.user_properties.append(("evidence", text))

    return note


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    match = _TEST_ID.search(item.name)
    if not match or (report.when != "call" and not report.failed):
        return
    notes = [str(value) for key, value in item.user_properties if key == "evidence"]
    if report.failed:
        message = str(report.longrepr).strip().splitlines()
        notes.append("failure: " + (message[-1] if message else "failed"))
    item.config.stash[_REPORT].record(match.group(1), item.name, report.outcome, notes)


def pytest_sessionfinish(session: pytest.Session) -> None:
    report = session.config.stash[_REPORT]
    directory = session.config.getoption("--report-dir")
    if directory:
        report.write(Path(directory))
