"""Before the sidecar: the checks that can end a run before anything starts, and
what the sidecar is then started with.

    CLI found? credential? -> the run's token (masked from here on) -> policy
    warnings -> session state folder -> sidecar arguments and environment ->
    the OS sandbox -> the port

A failed check is the run's ending, in words, with nothing started. The state
folder and the sandbox stay readable after one fails: the run's account looks
for an events file in the folder and records the sandbox.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from copilot_driver import workflow_commands
from copilot_driver.env import (
    DRIVER_SECRETS,
    PLATFORM_TOKENS,
    SERVER_ARGS,
    secrets_in,
    session_state_base_dir,
)
from copilot_driver.exit_codes import ExitCode
from copilot_driver.git_credentials import workspace_credentials
from copilot_driver.harness.console import Console
from copilot_driver.harness.credentials import (
    classic_token_problem,
    credential_problem,
    stored_login,
)
from copilot_driver.harness.environment import (
    import_path_warning,
    login_arguments,
    new_connection_token,
    sidecar_arguments,
    sidecar_environment,
    trusted_search_path,
)
from copilot_driver.harness.outputs import Ending
from copilot_driver.harness.policy_check import (
    NO_POLICY_TITLE,
    misspelt_variables,
    unrestricted_policy,
)
from copilot_driver.harness.sandbox import (
    Sandbox,
    SandboxError,
    SandboxSettings,
    sandbox_cache_home,
    workspace_of,
)
from copilot_driver.harness.sandbox.upstream import proxy_passwords
from copilot_driver.harness.sidecar import SidecarError, locate_copilot_cli
from copilot_driver.permissions.config import ServerArgsError
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import HarnessErrorKind


@dataclass(frozen=True)
class SidecarPlan:
    """What the checks found, for `Sidecar.launch`."""

    binary: Path
    token: str
    env: dict[str, str]
    """The sidecar's environment, without its credentials."""
    credentials: dict[str, str]
    login_args: list[str]
    """How the CLI signs in to GitHub (`environment.login_arguments`)."""
    extra_args: list[str]
    log_level: str | None
    port: int
    log_path: Path


class Preflight:
    """The checks, for one run: `check()` once."""

    def __init__(
        self,
        env: Mapping[str, str],
        console: Console,
        *,
        copilot: str | None,
        port: int | None,
        overlap_start: bool,
        sandbox: SandboxSettings,
    ) -> None:
        self.env = env
        self.console = console
        self._copilot = copilot
        self._port = port
        self._overlap_start = overlap_start
        self._settings = sandbox
        self.workspace = workspace_of(env, Path.cwd())
        """The folder tools may write (resolved once: every check and the driver use it)."""
        self.state_base: Path | None = None
        """The session state folder, once known."""
        self.sandbox: Sandbox | None = None
        """The sidecar's sandbox, once prepared (closing it is the caller's)."""

    def check(self) -> SidecarPlan | Ending:
        """How to start the sidecar, or the ending of a run that cannot start it."""
        try:
            binary = locate_copilot_cli(self._copilot, self._lookup_env())
        except SidecarError as error:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.CLI_NOT_FOUND, str(error))
        problem = credential_problem(self.env, sandboxed=self._settings.enabled)
        if problem is not None:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.NO_CREDENTIAL, problem)
        token = new_connection_token()
        self.console.redactor = Redactor(
            [
                token,
                *secrets_in(self.env, (*PLATFORM_TOKENS, *DRIVER_SECRETS)),
                *proxy_passwords(self.env),
                # actions/checkout's persisted token: tools see it only with the sandbox off
                *workspace_credentials(self.workspace, self.env.get("HOME")),
            ]
        )
        classic = classic_token_problem(self.env)
        if classic is not None:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.UNSUPPORTED_TOKEN, classic)
        # first of all: the runner masks it in every later line
        self.console.command(workflow_commands.add_mask(token))
        self._warn_about_the_policy()
        base = self.state_base = session_state_base_dir(self.env, Path.cwd())
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = f"cannot create the session state folder {base}: {error.strerror}"
            return Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, reason)
        try:
            extra_args, asked_port, log_level = sidecar_arguments(self.env.get(SERVER_ARGS.name))
        except ServerArgsError as error:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, str(error))
        plain_env, credentials = sidecar_environment(
            self.env, pass_env=self._settings.pass_env, sandboxed=self._settings.enabled
        )
        stored = stored_login(self.env) and not self._settings.enabled
        login_args = login_arguments(credentials, stored_login=stored)
        try:
            self.sandbox = self._prepare_sandbox(binary, base)
        except SandboxError as error:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.SANDBOX_UNAVAILABLE, str(error))
        port = self._port if self._port is not None else (asked_port or 0)
        if self._overlap_start and port == 0:
            port = _free_port()  # the driver must know the address before the sidecar says it
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        log_path = base / f"sidecar-{stamp}-{os.getpid()}.log"
        return SidecarPlan(
            binary, token, plain_env, credentials, login_args, extra_args, log_level, port, log_path
        )

    def _lookup_env(self) -> dict[str, str]:
        """The environment the harness finds programs with: a PATH without the
        workspace, where a tool may have left a `copilot` or `bwrap` of its own."""
        trusted = trusted_search_path(self.env.get("PATH", ""), self.workspace)
        return {**self.env, "PATH": trusted or os.devnull}

    def _warn_about_the_policy(self) -> None:
        """Misspelt variables, a run that approves every tool request (policy_check), and
        a harness that imports from the workspace."""
        first = sys.path[0] if sys.path else ""
        risky_import = import_path_warning(first, bool(sys.flags.safe_path), self.workspace)
        if risky_import is not None:
            self.console.say(f"warning: {risky_import}")
        for sentence in misspelt_variables(self.env):
            self.console.say(f"warning: {sentence}")
        unrestricted = unrestricted_policy(self.env)
        if unrestricted is None:
            return
        self.console.say(f"warning: {unrestricted}")
        self.console.annotate("warning", NO_POLICY_TITLE, unrestricted)

    def _prepare_sandbox(self, binary: Path, state_base: Path) -> Sandbox | None:
        """The sidecar's sandbox, or None with `--sandbox off` (said out loud)."""
        settings, say = self._settings, self.console.say
        missing = [name for name in settings.pass_env if name not in self.env]
        if missing:
            say(f"warning: --pass-env {', '.join(missing)}: not set, nothing passed")
        if not settings.enabled:
            say(
                "warning: the OS sandbox is off (--sandbox off): every tool the model runs "
                "reaches this machine's files, network and processes as this user"
            )
            self.console.annotate(
                "warning", "The OS sandbox is off", "tools ran without containment"
            )
            return None
        sandbox = Sandbox.prepare(
            binary,
            self.env,
            settings,
            workspace=self.workspace,
            state_base=state_base,
            cache_home=sandbox_cache_home(self.env),
            on_denied=lambda where, why: say(f"sandbox: egress to {where} refused: {why}"),
        )
        for warning in sandbox.warnings:
            say(f"warning: {warning}")
        return sandbox


def _free_port() -> int:
    """A port free on 127.0.0.1 now (the sidecar binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
