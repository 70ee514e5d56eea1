"""Bash as the judge of the shell reader, fast enough for tens of thousands of lines.

The strace oracle (`copilot_driver.testing.bash_oracle`) sees everything bash
does, but a traced run costs tens of milliseconds: a few thousand lines per
test run. Reading command lines goes wrong in the corners (quotes glued to a
descriptor's digits, a continuation inside an operator), and a corner is only
hit by many lines. So this module runs lines the way the runtime does
(`/bin/bash --norc --noprofile -c LINE`, stdin /dev/null, a scratch folder)
with a PATH holding only *argv printers*: one small dash script, linked under
every program name, that appends to a log what bash gave it:

- its argv (`argv[0]` is the program name, which is what the policy reads as
  `words[0]`),
- the state of its descriptors 0-9 (`n` /dev/null, `o` bash's standard
  output, `e` bash's standard error, `p` a pipe, `-` closed, `?` anything
  else): the redirections bash really performed, descriptor by descriptor,
- and it exits with the status the program was given (0, or 1 for the
  programs that "fail"), so `&&` and `||` skip some commands and not others.

`expect(commands, statuses)` derives the same record from a reading of the
line (`copilot_driver.permissions.bash.Command`s): which commands run, in
which order, with which argv and descriptors. `differences(run, expected)`
lists where bash and the reading part: another argv or order, another
descriptor, a message bash wrote (a syntax error, an unknown command), a
file created or changed in the scratch folder.

Runs go on several lanes at once (threads, each with its own folder and log),
since each run is mostly waiting for exec. Needs /bin/bash and /bin/dash.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.errors import CopilotDriverError
from copilot_driver.permissions.bash import Command, Redirection

BASH = "/bin/bash"
"""The runtime's shell (the Copilot CLI runs `/bin/bash --norc --noprofile -c`)."""
DASH = "/bin/dash"
"""The printers' interpreter: starts in about a millisecond (Python would take thirty)."""
OBSERVED_FDS = 10
"""Descriptors 0-9 are reported by every printer."""
FILES_IN_THE_WORKING_FOLDER = ("a.txt", "b.txt", "-c", "1")
"""So that a glob bash expands shows in argv, and a write to one of them shows as a change."""
TIMEOUT_S = 20.0
_PRINTER = r"""#!/bin/dash
# An argv printer: see copilot_driver.testing.argv_printer.
s=
for f in 0 1 2 3 4 5 6 7 8 9; do
  p=/proc/self/fd/$f
  if [ ! -e "$p" ]; then s=$s-
  elif [ "$p" -ef /dev/null ]; then s=${s}n
  elif [ "$p" -ef "$ARGV_OUT" ]; then s=${s}o
  elif [ "$p" -ef "$ARGV_ERR" ]; then s=${s}e
  elif [ -p "$p" ]; then s=${s}p
  else s=$s?; fi
done
printf '%s\0' "$s" "$#" "${0##*/}" "$@" >>"$ARGV_LOG"
"""
"""One `printf` builtin call: one write(2) of the whole record to a log opened
O_APPEND, so the members of a pipeline never interleave their records."""


class ArgvPrinterUnavailableError(CopilotDriverError, RuntimeError):
    """bash or dash cannot run here, or the printers do not work."""


@dataclass(frozen=True)
class Record:
    """One program bash executed."""

    fds: str
    """The state of descriptors 0-9, one letter each (see the module)."""
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    line: str
    exit_code: int
    records: tuple[Record, ...]
    """In the order the programs wrote them (within a pipeline, any order)."""
    stderr: str
    """What bash wrote on its standard error (the printers write nothing)."""
    changed_files: tuple[str, ...]
    """Names in the scratch folder created, removed or changed by the run."""


@dataclass(frozen=True)
class Expected:
    """What a reading of a line says bash will do with it, given the printers' statuses."""

    pipelines: tuple[tuple[Record, ...], ...]
    """The records of each pipeline that runs, in order (a pipeline's members run at once)."""
    exit_code: int
    errors: bool
    """A redirection bash cannot perform (an unopened descriptor, an ambiguous target) or
    an unknown program: bash then says so on standard error and runs nothing for it."""


class ArgvPrinter:
    """Printers under `folder` for `statuses` (program name -> exit status); runs lines."""

    def __init__(self, folder: Path, statuses: Mapping[str, int], *, lanes: int = 0) -> None:
        for program in (BASH, DASH):
            if not os.access(program, os.X_OK):
                raise ArgvPrinterUnavailableError(f"{program} is not installed")
        self.statuses = dict(statuses)
        self.stubs = folder / "printers"
        self.stubs.mkdir(parents=True, exist_ok=True)
        exits = "\n".join(
            f"  {name}) exit {status};;" for name, status in sorted(statuses.items()) if status
        )
        printer = self.stubs / ".printer"
        printer.write_text(_PRINTER + f'case "${{0##*/}}" in\n{exits}\nesac\n')
        printer.chmod(0o755)
        for name in statuses:
            (self.stubs / name).symlink_to(printer.name)
        count = lanes or min(4, max(2, len(os.sched_getaffinity(0))))
        self._lanes: queue.SimpleQueue[_Lane] = queue.SimpleQueue()
        for index in range(count):
            self._lanes.put(_Lane(folder / f"lane-{index}", self.stubs))
        self.lanes = count
        name = next(iter(statuses))
        check = self.run([f"{name} 'a b' 2>/dev/null"])[0]
        if check.records != (Record("non" + "-" * (OBSERVED_FDS - 3), (name, "a b")),):
            raise ArgvPrinterUnavailableError(f"the argv printers do not work here: {check}")

    def run(self, lines: Sequence[str]) -> list[Run]:
        """Each line run once, on the lanes at once; the runs in the order of `lines`."""
        with ThreadPoolExecutor(self.lanes) as pool:
            return list(pool.map(self._run, lines))

    def _run(self, line: str) -> Run:
        with self._lane() as lane:
            return lane.run(line)

    @contextmanager
    def _lane(self) -> Iterator[_Lane]:
        lane = self._lanes.get()
        try:
            yield lane
        finally:
            self._lanes.put(lane)


class _Lane:
    """One run at a time: a scratch folder, bash's output files and the printers' log."""

    def __init__(self, folder: Path, stubs: Path) -> None:
        self.work = folder / "work"
        self.work.mkdir(parents=True)
        for name in FILES_IN_THE_WORKING_FOLDER:
            (self.work / name).write_text(name)
        self.baseline = _listing(self.work)
        self.log, self.out, self.err = folder / "log", folder / "out", folder / "err"
        self.env = {
            "PATH": str(stubs),
            "HOME": str(self.work),
            "LC_ALL": "C.UTF-8",
            "ARGV_LOG": str(self.log),
            "ARGV_OUT": str(self.out),
            "ARGV_ERR": str(self.err),
        }

    def run(self, line: str) -> Run:
        self.log.write_bytes(b"")
        with self.out.open("wb") as out, self.err.open("wb") as err:
            process = subprocess.Popen(
                [BASH, "--norc", "--noprofile", "-c", line],
                cwd=self.work,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            try:
                exit_code = process.wait(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise
        changed = self._restore()
        return Run(
            line,
            exit_code,
            tuple(_records(self.log.read_bytes())),
            self.err.read_text("utf-8", "replace"),
            changed,
        )

    def _restore(self) -> tuple[str, ...]:
        """What the run changed in the scratch folder, put back as it was."""
        now = _listing(self.work)
        if now == self.baseline:
            return ()
        changed = sorted({name for name, _ in now ^ self.baseline})
        for name in changed:
            path = self.work / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            if name in FILES_IN_THE_WORKING_FOLDER:
                path.write_text(name)
        return tuple(changed)


def _listing(folder: Path) -> frozenset[tuple[str, int]]:
    """Each name in `folder` with its size (a write to a file there changes it)."""
    with os.scandir(folder) as entries:
        return frozenset((e.name, e.stat(follow_symlinks=False).st_size) for e in entries)


def _records(log: bytes) -> Iterator[Record]:
    fields = log.split(b"\0")
    index = 0
    while index + 2 < len(fields):
        fds, count = fields[index].decode(), int(fields[index + 1])
        argv = fields[index + 2 : index + 3 + count]
        yield Record(fds, tuple(arg.decode("utf-8", "surrogateescape") for arg in argv))
        index += 3 + count


# -- what a reading predicts ----------------------------------------------------------------------

_PIPES = ("|", "|&")
_INPUT_OPERATORS = ("<", "<>", "<&")
_FILE_OPERATORS = ("<", ">", ">>", ">|", "<>")
_BOTH_OPERATORS = ("&>", "&>>")
_NOT_FOUND = 127


def expect(commands: Sequence[Command], statuses: Mapping[str, int]) -> Expected:
    """What bash does with a line read as `commands`, when each program exits with its
    status: pipelines run or are skipped by `&&` and `||` on the last status, each
    command's descriptors are the pipes and then its redirections, left to right."""
    pipelines: list[tuple[Record, ...]] = []
    status, errors = 0, False
    start = 0
    while start < len(commands):
        end = start + 1
        while end < len(commands) and commands[end].follows in _PIPES:
            end += 1
        follows = commands[start].follows
        if follows not in ("&&", "||") or (follows == "&&") == (status == 0):
            records: list[Record] = []
            for index in range(start, end):
                after = commands[index + 1].follows if index + 1 < end else ""
                record = _record(commands[index], piped_in=index > start, piped_out=after)
                if record is None or commands[index].name not in statuses:
                    errors = True
                    status = 1 if record is None else _NOT_FOUND
                else:
                    records.append(record)
                    status = statuses[record.argv[0]]
            pipelines.append(tuple(records))
        start = end
    return Expected(tuple(pipelines), status, errors)


def _record(command: Command, *, piped_in: bool, piped_out: str) -> Record | None:
    """The record the command's printer writes, or None when a redirection fails."""
    fds = {0: "n", 1: "o", 2: "e"}
    if piped_in:
        fds[0] = "p"
    if piped_out:
        fds[1] = "p"
    for redirection in command.redirections:
        if not _redirect(fds, redirection):
            return None
    if piped_out == "|&":  # bash's implicit `2>&1`, after the command's own redirections
        fds[2] = fds[1]
    state = "".join(fds.get(fd, "-") for fd in range(OBSERVED_FDS))
    return Record(state, command.words)


def _redirect(fds: dict[int, str], redirection: Redirection) -> bool:
    """Apply one redirection to the descriptor table; False where bash reports an error."""
    fd_text, operator, target = redirection
    opened = "n" if target == "/dev/null" else "?"
    fd = int(fd_text) if fd_text else 0 if operator in _INPUT_OPERATORS else 1
    if operator in _FILE_OPERATORS:
        fds[fd] = opened
    elif operator in _BOTH_OPERATORS:
        fds[1] = fds[2] = opened
    elif target.isascii() and target.isdigit():  # `N>&M`, `N<&M`: a copy of M
        source = fds.get(int(target), "-")
        if source == "-":
            return False  # bash: "M: Bad file descriptor"
        fds[fd] = source
    elif target == "-":
        fds.pop(fd, None)
    elif operator == ">&" and fd == 1:  # `>&FILE` and `1>&FILE` are `&>FILE`
        fds[1] = fds[2] = opened
    else:
        return False  # bash: "FILE: ambiguous redirect"
    return True


def differences(run: Run, expected: Expected) -> list[str]:
    """Where bash, running the line, did other than the reading says (empty: agreement)."""
    found: list[str] = []
    observed = list(run.records)
    wanted = [record for pipeline in expected.pipelines for record in pipeline]
    if len(observed) != len(wanted):
        found.append(f"bash ran {_show(observed)} where the reading says {_show(wanted)}")
    else:
        at = 0
        for pipeline in expected.pipelines:
            ran = observed[at : at + len(pipeline)]
            at += len(pipeline)
            if sorted(ran, key=_order) != sorted(pipeline, key=_order):
                found.append(f"bash ran {_show(ran)} where the reading says {_show(pipeline)}")
    if run.exit_code != expected.exit_code:
        found.append(f"bash exited {run.exit_code}, the reading says {expected.exit_code}")
    if run.stderr and not expected.errors:
        found.append(f"bash said: {run.stderr.strip()[:300]}")
    if run.changed_files:
        found.append(f"files changed in the working folder: {list(run.changed_files)}")
    return found


def _order(record: Record) -> tuple[tuple[str, ...], str]:
    return (record.argv, record.fds)


def _show(records: Sequence[Record]) -> str:
    return "[" + ", ".join(f"{list(r.argv)} fds={r.fds}" for r in records) + "]"
