"""One harness run: checks, sidecar up, the driver's tries (retried when transient).

    CLI found? credential? -> token -> sidecar starting ... driver importing
    (overlapped) -> sidecar listens -> driver connects -> wait, forwarding
    SIGTERM/SIGINT -> a transient failure with no side effects? fresh try
    -> stop the sidecar -> outputs, annotation, step summary -> the answer

The driver is any command (this package's by default). This package's
driver is started while the sidecar starts and waits on a pipe until the
sidecar listens (COPILOT_SDK_READY_FD), so a run costs about the larger of
the two start-ups, not their sum; another driver starts once the sidecar
listens. Both children die with the harness (see `processes`); the sidecar
runs in its own process group, which is stopped as a whole.

Logs, workflow commands and the status line go to stderr. Under GitHub
Actions the token is masked first and each try's driver log is a collapsible
group. On every exit the run ends with its account (see `outputs`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import IO

from copilot_driver import workflow_commands
from copilot_driver.env import (
    DRIVER_SECRETS,
    PLATFORM_TOKENS,
    SERVER_ARGS,
    TIMEOUT_MINUTES,
    in_github_actions,
    secrets_in,
    session_state_base_dir,
)
from copilot_driver.exit_codes import ExitCode, for_signal
from copilot_driver.harness.credentials import credential_problem
from copilot_driver.harness.driver_process import (
    DriverProcess,
    DriverStartError,
    cause_of_failure,
    kind_of_exit,
)
from copilot_driver.harness.environment import (
    new_connection_token,
    sidecar_arguments,
    sidecar_environment,
)
from copilot_driver.harness.outputs import Ending, FinishedRun, Outputs
from copilot_driver.harness.policy_check import (
    NO_POLICY_TITLE,
    misspelt_variables,
    unrestricted_policy,
)
from copilot_driver.harness.progress import Progress, StatusLine
from copilot_driver.harness.retry import FailedTry, RetryPolicy, next_delay
from copilot_driver.harness.sandbox import (
    Sandbox,
    SandboxError,
    SandboxSettings,
    sandbox_cache_home,
    workspace_of,
)
from copilot_driver.harness.sidecar import (
    Sidecar,
    SidecarError,
    SidecarStartStoppedError,
    locate_copilot_cli,
)
from copilot_driver.permissions.config import ServerArgsError
from copilot_driver.redaction import Redactor
from copilot_driver.report import Attempt
from copilot_driver.vocabulary import DriverErrorKind, HarnessErrorKind

PREFIX = "[copilot-driver-harness]"
SIDECAR_STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class HarnessOptions:
    copilot: str | None
    port: int | None
    ready_timeout: float
    driver_command: Sequence[str]
    overlap_start: bool = False
    """The driver reads COPILOT_SDK_READY_FD, so it may start before the sidecar listens."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)


class Harness:
    def __init__(
        self,
        options: HarnessOptions,
        env: Mapping[str, str],
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
    ) -> None:
        self.options = options
        self.env = dict(env)
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.in_actions = in_github_actions(env)
        interactive = self.stderr.isatty() and env.get("CI", "").lower() != "true"
        self.status = StatusLine(self.stderr, enabled=interactive)
        self.attempts: list[Attempt] = []
        self.answer = ""
        self._started = time.monotonic()
        self._wall_started = time.time()
        self._signal: int | None = None
        self._redactor = Redactor()
        self._sidecar_log: Path | None = None
        self._state_base: Path | None = None
        self._sandbox: Sandbox | None = None

    @property
    def progress(self) -> Progress:
        """The current try's progress."""
        return self.status.progress

    def run(self) -> int:
        previous = self._install_signal_handlers()
        try:
            ending = self._run()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        self._report(ending)
        return ending.exit_code

    # -- before the sidecar ------------------------------------------------------

    def _run(self) -> Ending:
        try:
            binary = locate_copilot_cli(self.options.copilot, self.env)
        except SidecarError as error:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.CLI_NOT_FOUND, str(error))
        problem = credential_problem(self.env, sandboxed=self.options.sandbox.enabled)
        if problem is not None:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.NO_CREDENTIAL, problem)
        token = new_connection_token()
        self._redactor = Redactor(
            [token, *secrets_in(self.env, (*PLATFORM_TOKENS, *DRIVER_SECRETS))]
        )
        if self.in_actions:  # first of all: the runner masks it in every later line
            self.status.write_raw(workflow_commands.add_mask(token))
        self._warn_about_the_policy()
        base = self._state_base = session_state_base_dir(self.env, Path.cwd())
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
            self.env, pass_env=self.options.sandbox.pass_env
        )
        try:
            self._sandbox = self._prepare_sandbox(binary)
        except SandboxError as error:
            return Ending(ExitCode.CONFIG, HarnessErrorKind.SANDBOX_UNAVAILABLE, str(error))
        port = self.options.port if self.options.port is not None else (asked_port or 0)
        if self.options.overlap_start and port == 0:
            port = _free_port()  # the driver must know the address before the sidecar says it
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self._sidecar_log = base / f"sidecar-{stamp}-{os.getpid()}.log"
        self.progress.phase = "starting the Copilot CLI sidecar"
        self.status.start()
        try:
            sidecar = Sidecar.launch(
                binary,
                token=token,
                env=plain_env,
                credentials=credentials,  # the platform token is the sidecar's alone
                sandbox=self._sandbox,
                port=port,
                extra_args=extra_args,
                log_level=log_level or "info",
                log_path=self._sidecar_log,
                die_with_parent=True,
            )
        except SidecarError as error:
            return _sidecar_start_failed(error)
        try:
            return self._with_sidecar(sidecar, token, sidecar.public_port or port)
        finally:
            sidecar.stop(grace=SIDECAR_STOP_GRACE_S)
            if self._sandbox is not None:
                for removed in self._sandbox.close():
                    self._say(f"warning: sandbox: {removed}")

    def _warn_about_the_policy(self) -> None:
        """Misspelt variables, and a run that approves every tool request (policy_check)."""
        for sentence in misspelt_variables(self.env):
            self._say(f"warning: {sentence}")
        unrestricted = unrestricted_policy(self.env)
        if unrestricted is None:
            return
        self._say(f"warning: {unrestricted}")
        if self.in_actions:
            self.status.write_raw(
                workflow_commands.annotation("warning", NO_POLICY_TITLE, unrestricted)
            )

    def _prepare_sandbox(self, binary: Path) -> Sandbox | None:
        """The sidecar's sandbox, or None with `--sandbox off` (said out loud)."""
        settings = self.options.sandbox
        missing = [name for name in settings.pass_env if name not in self.env]
        if missing:
            self._say(f"warning: --pass-env {', '.join(missing)}: not set, nothing passed")
        if not settings.enabled:
            self._say(
                "warning: the OS sandbox is off (--sandbox off): every tool the model runs "
                "reaches this machine's files, network and processes as this user"
            )
            if self.in_actions:
                self.status.write_raw(
                    workflow_commands.annotation(
                        "warning", "The OS sandbox is off", "tools ran without containment"
                    )
                )
            return None
        assert self._state_base is not None
        sandbox = Sandbox.prepare(
            binary,
            self.env,
            settings,
            workspace=workspace_of(self.env, Path.cwd()),
            state_base=self._state_base,
            cache_home=sandbox_cache_home(self.env),
            on_denied=lambda where, why: self._say(f"sandbox: egress to {where} refused: {why}"),
        )
        for warning in sandbox.warnings:
            self._say(f"warning: {warning}")
        return sandbox

    # -- the sidecar and the tries -------------------------------------------------

    def _with_sidecar(self, sidecar: Sidecar, token: str, port: int) -> Ending:
        first: DriverProcess | None = None
        ready_pipe: int | None = None
        if self.options.overlap_start:
            read_end, ready_pipe = os.pipe()
            try:
                started = self._start_driver(f"http://127.0.0.1:{port}", token, ready_fd=read_end)
            finally:
                os.close(read_end)
            if isinstance(started, Ending):
                os.close(ready_pipe)
                return started
            first = started
        try:
            failed = self._await_sidecar(sidecar, first)
        finally:
            if ready_pipe is not None:
                # A line: connect now. End of file (the sidecar failed): give up at once.
                if sidecar.port is not None:
                    with contextlib.suppress(OSError):  # a driver that left reads nothing
                        os.write(ready_pipe, b"ready\n")
                os.close(ready_pipe)
        if failed is not None:
            if first is not None:
                first.abandon()
                self._end_driver_log()
            return failed
        return self._tries(sidecar, token, first)

    def _await_sidecar(self, sidecar: Sidecar, first: DriverProcess | None) -> Ending | None:
        """Wait until the sidecar listens: None, or why the run ends here. A driver
        that already ended (its configuration refused) ends the wait: its verdict stands."""

        def stop_waiting() -> bool:
            driver_ended = first is not None and first.ended()
            return self._signal is not None or driver_ended

        try:
            sidecar.wait_ready(self.options.ready_timeout, stop_requested=stop_waiting)
        except SidecarStartStoppedError as error:
            if self._signal is not None:
                return Ending(for_signal(self._signal), DriverErrorKind.INTERRUPTED, str(error))
            return None
        except SidecarError as error:
            return _sidecar_start_failed(error)
        return None

    def _tries(self, sidecar: Sidecar, token: str, first: DriverProcess | None) -> Ending:
        number = 1
        while True:
            driver = first or self._start_driver(sidecar.uri, token, number)
            first = None
            if isinstance(driver, Ending):
                return driver
            code, sidecar_died = driver.wait(sidecar, lambda: self._signal)
            self._end_driver_log()
            progress = self.progress
            progress.poll_events()
            output = driver.output
            if sidecar_died:
                message = (
                    f"the Copilot CLI sidecar exited with status {sidecar.returncode} "
                    f"while the driver was running (driver exit status {code}); its last "
                    f"output:\n{sidecar.tail() or '(none)'}"
                )
                self._record_attempt(
                    number, ExitCode.SIDECAR_DIED, HarnessErrorKind.SIDECAR_DIED, message
                )
                return Ending(ExitCode.SIDECAR_DIED, HarnessErrorKind.SIDECAR_DIED, message)
            error_kind = progress.error_kind or kind_of_exit(code)
            cause = cause_of_failure(code, progress.errors)
            failed = FailedTry(
                code,
                progress.error_kind,
                cause,
                progress.status_code,
                _text(progress.session_error.get("errorType")),
                progress.started_tools,
                bool(output.strip()),
            )
            retry = None
            if code != ExitCode.OK and self._signal is None:
                retry = next_delay(self.options.retry, failed, number, self._seconds_left())
            self._record_attempt(number, code, error_kind, cause, retry[0] if retry else None)
            if retry is None:
                self.answer = output
                shown = code == ExitCode.CONFIG and cause is not None  # its plain error lines
                return Ending(code, error_kind if code else None, cause, shown=shown)
            delay, cause = retry
            self._say(
                f"try {number} of {self.options.retry.tries} failed ({cause}); retrying in "
                f"{delay:g}s with a fresh session"
            )
            if not self._sleep(delay):
                return Ending(
                    for_signal(self._signal or signal.SIGTERM), DriverErrorKind.INTERRUPTED, cause
                )
            number += 1
            self.status.progress = Progress()
            self.status.label = f"try {number}/{self.options.retry.tries}"

    def _record_attempt(
        self,
        number: int,
        code: int,
        error_kind: str | None,
        message: str | None,
        retry_in_s: float | None = None,
    ) -> None:
        self.attempts.append(
            Attempt(
                number,
                code,
                error_kind if code else None,
                self._redactor.text(message) if message and code else None,
                retry_in_s,
            )
        )

    def _seconds_left(self) -> float | None:
        """Until the workflow's timeout (GH_AW_TIMEOUT_MINUTES), if one is set."""
        try:
            minutes = float(self.env.get(TIMEOUT_MINUTES, ""))
        except ValueError:
            return None
        if not 0 < minutes < 10**6:
            return None
        return minutes * 60 - (time.monotonic() - self._started)

    def _sleep(self, seconds: float) -> bool:
        """Wait `seconds`; False as soon as a stop signal arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._signal is not None:
                return False
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return self._signal is None

    # -- the driver's log ------------------------------------------------------------

    def _start_driver(
        self, sdk_uri: str, token: str, number: int = 1, *, ready_fd: int | None = None
    ) -> DriverProcess | Ending:
        """Start a try's driver, or say why it could not start. Its log is a group of
        its own in Actions (`_end_driver_log` closes it)."""
        if self.in_actions:
            title = f"Copilot driver log (try {number})"
            self.status.write_raw(workflow_commands.group_start(title))
        try:
            return DriverProcess.start(
                self.options.driver_command,
                env=self.env,
                sdk_uri=sdk_uri,
                token=token,
                on_log_line=self._driver_log_line,
                ready_fd=ready_fd,
            )
        except DriverStartError as error:
            self._end_driver_log()
            return Ending(ExitCode.CONFIG, HarnessErrorKind.DRIVER_NOT_STARTED, str(error))

    def _driver_log_line(self, line: str) -> None:
        """One line of the driver's stderr: learnt from, then shown redacted."""
        self.progress.read_log_line(line)
        self.status.print_line(self._redactor.text(line))

    def _end_driver_log(self) -> None:
        if self.in_actions:
            self.status.write_raw(workflow_commands.GROUP_END)

    # -- the account, signals and messages ----------------------------------------------

    def _report(self, ending: Ending) -> None:
        """The run's account on every exit (see `outputs`)."""
        outputs = Outputs(
            self.env, status=self.status, stdout=self.stdout, redactor=self._redactor, say=self._say
        )
        outputs.report(
            FinishedRun(
                ending,
                answer=self.answer,
                attempts=tuple(self.attempts),
                progress=self.progress,
                state_base=self._state_base,
                wall_started=self._wall_started,
                sidecar_log=self._sidecar_log,
                sandbox_settings=self.options.sandbox,
                sandbox=self._sandbox,
            )
        )

    def _install_signal_handlers(self) -> dict[int, signal._HANDLER]:
        def forward(signum: int, _frame: FrameType | None) -> None:
            if self._signal is None:
                self._signal = signum

        previous: dict[int, signal._HANDLER] = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.getsignal(signum)
            signal.signal(signum, forward)
        return previous

    def _say(self, message: str) -> None:
        self.status.print_line(f"{PREFIX} {self._redactor.text(message)}")


def _sidecar_start_failed(error: SidecarError) -> Ending:
    return Ending(
        ExitCode.SIDECAR_START_FAILED,
        HarnessErrorKind.SIDECAR_START_FAILED,
        f"the Copilot CLI sidecar could not start: {error}",
    )


def _free_port() -> int:
    """A port free on 127.0.0.1 now (the sidecar binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
