"""Before the sidecar: the checks that can end a run before anything starts, and
what the sidecar is then started with.

    the run's token (secrets masked from here on) -> warnings (policy, misspelt
    variables) -> every check that starts nothing: the options, the CLI, the
    credential, the token's kind, the driver's inputs (`driver_inputs`), the
    sidecar's arguments, what the sandbox needs -> session state folder ->
    the OS sandbox set up and probed -> the port

Every problem of the checks that start nothing is found before any is said, so
a run that cannot start says all of them at once, one line each with its fix
(`Ending.refused`), with nothing started. The state folder and the sandbox stay
readable after a later check fails: the run's account looks for an events file
in the folder and records the sandbox.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from copilot_driver import workflow_commands
from copilot_driver.env import (
    DRIVER_SECRETS,
    SERVER_ARGS,
    SESSION_STATE_BASE_DIR,
    session_state_base_dir,
)
from copilot_driver.env_commands import PLATFORM_TOKENS
from copilot_driver.exit_codes import ExitCode
from copilot_driver.git_credentials import workspace_credentials
from copilot_driver.harness.console import Console
from copilot_driver.harness.credentials import (
    classic_token_problem,
    credential_problem,
    stored_login,
)
from copilot_driver.harness.driver_inputs import (
    model_problem,
    policy_problems,
    prompt_problem,
    workspace_problem,
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
from copilot_driver.harness.sandbox.setup_checks import OFF_FIX, check_workspace
from copilot_driver.harness.sandbox.upstream import Upstream, UpstreamProxyError, proxy_passwords
from copilot_driver.harness.sidecar import SidecarError, locate_copilot_cli
from copilot_driver.permissions.config import ServerArgsError
from copilot_driver.redaction import Redactor
from copilot_driver.secret_variables import secrets_in
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


@dataclass
class Problems:
    """What stops the run, in the order found: (error kind, the problem and its fix)."""

    found: list[tuple[str, str]] = field(default_factory=list)

    def add(self, kind: str, message: str | None) -> None:
        if message is not None:
            self.found.append((kind, message))

    def ending(self) -> Ending | None:
        """The run's ending when anything was found: the first problem's kind, each
        problem a line of its own."""
        if not self.found:
            return None
        message = "\n".join(" ".join(text.split()) for _, text in self.found)
        return Ending(ExitCode.CONFIG, self.found[0][0], message, refused=True)


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
        driver_command: Sequence[str] = (),
        prompt_file: str | None = None,
        usage_problems: Sequence[str] = (),
    ) -> None:
        self.env = env
        self.console = console
        self._copilot = copilot
        self._port = port
        self._overlap_start = overlap_start
        """This package's driver (it reads COPILOT_SDK_READY_FD): its inputs are checked."""
        self._settings = sandbox
        self._driver_command = tuple(driver_command)
        self._prompt_file = prompt_file
        self._usage_problems = tuple(usage_problems)
        self.workspace = workspace_of(env, Path.cwd())
        """The folder tools may write (resolved once: every check and the driver use it)."""
        self.state_base: Path | None = None
        """The session state folder, once known."""
        self.sandbox: Sandbox | None = None
        """The sidecar's sandbox, once prepared (closing it is the caller's)."""

    def check(self) -> SidecarPlan | Ending:
        """How to start the sidecar, or the ending of a run that cannot start it."""
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
        # first of all: the runner masks it in every later line
        self.console.command(workflow_commands.add_mask(token))
        self._warn_about_this_start()
        problems = Problems()
        binary = self._find_problems(problems)
        refused = problems.ending()
        if refused is not None or binary is None:
            return refused or Ending(ExitCode.CONFIG, HarnessErrorKind.CLI_NOT_FOUND)
        self._warn_about_the_policy()
        return self._plan(binary, token)

    def _find_problems(self, problems: Problems) -> Path | None:
        """Every check that starts nothing, each problem kept; the CLI when found."""
        env = self.env
        for message in self._usage_problems:
            problems.add(HarnessErrorKind.CONFIG, message)
        binary = None
        try:
            binary = locate_copilot_cli(self._copilot, self._lookup_env())
        except SidecarError as error:
            problems.add(HarnessErrorKind.CLI_NOT_FOUND, str(error))
        sandboxed = self._settings.enabled
        problems.add(HarnessErrorKind.NO_CREDENTIAL, credential_problem(env, sandboxed=sandboxed))
        problems.add(HarnessErrorKind.UNSUPPORTED_TOKEN, classic_token_problem(env))
        problems.add(HarnessErrorKind.CONFIG, self._driver_command_problem())
        problems.add(HarnessErrorKind.CONFIG, prompt_problem(env, self._prompt_file, Path.cwd()))
        policy = policy_problems(env) if self._overlap_start else []
        if self._overlap_start:  # this package's driver: what it would refuse
            problems.add(HarnessErrorKind.CONFIG, model_problem(env))
            for message in policy:
                problems.add(HarnessErrorKind.CONFIG, message)
            problems.add(HarnessErrorKind.CONFIG, workspace_problem(env, Path.cwd()))
        try:
            sidecar_arguments(env.get(SERVER_ARGS.name))
        except ServerArgsError as error:  # said once, when the policy's reader said it
            if not any(message.startswith(str(error)) for message in policy):
                problems.add(HarnessErrorKind.CONFIG, str(error))
        if sandboxed:
            for message in self._sandbox_problems():
                problems.add(HarnessErrorKind.SANDBOX_UNAVAILABLE, message)
        return binary

    def _driver_command_problem(self) -> str | None:
        """Another driver's command (after `--`) that cannot be found."""
        if self._overlap_start or not self._driver_command:
            return None
        program = self._driver_command[0]
        if "/" in program:
            found = os.path.isfile(program) and os.access(program, os.X_OK)
        else:
            found = shutil.which(program, path=self._lookup_env()["PATH"]) is not None
        if found:
            return None
        where = "is not an executable file" if "/" in program else "is not on PATH"
        return (
            f"the driver command {program} {where}: check the command after `--` "
            "(e.g. `-- python3 .github/drivers/copilot-driver.py`)"
        )

    def _sandbox_problems(self) -> list[str]:
        """What the sandbox needs and can be checked without setting it up."""
        found = []
        try:
            Upstream.from_env(self.env)
        except UpstreamProxyError as error:
            found.append(str(error))
        try:
            check_workspace(self.workspace)
        except SandboxError as error:
            found.append(str(error))
        if shutil.which("bwrap", path=self._lookup_env()["PATH"]) is None:
            found.append(
                "the sandbox needs bubblewrap, and no `bwrap` is on PATH: install it "
                f"(`sudo apt-get install bubblewrap`), {OFF_FIX}"
            )
        return found

    def _plan(self, binary: Path, token: str) -> SidecarPlan | Ending:
        """The state folder, the sidecar's arguments and environment, the sandbox set up
        and probed, the port: what starts the sidecar, or why it cannot start."""
        base = self.state_base = session_state_base_dir(self.env, Path.cwd())
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = (
                f"cannot create the session state folder {base}: {error.strerror}; set "
                f"{SESSION_STATE_BASE_DIR.name} to a folder this user can create"
            )
            return Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, reason, refused=True)
        extra_args, asked_port, log_level = sidecar_arguments(self.env.get(SERVER_ARGS.name))
        plain_env, credentials = sidecar_environment(
            self.env, pass_env=self._settings.pass_env, sandboxed=self._settings.enabled
        )
        stored = stored_login(self.env) and not self._settings.enabled
        login_args = login_arguments(credentials, stored_login=stored)
        try:
            self.sandbox = self._prepare_sandbox(binary, base)
        except SandboxError as error:
            kind = HarnessErrorKind.SANDBOX_UNAVAILABLE
            return Ending(ExitCode.CONFIG, kind, str(error), refused=True)
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

    def _warn_about_this_start(self) -> None:
        """Said first, whether the run starts or not: a harness that imports from the
        workspace, and misspelt variables (often why a problem below is one)."""
        first = sys.path[0] if sys.path else ""
        risky_import = import_path_warning(first, bool(sys.flags.safe_path), self.workspace)
        if risky_import is not None:
            self.console.say(f"warning: {risky_import}")
        for sentence in misspelt_variables(self.env):
            self.console.say(f"warning: {sentence}")

    def _warn_about_the_policy(self) -> None:
        """A run about to start that approves every tool request (policy_check)."""
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
