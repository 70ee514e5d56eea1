"""Harness runs on a GitHub token against the fake GitHub, for e2e tests.

The environment is built from scratch, as a runner's would be: no provider,
no `COPILOT_OFFLINE`, a GitHub token in `COPILOT_GITHUB_TOKEN`, and the way
to the fake: `COPILOT_DEBUG_GITHUB_API_URL` (plain), or the real host names
through `HTTPS_PROXY` with `NODE_EXTRA_CA_CERTS` (`https=True`), as a
runner behind a TLS-intercepting corporate proxy has them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.testing.github_api import DEFAULT_MODEL, FakeGitHubCopilot

PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ")


@dataclass
class TokenRun:
    """One harness run and what it left behind."""

    completed: subprocess.CompletedProcess[str]
    state: Path
    files: dict[str, Path] = field(default_factory=dict)
    """The runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) when given."""

    @property
    def returncode(self) -> int:
        return self.completed.returncode

    def session(self) -> Path:
        (folder,) = [path for path in self.state.iterdir() if path.is_dir()]
        return folder

    def result(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.session() / "result.json").read_text())
        return loaded

    def sandbox(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.session() / "sandbox.json").read_text())
        return loaded

    def log(self, event: str) -> list[dict[str, Any]]:
        """The driver's JSON log entries of `event` (from the harness's stderr)."""
        found = []
        for line in self.completed.stderr.splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                if entry.get("event") == event:
                    found.append(entry)
        return found

    def outputs(self) -> str:
        path = self.files.get("GITHUB_OUTPUT")
        return path.read_text() if path and path.exists() else ""

    def everything_written(self) -> str:
        """stdout, stderr, every file of the state folder and the runner's files."""
        parts = [self.completed.stdout, self.completed.stderr]
        if self.state.is_dir():
            parts += [p.read_text(errors="replace") for p in self.state.rglob("*") if p.is_file()]
        parts += [p.read_text(errors="replace") for p in self.files.values() if p.exists()]
        return "\n".join(parts)


class TokenHarness:
    """`python -m copilot_driver.harness` on a GitHub token, against `fake`."""

    def __init__(self, tmp: Path, fake: FakeGitHubCopilot, cli: Path, cache: Path) -> None:
        self.tmp = tmp
        self.fake = fake
        self.cli = cli
        self.cache = cache
        self.workspace = tmp / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.runs = 0

    def environment(
        self, prompt: str, *, https: bool, token: str | None = None, **extra: str
    ) -> tuple[dict[str, str], Path]:
        self.runs += 1
        run_dir = self.tmp / f"run-{self.runs}"
        run_dir.mkdir()
        (run_dir / "prompt.md").write_text(prompt, encoding="utf-8")
        state = run_dir / "state"
        env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
        env.update(
            HOME=str(run_dir / "home"),
            XDG_CACHE_HOME=str(self.cache),
            COPILOT_AUTO_UPDATE="false",
            COPILOT_SKIP_CLI_DOWNLOAD="1",
            GH_AW_PROMPT=str(run_dir / "prompt.md"),
            GITHUB_WORKSPACE=str(self.workspace),
            GH_AW_SESSION_STATE_BASE_DIR=str(state),
            COPILOT_MODEL=DEFAULT_MODEL,
        )
        env.update(self.fake.https_sidecar_env(token) if https else self.fake.sidecar_env(token))
        env.update(extra)
        return env, state

    def run(
        self,
        prompt: str,
        *args: str,
        https: bool = True,
        token: str | None = None,
        actions: bool = False,
        timeout: float = 120,
        **extra: str,
    ) -> TokenRun:
        """One run; with `actions`, as under GitHub Actions (outputs and step summary)."""
        env, state = self.environment(prompt, https=https, token=token, **extra)
        files: dict[str, Path] = {}
        if actions:
            for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
                files[name] = state.parent / name.lower()
                files[name].touch()
                env[name] = str(files[name])
            env["GITHUB_ACTIONS"] = "true"
        argv = [sys.executable, "-m", "copilot_driver.harness", "--copilot", str(self.cli), *args]
        completed = subprocess.run(
            argv,
            env=env,
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return TokenRun(completed, state, files)
