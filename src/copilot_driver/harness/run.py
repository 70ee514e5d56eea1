"""One harness run: checks, sidecar up, the driver run (retried when transient), a report.

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

Outputs: stdout carries only the answer (the last try's stdout); logs,
workflow commands and the status line go to stderr. Under GitHub Actions
the token is masked first, the driver's log is a collapsible group, every
failure is an `::error` annotation with its fix, the step outputs go to
`$GITHUB_OUTPUT` and the report to `$GITHUB_STEP_SUMMARY`, on every exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import IO

from copilot_driver import processes, workflow_commands
from copilot_driver.env import (
    DRIVER_SECRETS,
    PLATFORM_TOKENS,
    SDK_READY_FD,
    SERVER_ARGS,
    TIMEOUT_MINUTES,
    in_github_actions,
    secrets_in,
    session_state_base_dir,
)
from copilot_driver.exit_codes import ExitCode, for_signal, from_returncode
from copilot_driver.harness.credentials import credential_problem, tokens_of
from copilot_driver.harness.environment import (
    driver_environment,
    new_connection_token,
    sidecar_arguments,
    sidecar_environment,
)
from copilot_driver.harness.outcome import explain
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
from copilot_driver.report import (
    SANDBOX_FILE,
    Attempt,
    RunOutcome,
    SandboxSummary,
    Timeline,
    load_timeline,
    render_step_summary,
    sandbox_record,
)
from copilot_driver.vocabulary import SIDECAR_LOG_NAME, DriverErrorKind, HarnessErrorKind

PREFIX = "[copilot-driver-harness]"
DRIVER_STOP_GRACE_S = 20.0
"""After forwarding a stop signal, how long the driver may take to clean up."""
SIDECAR_DEATH_GRACE_S = 5.0
"""After the sidecar dies, how long the driver may take to notice by itself."""
SIDECAR_STOP_GRACE_S = 5.0
ABANDONED_DRIVER_GRACE_S = 10.0
"""A driver told that its sidecar never started exits at once; this is the backstop."""


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


@dataclass(frozen=True)
class Ending:
    """How the run ended: the exit status, its kind and the cause in words."""

    exit_code: int
    error_kind: str | None = None
    message: str | None = None
    shown: bool = False
    """The message is the driver's own lines, already on stderr: only the fix is added."""


@dataclass
class _Try:
    """One driver process and what it printed."""

    process: subprocess.Popen[str]
    stdout: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)


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
        self._start_error = "the driver could not be started"
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
        first: _Try | None = None
        ready_pipe: int | None = None
        if self.options.overlap_start:
            read_end, ready_pipe = os.pipe()
            try:
                first = self._start_driver(f"http://127.0.0.1:{port}", token, ready_fd=read_end)
            finally:
                os.close(read_end)
            if first is None:
                os.close(ready_pipe)
                return self._driver_not_started()
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
                self._abandon(first)
            return failed
        return self._tries(sidecar, token, first)

    def _await_sidecar(self, sidecar: Sidecar, first: _Try | None) -> Ending | None:
        """Wait until the sidecar listens: None, or why the run ends here. A driver
        that already ended (its configuration refused) ends the wait: its verdict stands."""

        def stop_waiting() -> bool:
            driver_ended = first is not None and first.process.poll() is not None
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

    def _tries(self, sidecar: Sidecar, token: str, first: _Try | None) -> Ending:
        number = 1
        while True:
            current = first or self._start_driver(sidecar.uri, token, number)
            first = None
            if current is None:
                return self._driver_not_started()
            code, sidecar_died = self._wait_driver(current, sidecar, number)
            progress = self.progress
            progress.poll_events()
            output = "".join(current.stdout)
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
            error_kind = progress.error_kind or _kind_of_exit(code)
            cause = _cause(code, progress.errors)
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

    # -- one driver process ----------------------------------------------------------

    def _start_driver(
        self, sdk_uri: str, token: str, number: int = 1, *, ready_fd: int | None = None
    ) -> _Try | None:
        """Start a try's driver; its log is a group of its own in Actions."""
        env = driver_environment(self.env, sdk_uri=sdk_uri, token=token)
        if self.in_actions:
            title = f"Copilot driver log (try {number})"
            self.status.write_raw(workflow_commands.group_start(title))
        if ready_fd is not None:
            env[SDK_READY_FD.name] = str(ready_fd)
        try:
            process = subprocess.Popen(
                list(self.options.driver_command),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                pass_fds=(ready_fd,) if ready_fd is not None else (),
                preexec_fn=processes.die_with_parent,
            )
        except OSError as error:
            self._start_error = f"cannot start the driver {self.options.driver_command[0]}: {error}"
            if self.in_actions:
                self.status.write_raw(workflow_commands.GROUP_END)
            return None
        current = _Try(process)
        assert process.stdout is not None
        assert process.stderr is not None
        current.readers = [
            threading.Thread(target=self._tee, args=(process.stderr,), daemon=True),
            threading.Thread(target=_collect, args=(process.stdout, current.stdout), daemon=True),
        ]
        for reader in current.readers:
            reader.start()
        return current

    def _wait_driver(self, current: _Try, sidecar: Sidecar, number: int) -> tuple[int, bool]:
        """Wait for the driver (stop signals forwarded); its status, and whether the
        sidecar died meanwhile."""
        driver = current.process
        stop_sent_at: float | None = None  # when the driver was asked to stop
        sidecar_died_at: float | None = None
        while driver.poll() is None:
            now = time.monotonic()
            if sidecar_died_at is None and sidecar.process.poll() is not None:
                sidecar_died_at = now
            if stop_sent_at is None:
                if self._signal is not None:
                    driver.send_signal(self._signal)  # the driver cleans up first
                    stop_sent_at = now
                elif sidecar_died_at is not None and now - sidecar_died_at > SIDECAR_DEATH_GRACE_S:
                    driver.terminate()  # it did not notice by itself
                    stop_sent_at = now
            elif now - stop_sent_at > DRIVER_STOP_GRACE_S:
                driver.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                driver.wait(0.05)
        for reader in current.readers:
            reader.join(5)
        if self.in_actions:
            self.status.write_raw(workflow_commands.GROUP_END)
        return from_returncode(driver.returncode), sidecar_died_at is not None

    def _abandon(self, current: _Try) -> None:
        """A driver whose sidecar never started: it exits at end of file; make sure."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            current.process.wait(ABANDONED_DRIVER_GRACE_S)
        if current.process.poll() is None:
            current.process.kill()
            current.process.wait(5)
        for reader in current.readers:
            reader.join(5)
        if self.in_actions:
            self.status.write_raw(workflow_commands.GROUP_END)

    def _driver_not_started(self) -> Ending:
        return Ending(ExitCode.CONFIG, HarnessErrorKind.DRIVER_NOT_STARTED, self._start_error)

    def _tee(self, stream: IO[str]) -> None:
        for line in stream:
            self.progress.read_log_line(line)
            self.status.print_line(self._redactor.text(line))
        stream.close()

    # -- after the run ---------------------------------------------------------------

    def _report(self, ending: Ending) -> None:
        """The run's account on every exit: log line, annotation, outputs, summary, answer."""
        self.status.stop()
        events = self.progress.events_file
        if events is None and self._state_base is not None:
            events = _newest_events_file(self._state_base, self._wall_started)
        if events is not None and self._sidecar_log is not None and self._sidecar_log.exists():
            with contextlib.suppress(OSError):
                self._sidecar_log.replace(events.with_name(SIDECAR_LOG_NAME))
        sandbox = self._sandbox_summary()
        if events is not None:
            with contextlib.suppress(OSError):
                record = json.dumps(sandbox_record(sandbox), indent=2)
                events.with_name(SANDBOX_FILE).write_text(record + "\n", encoding="utf-8")
        for where, count in sandbox.egress_denied:
            self._say(f"sandbox: egress to {where} refused {count} time(s)")
        outcome = self._outcome(ending, sandbox)
        if outcome.message:
            lines = outcome.message.splitlines()
            if ending.shown and not self.in_actions:
                # The driver's lines are just above (in Actions they are folded in its log
                # group, so they are said again there).
                lines = [line for line in lines if line.startswith("how to fix: ")]
            for line in lines:
                self._say(line)
            if self.in_actions and outcome.title:
                self.status.write_raw(
                    workflow_commands.annotation("error", outcome.title, outcome.message or "")
                )
        timeline = _load_timeline(events)
        outputs_file = self.env.get("GITHUB_OUTPUT")
        if outputs_file:
            self._write_outputs(Path(outputs_file), ending, events, timeline)
        summary_file = self.env.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            self._append_step_summary(Path(summary_file), outcome, timeline)
        if self.answer:
            self.stdout.write(self._redactor.text(self.answer))
            self.stdout.flush()

    def _sandbox_summary(self) -> SandboxSummary:
        settings = self.options.sandbox
        sandbox = self._sandbox
        return SandboxSummary(
            mode=settings.mode,
            allowed_hosts=sandbox.allowlist.hosts() if sandbox else (),
            egress_denied=tuple(sandbox.denied_per_host()) if sandbox else (),
            passed_env=tuple(name for name in settings.pass_env if name in self.env),
        )

    def _outcome(self, ending: Ending, sandbox: SandboxSummary) -> RunOutcome:
        title = message = None
        if ending.exit_code != ExitCode.OK:
            cause = self._redactor.text(ending.message or f"exit status {ending.exit_code}")
            explanation = explain(
                ending.exit_code, ending.error_kind, ending.message, tokens=tokens_of(self.env)
            )
            title, message = explanation.title, f"error: {cause}"
            if explanation.fix:
                message += f"\nhow to fix: {explanation.fix}"
        return RunOutcome(
            ending.exit_code, ending.error_kind, title, message, tuple(self.attempts), sandbox
        )

    def _write_outputs(
        self, path: Path, ending: Ending, events: Path | None, timeline: Timeline | None
    ) -> None:
        progress = self.progress
        premium = timeline.usage.premium_requests if timeline and timeline.usage else None
        outputs = {
            "answer": self.answer.rstrip("\n"),
            "exit-code": str(ending.exit_code),
            "error-kind": ending.error_kind or "",
            "session-id": progress.session_id or "",
            "events-file": str(events or ""),
            "denials": str(progress.denials),
            "premium-requests": "" if premium is None else f"{premium:g}",
        }
        text = self._redactor.text(workflow_commands.outputs_block(outputs))
        try:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            self._say(f"error: cannot write the step outputs to {path}: {error.strerror}")

    def _append_step_summary(
        self, path: Path, outcome: RunOutcome, timeline: Timeline | None
    ) -> None:
        try:
            report = render_step_summary(outcome, timeline)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(self._redactor.text(report).rstrip("\n") + "\n\n")
        except Exception as error:  # a report must never change the run's outcome
            self._say(f"error: could not write the step summary: {error}")

    # -- signals and messages ----------------------------------------------------------

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


def _cause(code: int, errors: list[str]) -> str | None:
    """A failed try in the driver's words: its last error, or each refusal of its
    configuration (it lists every problem at once)."""
    if not errors or code == ExitCode.OK:
        return None
    return "\n".join(errors) if code == ExitCode.CONFIG else errors[-1]


def _kind_of_exit(code: int) -> str | None:
    """The error kind of a failed try whose driver did not name one."""
    if code == ExitCode.OK:
        return None
    return HarnessErrorKind.CONFIG if code == ExitCode.CONFIG else HarnessErrorKind.DRIVER_FAILED


def _collect(stream: IO[str], into: list[str]) -> None:
    for chunk in iter(lambda: stream.read(65536), ""):
        into.append(chunk)
    stream.close()


def _free_port() -> int:
    """A port free on 127.0.0.1 now (the sidecar binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _load_timeline(events: Path | None) -> Timeline | None:
    if events is None:
        return None
    try:
        return load_timeline(events)
    except Exception:  # a report must never change the run's outcome
        return None


def _newest_events_file(base: Path, since: float) -> Path | None:
    """For drivers whose log does not name the events file: the newest one."""
    candidates = []
    with contextlib.suppress(OSError):
        for path in base.glob("*/events.jsonl"):
            with contextlib.suppress(OSError):
                mtime = path.stat().st_mtime
                if mtime >= since - 1:
                    candidates.append((mtime, path))
    return max(candidates)[1] if candidates else None
