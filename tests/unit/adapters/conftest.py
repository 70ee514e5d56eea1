"""Helpers shared by the adapter unit tests, handed out as fixtures.

pytest runs with `--import-mode=importlib`, so a test module can import
neither this file nor another test module: what they share is a fixture.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
from pytest_subprocess import FakeProcess
from pytest_subprocess.process_recorder import ProcessRecorder

from copilot_driver.adapters.copilot_cli import CopilotCliAdapter
from copilot_driver.adapters.copilot_transcript import CopilotTranscriptAdapter
from copilot_driver.adapters.core.session import DEFAULT_READ_TIMEOUT_MS, AdapterConfig, Session

VERSION = "GitHub Copilot CLI 1.0.102.\n"
FINE_GRAINED_TOKEN = "github_pat_11AAAAAAA0_fake"

_S = TypeVar("_S", bound=Session)
_S_co = TypeVar("_S_co", bound=Session, covariant=True)


class _StartsSessions(Protocol[_S_co]):
    async def start_session(
        self, workspace: str | Path, *, resume_session_id: str | None = None
    ) -> _S_co: ...


def make_executable(directory: Path, name: str, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    """Writes `text` to `directory/name` (creating the directory) and makes it executable."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def executable() -> Callable[..., Path]:
    """`executable(directory, name, text="#!/bin/sh\\nexit 0\\n")`, see make_executable."""
    return make_executable


@dataclass
class FakeCopilot:
    """A `copilot` on a private PATH, faked by pytest-subprocess (`fp`), and a
    workspace to run it in: the canary, `gh auth status` and every turn are
    registered fake processes."""

    fp: FakeProcess
    bin_dir: Path
    binary: Path
    workspace: Path

    def env(self, **variables: str) -> dict[str, str]:
        return {"PATH": str(self.bin_dir), "LANG": "C.UTF-8", **variables}

    def config(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS,
    ) -> AdapterConfig:
        """This binary, with a fine-grained token in the environment unless `env` is given."""
        return AdapterConfig(
            command=str(self.binary),
            options=dict(options or {}),
            read_timeout_ms=read_timeout_ms,
            environment=self.env(GH_TOKEN=FINE_GRAINED_TOKEN) if env is None else dict(env),
        )

    def adapter(self, options: Mapping[str, Any] | None = None, **config: Any) -> CopilotCliAdapter:
        """A copilot-cli adapter; `config` as for `config()`."""
        return CopilotCliAdapter(self.config(options, **config))

    def transcript_adapter(
        self, options: Mapping[str, Any] | None = None, **config: Any
    ) -> CopilotTranscriptAdapter:
        """A copilot-transcript adapter; `config` as for `config()`."""
        return CopilotTranscriptAdapter(self.config(options, **config))

    def canary(self, **kwargs: Any) -> ProcessRecorder:
        """Registers `copilot --version`; `kwargs` go to `fp.register`."""
        return self.fp.register([str(self.binary), "--version"], **{"stdout": VERSION, **kwargs})

    def gh(self, returncode: int = 0, **kwargs: Any) -> Path:
        """Puts `gh` on the PATH and registers its `gh auth status`."""
        gh = make_executable(self.bin_dir, "gh")
        self.fp.register([str(gh), "auth", "status"], returncode=returncode, **kwargs)
        return gh

    def turn(
        self, stdout: Sequence[str] = (), *, returncode: int = 0, stderr: str | None = None
    ) -> ProcessRecorder:
        return self.fp.register(
            [str(self.binary), "-p", self.fp.any()],
            stdout=list(stdout),
            stderr=stderr,
            returncode=returncode,
        )

    async def start(
        self, adapter: _StartsSessions[_S], *, resume_session_id: str | None = None
    ) -> _S:
        """Starts a session in the workspace, the canary registered."""
        self.canary()
        return await adapter.start_session(self.workspace, resume_session_id=resume_session_id)

    def argvs(self) -> list[list[str]]:
        """The argv of every turn process spawned so far (not the canary, not gh)."""
        return [[str(part) for part in call] for call in self.fp.calls if "-p" in call]

    def prompts(self) -> list[str]:
        return [argv[argv.index("-p") + 1] for argv in self.argvs()]


@pytest.fixture
def fake_copilot(fp: FakeProcess, tmp_path: Path) -> FakeCopilot:
    bin_dir = tmp_path / "bin"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return FakeCopilot(fp, bin_dir, make_executable(bin_dir, "copilot"), workspace)


class Pids:
    """Whether real processes the code under test should have stopped are gone."""

    @staticmethod
    def alive(pid: int) -> bool:
        """True while `pid` runs (a zombie waiting to be reaped counts as gone)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return False
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")

    def gone(self, pid: int, timeout_s: float = 5.0) -> bool:
        """Waits, blocking, up to `timeout_s` for `pid` to be gone."""
        deadline = time.monotonic() + timeout_s
        while self.alive(pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    async def gone_async(self, pid: int, timeout_s: float = 5.0) -> bool:
        """`gone` for a test that must keep its event loop running meanwhile."""
        return await asyncio.to_thread(self.gone, pid, timeout_s)


@pytest.fixture
def pids() -> Pids:
    return Pids()
