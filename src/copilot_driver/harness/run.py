"""One harness run: sidecar up, driver run in isolation, everything cleaned up.

    token -> sidecar (ready?) -> driver (secret-isolated env) -> wait, forwarding
    SIGTERM/SIGINT -> stop the sidecar -> sidecar log beside the events file ->
    step summary

The driver is any command (this package's by default). Both children are
started so that they die with the harness (see `processes`), and the sidecar
runs in its own process group, which is stopped as a whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import IO

from copilot_driver import processes
from copilot_driver.env import SERVER_ARGS, session_state_base_dir
from copilot_driver.exit_codes import ExitCode, from_returncode
from copilot_driver.harness.environment import (
    driver_environment,
    new_connection_token,
    sidecar_arguments,
)
from copilot_driver.harness.progress import Progress, StatusLine
from copilot_driver.harness.sidecar import Sidecar, SidecarError, locate_copilot_cli
from copilot_driver.permissions.config import ServerArgsError
from copilot_driver.redaction import Redactor

PREFIX = "[copilot-driver-harness]"
DRIVER_STOP_GRACE_S = 20.0
"""After forwarding a stop signal, how long the driver may take to clean up."""
SIDECAR_DEATH_GRACE_S = 5.0
"""After the sidecar dies, how long the driver may take to notice by itself."""
SIDECAR_STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class HarnessOptions:
    copilot: str | None
    port: int | None
    ready_timeout: float
    driver_command: Sequence[str]


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
        self.progress = Progress()
        interactive = self.stderr.isatty() and env.get("CI", "").lower() != "true"
        self.status = StatusLine(self.stderr, self.progress, enabled=interactive)
        self._signal: int | None = None
        self._redactor = Redactor()

    def run(self) -> int:
        try:
            binary = locate_copilot_cli(self.options.copilot, self.env)
        except SidecarError as error:
            self._error(str(error))
            return ExitCode.CONFIG
        token = new_connection_token()
        self._redactor = Redactor([token])
        if self.env.get("GITHUB_ACTIONS", "").lower() == "true":
            # The runner masks the value in every later log line.
            self.stdout.write(f"::add-mask::{token}\n")
            self.stdout.flush()
        base = session_state_base_dir(self.env, Path.cwd())
        started = time.time()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self._error(f"cannot create the session state folder {base}: {error.strerror}")
            return ExitCode.CONFIG
        log_path = base / f"sidecar-{stamp}-{os.getpid()}.log"
        try:
            extra_args, asked_port, log_level = sidecar_arguments(self.env.get(SERVER_ARGS.name))
        except ServerArgsError as error:
            self._error(str(error))
            return ExitCode.CONFIG
        port = self.options.port if self.options.port is not None else (asked_port or 0)

        previous = self._install_signal_handlers()
        try:
            try:
                sidecar = Sidecar.start(
                    binary,
                    token=token,
                    env=self.env,  # the platform token stays here: it is the sidecar's
                    port=port,
                    extra_args=extra_args,
                    log_level=log_level or "info",
                    ready_timeout=self.options.ready_timeout,
                    log_path=log_path,
                    die_with_parent=True,
                )
            except SidecarError as error:
                self._error(f"the Copilot CLI sidecar could not start: {error}")
                return ExitCode.SIDECAR_START_FAILED
            try:
                code = self._run_driver(sidecar, token)
            finally:
                sidecar.stop(grace=SIDECAR_STOP_GRACE_S)
                self.status.stop()
            self._after_run(base, log_path, started)
            return code
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    # -- the driver ----------------------------------------------------------

    def _run_driver(self, sidecar: Sidecar, token: str) -> int:
        env = driver_environment(self.env, sdk_uri=sidecar.uri, token=token)
        try:
            driver = subprocess.Popen(
                list(self.options.driver_command),
                env=env,
                stdin=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                preexec_fn=processes.die_with_parent,
            )
        except OSError as error:
            self._error(f"cannot start the driver {self.options.driver_command[0]}: {error}")
            return ExitCode.CONFIG
        assert driver.stderr is not None
        tee = threading.Thread(target=self._tee, args=(driver.stderr,), daemon=True)
        tee.start()
        self.status.start()

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
        tee.join(5)

        code = from_returncode(driver.returncode)
        if sidecar_died_at is not None:
            self._error(
                f"the Copilot CLI sidecar exited with status {sidecar.process.returncode} "
                f"while the driver was running (driver exit status {code}); its last output:\n"
                f"{sidecar.tail() or '(none)'}"
            )
            return ExitCode.SIDECAR_DIED
        return code

    def _tee(self, stream: IO[str]) -> None:
        for line in stream:
            self.progress.read_log_line(line)
            self.status.print_line(self._redactor.text(line))
        stream.close()

    # -- after the run ---------------------------------------------------------

    def _after_run(self, base: Path, log_path: Path, started: float) -> None:
        events = self.progress.events_file or _newest_events_file(base, started)
        if events is None:
            return
        if log_path.exists():
            with contextlib.suppress(OSError):
                log_path.replace(events.with_name("sidecar.log"))
        summary = self.env.get("GITHUB_STEP_SUMMARY")
        if summary:
            self._append_step_summary(Path(summary), events)

    def _append_step_summary(self, summary: Path, events: Path) -> None:
        from copilot_driver.report import load_timeline, render_markdown

        try:
            report = render_markdown(load_timeline(events))
            with summary.open("a", encoding="utf-8") as handle:
                handle.write(self._redactor.text(report).rstrip("\n") + "\n\n")
        except Exception as error:  # a report must never change the run's outcome
            self._error(f"could not write the step summary: {error}")

    # -- signals and messages ----------------------------------------------------

    def _install_signal_handlers(self) -> dict[int, signal._HANDLER]:
        def forward(signum: int, _frame: FrameType | None) -> None:
            if self._signal is None:
                self._signal = signum

        previous: dict[int, signal._HANDLER] = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.getsignal(signum)
            signal.signal(signum, forward)
        return previous

    def _error(self, message: str) -> None:
        self.status.print_line(f"{PREFIX} error: {self._redactor.text(message)}")


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
