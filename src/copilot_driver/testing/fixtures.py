"""pytest fixtures: a scripted model, a real sidecar, and driver runs against them.

Load with `pytest_plugins = ["copilot_driver.testing.fixtures"]`.

When the Copilot CLI binary cannot be found the sidecar fixtures skip, except
under CI (`CI=true`), where a missing real component is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from copilot_driver.harness.sidecar import SidecarError, locate_copilot_cli
from copilot_driver.logs import read_json_entry
from copilot_driver.testing.codex import CodexNotFoundError, locate_codex
from copilot_driver.testing.environment import (
    TestSidecar,
    driver_environment,
    start_test_sidecar,
)
from copilot_driver.testing.model_server import ScriptedModelServer

DRIVER_COMMAND: tuple[str, ...] = (sys.executable, "-m", "copilot_driver")


def run_adapters(
    workspace: Path,
    workflow: Path,
    *prompts: str,
    env: Mapping[str, str],
    kind: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`python -m copilot_driver.adapters run` once, one `--prompt` per turn.

    `env` is the agent's hermetic environment; this interpreter's `sys.path`
    is added so the package is found from it.
    """
    args = [sys.executable, "-m", "copilot_driver.adapters", "run"]
    if kind is not None:
        args += ["--kind", kind]
    args += ["--workspace", str(workspace), "--workflow", str(workflow)]
    for prompt in prompts:
        args += ["--prompt", prompt]
    environment = {**env, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        args, env=environment, capture_output=True, text=True, timeout=timeout, check=False
    )


def missing_component(what: str, error: Exception) -> NoReturn:
    """A real component cannot run here: skip the test, but fail it under CI (`CI=true`)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} is required in CI: {error}")
    pytest.skip(str(error))


@pytest.fixture(scope="session")
def copilot_cli() -> Path:
    """The real Copilot CLI binary (see `locate_copilot_cli`)."""
    try:
        return locate_copilot_cli()
    except SidecarError as error:
        missing_component("the real Copilot CLI", error)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    """The real Codex CLI binary (see `copilot_driver.testing.codex.locate_codex`)."""
    try:
        return locate_codex()
    except CodexNotFoundError as error:
        missing_component("the real Codex CLI", error)


@pytest.fixture(scope="session")
def copilot_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One XDG_CACHE_HOME for every sidecar: the CLI unpacks itself there once."""
    configured = os.environ.get("XDG_CACHE_HOME")
    return Path(configured) if configured else tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModelServer]:
    """A scripted model server; assign `scripted_model.script` to script it."""
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def copilot_sidecar(
    copilot_cli: Path,
    copilot_cache_home: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> Iterator[TestSidecar]:
    """A real Copilot CLI sidecar with a fresh token, offline on the scripted model."""
    sidecar = start_test_sidecar(
        tmp_path,
        model_base_url=scripted_model.base_url,
        binary=copilot_cli,
        cache_home=copilot_cache_home,
    )
    try:
        yield sidecar
    finally:
        sidecar.stop()


@dataclass
class DriverRun:
    """What one driver process left behind."""

    exit_code: int
    stdout: str
    stderr: str
    state_dir: Path
    log_entries: list[dict[str, Any]] = field(default_factory=list)

    def entries(self, event: str) -> list[dict[str, Any]]:
        return [entry for entry in self.log_entries if entry.get("event") == event]

    def session_dirs(self) -> list[Path]:
        if not self.state_dir.is_dir():
            return []
        return sorted(path for path in self.state_dir.iterdir() if path.is_dir())

    @property
    def events_file(self) -> Path:
        (folder,) = self.session_dirs()
        return folder / "events.jsonl"

    def events(self) -> list[dict[str, Any]]:
        """The events file, parsed line by line (fails on any invalid line)."""
        lines = self.events_file.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    def result(self) -> dict[str, Any]:
        (folder,) = self.session_dirs()
        loaded: dict[str, Any] = json.loads((folder / "result.json").read_text())
        return loaded

    def everything_written(self) -> str:
        """stdout, stderr and every file under the state folder, as one text."""
        parts = [self.stdout, self.stderr]
        if self.state_dir.is_dir():
            parts += [
                path.read_text(encoding="utf-8", errors="replace")
                for path in self.state_dir.rglob("*")
                if path.is_file()
            ]
        return "\n".join(parts)


def parse_log(stderr: str) -> list[dict[str, Any]]:
    """The JSON log entries in `stderr` (other lines are ignored)."""
    return [entry for line in stderr.splitlines() if (entry := read_json_entry(line)) is not None]


class DriverRunner:
    """Run the driver as a subprocess against a test sidecar and the scripted model."""

    def __init__(
        self, tmp_path: Path, sidecar: TestSidecar | None, model: ScriptedModelServer
    ) -> None:
        self.tmp_path = tmp_path
        self.sidecar = sidecar
        self.model = model
        self.command: Sequence[str] = DRIVER_COMMAND

    def environment(self, prompt: str, **overrides: str) -> dict[str, str]:
        prompt_file = Path(tempfile.mkstemp(dir=self.tmp_path, suffix=".prompt.md")[1])
        prompt_file.write_text(prompt, encoding="utf-8")
        workspace = self.tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        return driver_environment(
            prompt_file=prompt_file,
            sdk_uri=self.sidecar.uri if self.sidecar else "http://127.0.0.1:9",
            token=self.sidecar.token if self.sidecar else "0" * 64,
            model_base_url=self.model.base_url,
            state_dir=self.tmp_path / "state",
            workspace=workspace,
            **overrides,
        )

    def run(
        self,
        prompt: str,
        *,
        timeout: float = 120,
        env: dict[str, str] | None = None,
        **overrides: str,
    ) -> DriverRun:
        environment = env if env is not None else self.environment(prompt, **overrides)
        completed = subprocess.run(
            list(self.command),
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return self.outcome(completed.returncode, completed.stdout, completed.stderr, environment)

    def outcome(self, exit_code: int, stdout: str, stderr: str, env: dict[str, str]) -> DriverRun:
        return DriverRun(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            state_dir=Path(env["GH_AW_SESSION_STATE_BASE_DIR"]),
            log_entries=parse_log(stderr),
        )


@pytest.fixture
def driver(
    tmp_path: Path, copilot_sidecar: TestSidecar, scripted_model: ScriptedModelServer
) -> DriverRunner:
    """Runs `python -m copilot_driver` against the test sidecar."""
    return DriverRunner(tmp_path, copilot_sidecar, scripted_model)
