"""The driver as a child process: start it, read what it prints, wait for it to end.

A driver is any command (this package's by default). It runs with the
harness's environment minus every GitHub credential, plus the sidecar's
address and the run's token (`environment.driver_environment`). Given a ready
fd (COPILOT_SDK_READY_FD) it may start before the sidecar listens: it waits
on that pipe, connecting at a line and giving up at end of file. It dies with
the harness (see `processes`).

Both output streams are drained by threads from the start: stderr, its log,
is handed on line by line as it comes (the harness learns from it and shows
it), each line and the whole bounded (`bounded_lines`); stdout, the answer,
is kept whole up to MAX_ANSWER_BYTES. Waiting forwards a stop signal (the
driver cleans up first, SIGKILL after a grace period) and stops a driver that
has not noticed by itself that its sidecar died.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from copilot_driver import processes
from copilot_driver.env import SDK_READY_FD
from copilot_driver.errors import CopilotDriverError
from copilot_driver.exit_codes import ExitCode, from_returncode
from copilot_driver.harness.bounded_lines import (
    MAX_ANSWER_BYTES,
    MAX_LINE_BYTES,
    MAX_LOG_BYTES,
    bounded_lines,
)
from copilot_driver.harness.environment import driver_environment, own_import_root
from copilot_driver.harness.sidecar import Sidecar
from copilot_driver.vocabulary import HarnessErrorKind

DRIVER_STOP_GRACE_S = 20.0
"""After forwarding a stop signal, how long the driver may take to clean up."""
SIDECAR_DEATH_GRACE_S = 5.0
"""After the sidecar dies, how long the driver may take to notice by itself."""
ABANDONED_DRIVER_GRACE_S = 10.0
"""A driver told that its sidecar never started exits at once; this is the backstop."""


class DriverStartError(CopilotDriverError, RuntimeError):
    """The driver command could not be started."""


class DriverProcess:
    """A running driver. Use `DriverProcess.start(...)`."""

    def __init__(
        self, process: subprocess.Popen[bytes], on_log_line: Callable[[str], None]
    ) -> None:
        self.process = process
        self._stdout: list[str] = []
        assert process.stdout is not None
        assert process.stderr is not None
        self._readers = [
            threading.Thread(target=_tee, args=(process.stderr, on_log_line), daemon=True),
            threading.Thread(target=_collect, args=(process.stdout, self._stdout), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        sdk_uri: str,
        token: str,
        on_log_line: Callable[[str], None],
        ready_fd: int | None = None,
        workspace: Path | None = None,
    ) -> DriverProcess:
        """Start `command` as the driver of the sidecar at `sdk_uri`.

        `env` is the harness's environment (`driver_environment` makes the
        driver's from it); `on_log_line` gets each stderr line, from a reader
        thread; with `ready_fd` the driver waits on that pipe before it
        connects. Raises DriverStartError when the command cannot run."""
        full_env = driver_environment(
            env,
            sdk_uri=sdk_uri,
            token=token,
            workspace=workspace,
            own_import_root=own_import_root(),
        )
        if ready_fd is not None:
            full_env[SDK_READY_FD.name] = str(ready_fd)
        try:
            process = subprocess.Popen(
                list(command),
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(ready_fd,) if ready_fd is not None else (),
                preexec_fn=processes.die_with_parent,
            )
        except OSError as error:
            raise DriverStartError(f"cannot start the driver {command[0]}: {error}") from error
        return cls(process, on_log_line)

    @property
    def output(self) -> str:
        """What it printed on stdout: all of it once `wait` has returned."""
        return "".join(self._stdout)

    def ended(self) -> bool:
        return self.process.poll() is not None

    def wait(self, sidecar: Sidecar, stop_signal: Callable[[], int | None]) -> tuple[int, bool]:
        """Wait for the driver to end: its exit status as a shell reports it, and
        whether the sidecar died meanwhile. A signal `stop_signal()` names is
        forwarded; a driver that outlives the sidecar by SIDECAR_DEATH_GRACE_S is
        terminated; either way it is killed after DRIVER_STOP_GRACE_S."""
        driver = self.process
        stop_sent_at: float | None = None  # when the driver was asked to stop
        sidecar_died_at: float | None = None
        while driver.poll() is None:
            now = time.monotonic()
            if sidecar_died_at is None and sidecar.process.poll() is not None:
                sidecar_died_at = now
            if stop_sent_at is None:
                signum = stop_signal()
                if signum is not None:
                    driver.send_signal(signum)  # the driver cleans up first
                    stop_sent_at = now
                elif sidecar_died_at is not None and now - sidecar_died_at > SIDECAR_DEATH_GRACE_S:
                    driver.terminate()  # it did not notice by itself
                    stop_sent_at = now
            elif now - stop_sent_at > DRIVER_STOP_GRACE_S:
                driver.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                driver.wait(0.05)
        self._join_readers()
        return from_returncode(driver.returncode), sidecar_died_at is not None

    def abandon(self) -> None:
        """End a driver whose sidecar never started: told so by end of file on its
        ready pipe it exits by itself; killed after ABANDONED_DRIVER_GRACE_S."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(ABANDONED_DRIVER_GRACE_S)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self._join_readers()

    def _join_readers(self) -> None:
        for reader in self._readers:
            reader.join(5)


def kind_of_exit(code: int) -> str | None:
    """The error kind of a failed try whose driver did not name one."""
    if code == ExitCode.OK:
        return None
    return HarnessErrorKind.CONFIG if code == ExitCode.CONFIG else HarnessErrorKind.DRIVER_FAILED


def cause_of_failure(code: int, errors: list[str]) -> str | None:
    """A failed try in the driver's words: its last error, or each refusal of its
    configuration (it lists every problem at once)."""
    if not errors or code == ExitCode.OK:
        return None
    return "\n".join(errors) if code == ExitCode.CONFIG else errors[-1]


def _tee(stream: IO[bytes], on_line: Callable[[str], None]) -> None:
    """Each log line, as text with its newline, bounded (`bounded_lines`)."""
    for raw in bounded_lines(stream, max_line=MAX_LINE_BYTES, max_total=MAX_LOG_BYTES):
        on_line(raw.decode("utf-8", "replace").rstrip("\r") + "\n")
    stream.close()


def _collect(stream: IO[bytes], into: list[str]) -> None:
    """The answer, whole up to MAX_ANSWER_BYTES; past it, one line says what was not kept
    (the pipe is drained to its end all the same)."""
    kept = bytearray()
    not_kept = 0
    for chunk in iter(lambda: stream.read(65536), b""):
        room = MAX_ANSWER_BYTES - len(kept)
        kept += chunk[:room]
        not_kept += max(0, len(chunk) - room)
    stream.close()
    text = kept.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    if not_kept:
        text += f"\n[... {not_kept} more bytes of the answer not kept: over the limit of "
        text += f"{MAX_ANSWER_BYTES} bytes]\n"
    into.append(text)
