"""One harness run: the checks, the sidecar, the driver's tries (retried when transient).

    checks (`preflight`) -> sidecar starting ... driver importing
    (overlapped) -> sidecar listens -> driver connects -> wait, forwarding
    SIGTERM/SIGINT -> a transient failure with no side effects? fresh try
    -> stop the sidecar -> the run's account (`outputs`) -> the answer

The driver is any command (this package's by default; see `driver_process`).
This package's driver is started while the sidecar starts and waits on a pipe
until the sidecar listens (COPILOT_SDK_READY_FD), so a run costs about the
larger of the two start-ups, not their sum; another driver starts once the
sidecar listens. Both children die with the harness (see `processes`); the
sidecar runs in its own process group, which is stopped as a whole.

The harness's lines, workflow commands and the status line go to stderr
(`console`). Under GitHub Actions each try's driver log is a collapsible group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

from copilot_driver import workflow_commands
from copilot_driver.env import in_github_actions
from copilot_driver.env_commands import CI, HARNESS_TIMEOUT_MINUTES
from copilot_driver.exit_codes import ExitCode, for_signal
from copilot_driver.harness.console import Console
from copilot_driver.harness.driver_process import (
    DriverProcess,
    DriverStartError,
    cause_of_failure,
    kind_of_exit,
)
from copilot_driver.harness.outputs import Ending, FinishedRun, Outputs
from copilot_driver.harness.preflight import Preflight
from copilot_driver.harness.progress import Progress, StatusLine
from copilot_driver.harness.retry import FailedTry, RetryPolicy, next_delay
from copilot_driver.harness.sandbox import SandboxSettings
from copilot_driver.harness.sidecar import Sidecar, SidecarError, SidecarStartStoppedError
from copilot_driver.inert_text import unwrapped
from copilot_driver.report import Attempt
from copilot_driver.vocabulary import DriverErrorKind, HarnessErrorKind

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
    prompt_file: str | None = None
    """PROMPT_FILE as given (the environment's GH_AW_PROMPT names it, made absolute)."""
    usage_problems: tuple[str, ...] = ()
    """The command line's problems: said with every other one, and nothing starts."""


class Harness:
    """One run of the harness: `run()` once, for its exit status."""

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
        interactive = self.stderr.isatty() and env.get(CI.name, "").lower() != "true"
        self.status = StatusLine(self.stderr, enabled=interactive)
        self.console = Console(self.status, in_actions=self.in_actions)
        self.attempts: list[Attempt] = []
        self.answer = ""
        self._started = time.monotonic()
        self._wall_started = time.time()
        self._signal: int | None = None
        self._preflight = Preflight(
            self.env,
            self.console,
            copilot=options.copilot,
            port=options.port,
            overlap_start=options.overlap_start,
            sandbox=options.sandbox,
            driver_command=options.driver_command,
            prompt_file=options.prompt_file,
            usage_problems=options.usage_problems,
        )
        self._sidecar_log: Path | None = None

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

    # -- the sidecar and the tries -------------------------------------------------

    def _run(self) -> Ending:
        plan = self._preflight.check()
        if isinstance(plan, Ending):
            return plan
        sandbox = self._preflight.sandbox
        self._sidecar_log = plan.log_path
        self.progress.phase = "starting the Copilot CLI sidecar"
        self.status.start()
        try:
            sidecar = Sidecar.launch(
                plan.binary,
                token=plan.token,
                env=plan.env,
                credentials=plan.credentials,  # the platform token is the sidecar's alone
                sandbox=sandbox,
                port=plan.port,
                login_args=plan.login_args,
                extra_args=plan.extra_args,
                log_level=plan.log_level or "info",
                log_path=plan.log_path,
                die_with_parent=True,
            )
        except SidecarError as error:
            if sandbox is not None:
                sandbox.close()  # its proxy and private files; no tool ran
            return _sidecar_start_failed(error)
        try:
            return self._with_sidecar(sidecar, plan.token, sidecar.public_port or plan.port)
        finally:
            sidecar.stop(grace=SIDECAR_STOP_GRACE_S)
            if sandbox is not None:
                for removed in sandbox.close():
                    self.console.say(f"warning: sandbox: {removed}")

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
                self.answer = unwrapped(output)  # the driver's own wrapping (inert_text)
                shown = code == ExitCode.CONFIG and cause is not None  # its plain error lines
                return Ending(code, error_kind if code else None, cause, shown=shown)
            delay, cause = retry
            self.console.say(
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
                self.console.redactor.text(message) if message and code else None,
                retry_in_s,
            )
        )

    def _seconds_left(self) -> float | None:
        """Until the workflow's timeout (GH_AW_TIMEOUT_MINUTES), if one is set."""
        try:
            minutes = float(self.env.get(HARNESS_TIMEOUT_MINUTES.name, ""))
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
        self.console.command(workflow_commands.group_start(f"Copilot driver log (try {number})"))
        try:
            return DriverProcess.start(
                self.options.driver_command,
                env=self.env,
                sdk_uri=sdk_uri,
                token=token,
                on_log_line=self._driver_log_line,
                ready_fd=ready_fd,
                workspace=self._preflight.workspace,
            )
        except DriverStartError as error:
            self._end_driver_log()
            return Ending(ExitCode.CONFIG, HarnessErrorKind.DRIVER_NOT_STARTED, str(error))

    def _driver_log_line(self, line: str) -> None:
        """One line of the driver's stderr: learnt from, then shown."""
        self.progress.read_log_line(line)
        self.console.show(line)

    def _end_driver_log(self) -> None:
        self.console.command(workflow_commands.GROUP_END)

    # -- the account and signals ------------------------------------------------------

    def _report(self, ending: Ending) -> None:
        """The run's account on every exit (see `outputs`)."""
        preflight = self._preflight
        run = FinishedRun(
            ending,
            answer=self.answer,
            attempts=tuple(self.attempts),
            progress=self.progress,
            state_base=preflight.state_base,
            wall_started=self._wall_started,
            sidecar_log=self._sidecar_log,
            sandbox_settings=self.options.sandbox,
            sandbox=preflight.sandbox,
        )
        Outputs(self.env, console=self.console, stdout=self.stdout).report(run)

    def _install_signal_handlers(self) -> dict[int, signal._HANDLER]:
        def forward(signum: int, _frame: FrameType | None) -> None:
            if self._signal is None:
                self._signal = signum

        previous: dict[int, signal._HANDLER] = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.getsignal(signum)
            signal.signal(signum, forward)
        return previous


def _sidecar_start_failed(error: SidecarError) -> Ending:
    return Ending(
        ExitCode.START_FAILED,
        HarnessErrorKind.SIDECAR_START_FAILED,
        f"the Copilot CLI sidecar could not start: {error}",
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
