"""What every fault case must show, as reusable checks.

A fault case runs a driver (or an adapter) under a fault and then proves,
from the outside, four things: it ended within a bound, it said what
happened, it kept everything it wrote, and it left nothing behind that it
should not have: no secret in any artefact, no process still running.

- `OrphanWatch` makes the test process a child subreaper (Linux
  `PR_SET_CHILD_SUBREAPER`), so every process a driver leaves behind is
  re-parented to the test instead of to init, where it could not be seen.
- `scan_for_secrets` looks for every secret, and every 12-character piece of
  one, in texts and in every file under the given folders.
- `check_events_file` parses an events file line by line to its end.
- `TALLY` counts what the suite did, for the figures in docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver import LOG_PREFIX, records
from copilot_driver.errors import CopilotDriverError
from copilot_driver.testing.environment import TEST_PROVIDER_KEY
from copilot_driver.testing.fixtures import DRIVER_COMMAND, parse_log
from copilot_driver.vocabulary import LogEvent

SECRET_PIECE_CHARS = 12
"""A leaked piece this long of a secret counts as a leak (a 64-hex token has 53)."""

_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Tally:
    """Figures of one fault-suite run (`make reliability` prints them)."""

    cases: int = 0
    survived: int = 0
    bytes_scanned: int = 0
    files_scanned: int = 0
    orphan_checks: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "cases": self.cases,
            "survived": self.survived,
            "bytesScanned": self.bytes_scanned,
            "filesScanned": self.files_scanned,
            "orphanChecks": self.orphan_checks,
        }


TALLY = Tally()


class SecretLeakError(CopilotDriverError, AssertionError):
    """A secret, or a piece of one, is in an artefact (the message never shows it)."""


def secret_pieces(secret: str) -> set[str]:
    """The secret and every run of `SECRET_PIECE_CHARS` characters of it."""
    if len(secret) <= SECRET_PIECE_CHARS:
        return {secret} if secret else set()
    return {
        secret[start : start + SECRET_PIECE_CHARS]
        for start in range(len(secret) - SECRET_PIECE_CHARS + 1)
    }


def scan_for_secrets(
    secrets: Iterable[str],
    *,
    texts: Iterable[tuple[str, str]] = (),
    folders: Iterable[Path] = (),
    skip: Iterable[Path] = (),
) -> int:
    """Raise SecretLeakError if any secret piece is found; return the bytes scanned.

    `texts` are (name, text) pairs (stdout, stderr...). Every regular file
    under `folders` is read as bytes, so a leak in a binary or non-UTF-8 file
    is found too; `skip` names files that hold a secret on purpose (the
    sidecar's own token file, say).
    """
    pieces = [piece.encode() for secret in secrets for piece in sorted(secret_pieces(secret))]
    skipped = {path.resolve() for path in skip}
    scanned = 0

    def check(name: str, data: bytes) -> None:
        nonlocal scanned
        scanned += len(data)
        for piece in pieces:
            if piece in data:
                raise SecretLeakError(
                    f"{name} holds a {len(piece)}-character piece of a secret "
                    f"at offset {data.index(piece)}"
                )

    for name, text in texts:
        check(name, text.encode("utf-8", "surrogateescape"))
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not path.is_file() or path.resolve() in skipped:
                continue
            with contextlib.suppress(OSError):  # unreadable on purpose (a fault case)
                check(str(path), path.read_bytes())
                TALLY.files_scanned += 1
    TALLY.bytes_scanned += scanned
    return scanned


def check_events_file(path: Path) -> list[dict[str, Any]]:
    """Every line of `path` is a JSON object, the last one included."""
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"{path}: the last line is cut"
    found = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        record = records.parse_line(line)
        assert record is not None, f"{path}:{number} is not a JSON object: {line[:300]!r}"
        found.append(record)
    return found


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    state: str
    command: str


def _children_of(parent: int) -> dict[int, ProcessInfo]:
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_line = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses.
        state, ppid = stat_line[stat_line.rindex(")") + 2 :].split()[:2]
        if int(ppid) == parent:
            found[int(entry.name)] = ProcessInfo(int(entry.name), state, command.strip())
    return found


@dataclass
class OrphanWatch:
    """Processes a run left behind, seen through this process as subreaper."""

    baseline: set[int] = field(default_factory=set)

    @staticmethod
    def become_subreaper(on: bool = True) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")

    def snapshot(self) -> None:
        """Remember the children alive now (sidecars, servers a test started)."""
        self.baseline = set(_children_of(os.getpid()))

    def leftovers(self, *, grace_s: float = 3.0, ignore: Iterable[int] = ()) -> list[ProcessInfo]:
        """New children still running after `grace_s`; each is killed and reaped.

        Exited orphans (zombies re-parented here) are reaped and not counted:
        they ended by themselves.
        """
        TALLY.orphan_checks += 1
        ignored = self.baseline | set(ignore)
        deadline = time.monotonic() + grace_s
        while True:
            new = {
                pid: info for pid, info in _children_of(os.getpid()).items() if pid not in ignored
            }
            for pid, info in list(new.items()):
                if info.state == "Z":
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
                    del new[pid]
            if not new or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        for pid in new:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        return list(new.values())


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    """This process collects orphans while the block runs."""
    OrphanWatch.become_subreaper(True)
    try:
        yield
    finally:
        OrphanWatch.become_subreaper(False)


PLATFORM_TOKENS = {
    "GITHUB_TOKEN": "ghp_Fq7Lz2Wn9Kd4Rt6Yb1Hx8Mv3Pc5Js0Ge7Ua",
    "GH_TOKEN": "gho_Tb4Nw8Qe2Zr6Lm1Vk9Xs3Hd7Yp5Cf0Ja2Gu",
    "COPILOT_GITHUB_TOKEN": "github_pat_11Ar5Kq8Wm2Zt7Lx4Bn9Vc3Hs6Jd1Pe0Fy",
}
"""Planted in fault runs' environments: the driver must never read or echo them.
No long runs of one character: twelve zeros would match a git reflog's null id."""


class HungError(CopilotDriverError, AssertionError):
    """The process outlived its bound."""


@dataclass
class Ended:
    """What a bounded process left: exit code, output, and how long it took."""

    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    """From the start, or from the fault when one was marked."""


class BoundedProcess:
    """A subprocess that must end by itself within a bound after a fault."""

    def __init__(self, command: list[str], env: dict[str, str], **popen: Any) -> None:
        self.started = time.monotonic()
        self.fault_at: float | None = None
        self.process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="surrogateescape",
            **popen,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def mark_fault(self) -> None:
        """The bound counts from now."""
        self.fault_at = time.monotonic()

    def send(self, signum: int) -> None:
        self.process.send_signal(signum)
        self.mark_fault()

    def end(self, bound_s: float) -> Ended:
        """Wait at most `bound_s` (from the fault, or the start); HungError after."""
        since = self.fault_at if self.fault_at is not None else self.started
        remaining = max(0.1, since + bound_s - time.monotonic())
        try:
            stdout, stderr = self.process.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            self.process.kill()
            stdout, stderr = self.process.communicate()
            raise HungError(
                f"still running {bound_s:g}s after the {'fault' if self.fault_at else 'start'}"
                f"; stderr tail: {stderr[-2000:]}"
            ) from None
        return Ended(self.process.returncode, stdout, stderr, time.monotonic() - since)

    def kill(self) -> None:
        """Cleanup for a failed test: never leave the process running."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


class FaultCase:
    """One case's process, and the checks it must pass when it has ended."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.secrets: list[str] = [TEST_PROVIDER_KEY, *PLATFORM_TOKENS.values()]
        """Add the sidecar's token (or any other secret of the case) here."""
        self.skip_files: list[Path] = []
        """Files that hold a secret on purpose (a sidecar's own log, say)."""
        self.orphans = OrphanWatch()
        self._watching = False
        self._processes: list[BoundedProcess] = []

    def watch(self) -> None:
        """Children alive now are the test's own; anything new later is a leftover."""
        self.orphans.snapshot()
        self._watching = True

    def start(
        self, env: dict[str, str], command: Sequence[str] = DRIVER_COMMAND, **popen: Any
    ) -> BoundedProcess:
        if not self._watching:
            self.watch()
        process = BoundedProcess(list(command), {**env, **PLATFORM_TOKENS}, **popen)
        self._processes.append(process)
        return process

    def run(
        self, env: dict[str, str], *, bound_s: float, command: Sequence[str] = DRIVER_COMMAND
    ) -> Ended:
        return self.start(env, command).end(bound_s)

    def kill_all(self) -> None:
        """The fixture's cleanup: whatever happened, no started process outlives the test."""
        for process in self._processes:
            process.kill()

    def check(
        self,
        ended: Ended,
        *,
        exit_code: int,
        error_kind: str | None = None,
        mentions: Sequence[str] = (),
        state_dir: Path | None = None,
    ) -> list[dict[str, Any]]:
        """The common checks; returns the events of the (single) session, if any."""
        assert ended.exit_code == exit_code, (
            f"exit {ended.exit_code}, expected {exit_code}; stderr tail: {ended.stderr[-3000:]}"
        )
        if exit_code != 0:
            self._check_error_line(ended, error_kind, mentions)
        events: list[dict[str, Any]] = []
        if state_dir is not None and state_dir.is_dir():
            for events_file in sorted(state_dir.rglob("events.jsonl")):
                events = check_events_file(events_file)
        self.check_clean(ended)
        return events

    def check_clean(self, ended: Ended | None = None) -> None:
        """No secret in anything written, and no process left behind."""
        texts = [("stdout", ended.stdout), ("stderr", ended.stderr)] if ended else []
        scan_for_secrets(self.secrets, texts=texts, folders=[self.tmp_path], skip=self.skip_files)
        ignore = [process.pid for process in self._processes]
        leftovers = self.orphans.leftovers(ignore=ignore)
        assert not leftovers, f"processes left behind: {leftovers}"

    @staticmethod
    def _check_error_line(ended: Ended, error_kind: str | None, mentions: Sequence[str]) -> None:
        entries = parse_log(ended.stderr)
        if entries:
            errors = [entry for entry in entries if entry.get("event") == LogEvent.ERROR]
            assert len(errors) == 1, f"expected one error summary, got: {ended.stderr[-3000:]}"
            (error,) = errors
            assert entries[-1] is error, "the error summary is not the last log entry"
            message = str(error.get("message", ""))
            if error_kind is not None:
                assert error.get("errorKind") == error_kind, error
        else:  # a configuration error: plain `[copilot-sdk-driver] error:` lines
            lines = [line for line in ended.stderr.splitlines() if line.strip()]
            assert lines, "no error line at all"
            assert all(line.startswith(f"{LOG_PREFIX} error: ") for line in lines), lines
            message = "\n".join(lines)
        for word in mentions:
            assert word in message, f"{word!r} not in the error line: {message}"
