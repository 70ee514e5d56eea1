"""A real Copilot CLI sidecar signed in to the fake with a GitHub token.

Unlike `copilot_driver.testing.environment.sidecar_environment` (offline,
a bring-your-own-model provider), this environment has no
`COPILOT_OFFLINE` and no provider: the CLI takes the subscription path,
against the fake's plain listener (`COPILOT_DEBUG_GITHUB_API_URL`) or, with
`https=True`, against the real host names through the fake's proxy.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.harness.sidecar import Sidecar, locate_copilot_cli
from copilot_driver.testing.environment import TestSidecar
from copilot_driver.testing.github_api.fake import LOGIN_ARGS, FakeGitHubCopilot

PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ")
"""The only variables of the test process a sidecar sees (no GH_TOKEN, no proxy)."""


def subscription_environment(
    home: Path,
    fake: FakeGitHubCopilot,
    *,
    https: bool = False,
    token: str | None = None,
    cache_home: Path | None = None,
) -> dict[str, str]:
    """A sidecar environment, built from scratch, that reaches `fake` with
    `token` (the fake's own by default): its own HOME and COPILOT_HOME, the
    shared package cache (XDG_CACHE_HOME, which also holds the CLI's user
    cache, keyed by token and GitHub API URL)."""
    env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
    env.update(
        HOME=str(home),
        COPILOT_HOME=str(home / ".copilot"),
        COPILOT_AUTO_UPDATE="false",
    )
    cache = cache_home or (
        Path(os.environ["XDG_CACHE_HOME"]) if "XDG_CACHE_HOME" in os.environ else None
    )
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    env.update(fake.https_sidecar_env(token) if https else fake.sidecar_env(token))
    return env


def start_subscription_sidecar(
    workdir: Path,
    fake: FakeGitHubCopilot,
    *,
    https: bool = False,
    token: str | None = None,
    binary: str | os.PathLike[str] | None = None,
    cache_home: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    ready_timeout: float = 60.0,
) -> TestSidecar:
    """Start the real CLI under `workdir`, signed in to `fake` with `token`
    (`--auth-token-env COPILOT_GITHUB_TOKEN`). The returned `token` is the
    SDK connection token, fresh per sidecar, as for every test sidecar."""
    home = workdir / "sidecar-home"
    home.mkdir(parents=True, exist_ok=True)
    env = subscription_environment(home, fake, https=https, token=token, cache_home=cache_home)
    env.update(extra_env or {})
    connection_token = secrets.token_hex(32)
    process = Sidecar.start(
        locate_copilot_cli(binary),
        token=connection_token,
        env=env,
        extra_args=LOGIN_ARGS,
        ready_timeout=ready_timeout,
        log_path=workdir / "sidecar.log",
    )
    return TestSidecar(process=process, token=connection_token, home=home)
