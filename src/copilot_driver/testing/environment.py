"""Hermetic environments for a real sidecar and a driver run against it.

Each test sidecar gets a fresh 32-byte token, its own HOME and COPILOT_HOME,
a free port on 127.0.0.1, and the scripted model as its offline provider.
Its environment is built from scratch, so no platform token of the machine
running the tests can reach it. Only the CLI's unpacked package cache
(XDG_CACHE_HOME, ~235 MB) is shared between runs.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.harness.sidecar import Sidecar, locate_copilot_cli

TEST_MODEL = "gpt-4.1"
TEST_PROVIDER_KEY = "scripted-provider-key-7f3a9c2e"
"""A recognisable provider key, long enough that redaction never mangles other text."""

_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ", "XDG_CACHE_HOME")
"""XDG_CACHE_HOME too: the CLI's unpacked package, and the driver's lazy-loading cache
(`copilot_driver.sdk_loading.folder`), are where the test run's own processes put them."""


def sidecar_environment(
    home: Path, *, model_base_url: str, cache_home: Path | None = None
) -> dict[str, str]:
    """The environment of an offline sidecar whose model is `model_base_url`."""
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.update(
        HOME=str(home),
        COPILOT_HOME=str(home / ".copilot"),
        COPILOT_AUTO_UPDATE="false",
        COPILOT_OFFLINE="true",
        COPILOT_PROVIDER_BASE_URL=model_base_url,
        COPILOT_MODEL=TEST_MODEL,
    )
    cache = cache_home or (
        Path(os.environ["XDG_CACHE_HOME"]) if "XDG_CACHE_HOME" in os.environ else None
    )
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return env


@dataclass
class TestSidecar:
    """A running test sidecar and what a driver needs to reach it."""

    __test__ = False  # not a pytest test class

    process: Sidecar
    token: str
    home: Path

    @property
    def uri(self) -> str:
        return self.process.uri

    @property
    def port(self) -> int:
        assert self.process.port is not None
        return self.process.port

    def stop(self) -> None:
        self.process.stop()


def start_test_sidecar(
    workdir: Path,
    *,
    model_base_url: str,
    binary: str | os.PathLike[str] | None = None,
    cache_home: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    ready_timeout: float = 60.0,
    token: str | None = None,
) -> TestSidecar:
    """Start the real Copilot CLI as a sidecar under `workdir` with a fresh token (or
    `token`, as a user who starts the sidecar by hand gives it)."""
    home = workdir / "sidecar-home"
    home.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(32) if token is None else token
    env = sidecar_environment(home, model_base_url=model_base_url, cache_home=cache_home)
    env.update(extra_env or {})
    process = Sidecar.start(
        locate_copilot_cli(binary),
        token=token,
        env=env,
        ready_timeout=ready_timeout,
        log_path=workdir / "sidecar.log",
    )
    return TestSidecar(process=process, token=token, home=home)


def driver_environment(
    *,
    prompt_file: Path,
    sdk_uri: str,
    token: str,
    model_base_url: str | None,
    state_dir: Path,
    workspace: Path | None = None,
    **overrides: str,
) -> dict[str, str]:
    """A driver environment for one run (extra variables as keyword overrides)."""
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.update(
        GH_AW_PROMPT=str(prompt_file),
        COPILOT_SDK_URI=sdk_uri,
        COPILOT_CONNECTION_TOKEN=token,
        COPILOT_MODEL=TEST_MODEL,
        GH_AW_SESSION_STATE_BASE_DIR=str(state_dir),
        COPILOT_SKIP_CLI_DOWNLOAD="1",
    )
    if model_base_url is not None:
        env.update(
            COPILOT_PROVIDER_BASE_URL=model_base_url,
            COPILOT_PROVIDER_TYPE="openai",
            COPILOT_PROVIDER_API_KEY=TEST_PROVIDER_KEY,
        )
    if workspace is not None:
        env["GITHUB_WORKSPACE"] = str(workspace)
    env.update(overrides)
    return env


def harness_environment(
    home: Path,
    *,
    model_base_url: str,
    prompt_file: Path,
    workspace: Path,
    state_dir: Path,
    cache_home: Path | None = None,
    **overrides: str,
) -> dict[str, str]:
    """The environment of `python -m copilot_driver.harness` on the scripted model.

    The harness starts the sidecar and the driver from one environment: a
    sidecar's (offline, its own HOME under `home`) plus the driver's inputs.
    The harness makes the token and the address itself.
    """
    env = sidecar_environment(home, model_base_url=model_base_url, cache_home=cache_home)
    env.update(
        COPILOT_PROVIDER_API_KEY=TEST_PROVIDER_KEY,
        COPILOT_SKIP_CLI_DOWNLOAD="1",
        GH_AW_PROMPT=str(prompt_file),
        GITHUB_WORKSPACE=str(workspace),
        GH_AW_SESSION_STATE_BASE_DIR=str(state_dir),
    )
    env.update(overrides)
    return env


def prompt_mode_environment(
    home: Path,
    *,
    model_base_url: str,
    binary: str | os.PathLike[str] | None = None,
    cache_home: Path | None = None,
) -> dict[str, str]:
    """The environment of an offline `copilot -p` run (the copilot-cli adapter's
    agent) on the scripted model: a sidecar's environment, the provider key, and
    a PATH whose `copilot` is the real CLI. No GitHub credential at all."""
    home.mkdir(parents=True, exist_ok=True)
    env = sidecar_environment(home, model_base_url=model_base_url, cache_home=cache_home)
    bin_dir = home / "bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / "copilot"
    if not link.exists():
        link.symlink_to(locate_copilot_cli(binary))
    env["PATH"] = os.pathsep.join(filter(None, (str(bin_dir), env.get("PATH"))))
    env["COPILOT_PROVIDER_TYPE"] = "openai"
    env["COPILOT_PROVIDER_API_KEY"] = TEST_PROVIDER_KEY
    return env
