"""What bash really does with a command line: the execution oracle for the shell policy.

A shell policy is proven by watching the thing that executes, not by a
second parser. `BashOracle.run(command)` runs the command the way the
Copilot runtime runs every shell tool call (`/bin/bash --norc --noprofile -c
COMMAND`, non-interactive, stdin /dev/null, no controlling terminal) under
`strace -f`, in a scratch folder, with a PATH holding only inert stub
programs (`#!/bin/true`), and reports:

- every program executed or attempted (`execve`), with its exact argv;
- every file the shell itself opened for writing or otherwise changed
  (before a process execs a program, it is the shell: redirections happen
  there);
- every socket any process opened (bash opens `/dev/tcp/...` itself).

What plain `bash -c ':'` does at start-up on this machine (an NSS lookup
over a Unix socket, say) is measured once and left out of every report.

`BashOracle.violations(observation, allowed=..., predicted=...)` turns a report into
the list of broken promises for a command the policy approved: a program
the rules do not name, one outside the stub folder (PATH was changed), an
argv the policy did not predict word for word, a write or a socket.

Needs Linux and `strace` (Debian's package; `make setup` installs it).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.errors import CopilotDriverError

BASH = "/bin/bash"
"""The runtime's shell (the Copilot CLI runs `/bin/bash --norc --noprofile -c`)."""
STUB_INTERPRETER = "/bin/true"
_CANARY_NAMES = """
    touch rm sh bash dash zsh python python3 perl ruby node curl wget nc ncat socat cat cp mv
    chmod tee id whoami env xargs sudo nohup timeout nice stdbuf setsid awk sed find git tar ls
    echo printf grep make ssh scp rsync vi vim less more man sort zip true false test
"""
CANARIES = tuple(_CANARY_NAMES.split())
"""Stubbed in every run: the payloads hostile commands try to reach, so an escape is seen."""
TIMEOUT_S = 20.0
FILES_IN_THE_WORKING_FOLDER = ("a.txt", "b.txt", "-c", "-exec")
"""So that a glob the shell expands shows in argv (`*` becomes `-c -exec a.txt b.txt`)."""
_TRACED = (
    "execve,execveat,open,openat,openat2,creat,truncate,rename,renameat,renameat2,link,linkat,"
    "symlink,symlinkat,unlink,unlinkat,mkdir,mkdirat,mknod,mknodat,socket,connect,bind,"
    "clone,clone3,fork,vfork"
)
_NEW_PROCESS = frozenset({"clone", "clone3", "fork", "vfork"})
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
_FILE_CHANGES = frozenset(
    {"creat", "truncate", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
     "symlinkat", "unlink", "unlinkat", "mkdir", "mkdirat", "mknod", "mknodat"}
)  # fmt: skip
_LINE = re.compile(r"(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<result>-?\d+|\?)")
_STRING = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
_ARRAY = re.compile(r"\[((?:\"(?:\\x[0-9a-f]{2})*\"(?:, )?)*)\]")


class OracleUnavailableError(CopilotDriverError, RuntimeError):
    """strace or bash cannot run here."""


@dataclass(frozen=True)
class Execution:
    path: str
    argv: tuple[str, ...]
    succeeded: bool
    by_shell: bool
    """Executed by the shell (a command of the line), not by a program it ran."""


@dataclass(frozen=True)
class Observation:
    command: str
    exit_code: int
    stderr: str
    """What bash and the programs wrote on standard error."""
    executions: tuple[Execution, ...]
    """Every execve after the shell's own start, in each process's order."""
    shell_writes: tuple[str, ...]
    """Files the shell side opened for writing or changed (`openat O_WRONLY|O_CREAT out`)."""
    sockets: tuple[str, ...]
    """Sockets opened and addresses connected to, by any process."""
    new_files: tuple[str, ...] = ()
    """Paths (relative to the working folder) that exist after the run and did not before."""
    removed_files: tuple[str, ...] = ()
    """Paths (relative to the working folder) that existed before the run and do not after."""


def _decode(hexed: str) -> str:
    return bytes.fromhex(hexed.replace("\\x", "")).decode("utf-8", "surrogateescape")


def _strings(args: str) -> list[str]:
    return [_decode(match) for match in _STRING.findall(args)]


class BashOracle:
    """Runs commands as the runtime does and reports what happened (see the module)."""

    def __init__(
        self,
        folder: Path,
        programs: Iterable[str] = (),
        *,
        real: Iterable[str] = (),
        template: Path | None = None,
    ) -> None:
        """Stubs for `programs` and CANARIES; the machine's own binaries for `real`
        (git, sed, ...), so that what those programs do with their options is seen too.
        Each run starts in a fresh copy of `template` (a repository, say), if given."""
        strace = shutil.which("strace")
        if strace is None or not os.path.exists(BASH):
            raise OracleUnavailableError(
                "the bash oracle needs strace and /bin/bash: run `make setup` "
                "(it installs Debian's strace)"
            )
        self._strace = strace
        self.folder = folder
        self.template = template
        self.stubs = folder / "stubs"
        self.stubs.mkdir(parents=True, exist_ok=True)
        real = set(real)
        for name in {*CANARIES, *programs} - real:
            stub = self.stubs / name
            stub.write_text(f"#!{STUB_INTERPRETER}\n")
            stub.chmod(0o755)
        for name in real:
            found = shutil.which(name, path="/usr/bin:/bin")
            if found is None:
                raise OracleUnavailableError(f"{name} is not installed")
            (self.stubs / name).symlink_to(found)
        listed = subprocess.run(
            [BASH, "--norc", "--noprofile", "-c", "compgen -b"],
            capture_output=True,
            text=True,
            check=True,
        )
        self.builtins = frozenset(listed.stdout.split())
        """Commands bash runs itself, without an execve."""
        self._baseline: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        start = self.run(":")
        if start.exit_code != 0 or start.executions:
            raise OracleUnavailableError(f"`bash -c :` did not run cleanly under strace: {start}")
        self._baseline = (frozenset(start.shell_writes), frozenset(start.sockets))

    def run(self, command: str) -> Observation:
        with tempfile.TemporaryDirectory(dir=self.folder, prefix="run-") as scratch:
            trace = Path(scratch) / "trace"
            work = Path(scratch) / "work"
            if self.template is not None:
                shutil.copytree(self.template, work, symlinks=True)
            else:
                work.mkdir()
            for name in FILES_IN_THE_WORKING_FOLDER:
                (work / name).write_text(name)
            before = _tree(work)
            env = {
                "PATH": str(self.stubs),
                "HOME": str(work),
                "LC_ALL": "C.UTF-8",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0",
            }
            args = [self._strace, "-f", "-ff", "-qq", "-o", str(trace), "-s", "1048576", "-xx"]
            args += ["-e", f"trace={_TRACED}", BASH, "--norc", "--noprofile", "-c", command]
            exit_code, stderr = _run_in_own_group(args, work, env)
            traces = sorted(Path(scratch).glob("trace.*"))
            if not traces:
                raise OracleUnavailableError(f"strace wrote no trace (exit {exit_code})")
            observation = self._observe(command, exit_code, stderr, traces)
            after = _tree(work)
            return dataclasses.replace(
                observation,
                new_files=tuple(sorted(after - before)),
                removed_files=tuple(sorted(before - after)),
            )

    def violations(
        self,
        observation: Observation,
        *,
        allowed: Iterable[str],
        predicted: Sequence[Sequence[str]],
    ) -> list[str]:
        """What an approved command did beyond what the policy promised.

        `allowed`: the program names the rules name. `predicted`: the argv of
        each command the policy read in the line. Every execution must be one
        of those, word for word, through the program on PATH (a program may run
        itself again, git does); the shell writes nothing but /dev/null; no
        process opens a socket.
        """
        names = set(allowed)
        found: list[str] = []
        for execution in observation.executions:
            path = Path(execution.path)
            if path.name not in names:
                found.append(f"executed a program no rule names: {execution.path} {execution.argv}")
            elif execution.by_shell and (path.parent != self.stubs or not execution.succeeded):
                found.append(f"executed {execution.path}, not the program on PATH {execution.argv}")
        observed = Counter(e.argv for e in observation.executions if e.by_shell)
        expected = Counter(tuple(words) for words in predicted)
        found += [
            f"ran {list(argv)}, which the policy did not predict ({[list(w) for w in predicted]})"
            for argv in observed - expected
        ]
        found += [
            f"the shell wrote: {write}"
            for write in observation.shell_writes
            if not write.endswith(" /dev/null")
        ]
        found += [f"a socket: {socket}" for socket in observation.sockets]
        return found

    def _observe(
        self, command: str, exit_code: int, stderr: str, traces: Sequence[Path]
    ) -> Observation:
        calls = {int(trace.name.rsplit(".", 1)[1]): _calls(trace) for trace in traces}
        root = next(
            (pid for pid, found in calls.items() if _starts_the_shell(found, command)), None
        )
        if root is None:
            raise OracleUnavailableError(f"no traced process started the shell for {command!r}")
        executions: list[Execution] = []
        writes: list[str] = []
        sockets: list[str] = []
        # Walk the process tree from the shell: a process forked by the shell side is
        # shell side until it execs a program; anything forked by a program is the program's.
        pending = [(root, True)]
        while pending:
            pid, shell_side = pending.pop()
            for call, args, result in calls.pop(pid, []):
                ok = result != "?" and int(result) >= 0
                if call in ("execve", "execveat"):
                    execution = _execution(args, ok, shell_side)
                    if pid == root and _is_the_shell_starting(execution, command):
                        continue
                    executions.append(execution)
                    shell_side = shell_side and not ok
                elif call in _NEW_PROCESS and ok and int(result) > 0:
                    pending.append((int(result), shell_side))
                elif call in ("socket", "connect", "bind"):
                    sockets.append(_socket(call, args))
                elif shell_side and ok and (written := _written(call, args)) is not None:
                    writes.append(written)
        base_writes, base_sockets = self._baseline
        return Observation(
            command,
            exit_code,
            stderr,
            tuple(executions),
            tuple(w for w in writes if w not in base_writes),
            tuple(s for s in sockets if s not in base_sockets),
        )


def _run_in_own_group(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run `args` in a new process group; on TIMEOUT_S, kill the whole group (strace,
    bash and whatever they started) and raise: a command that never ends is reported,
    never left running."""
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, stderr = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return process.returncode, stderr.decode("utf-8", "replace")


def _tree(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def _calls(trace: Path) -> list[tuple[str, str, str]]:
    """(syscall, arguments, result) of one process, in order."""
    found = []
    for line in trace.read_text(encoding="ascii", errors="replace").splitlines():
        parsed = _LINE.match(line)
        if parsed is not None:
            found.append((parsed["call"], parsed["args"], parsed["result"]))
    return found


def _starts_the_shell(calls: list[tuple[str, str, str]], command: str) -> bool:
    return any(
        call == "execve" and _is_the_shell_starting(_execution(args, True, True), command)
        for call, args, _ in calls[:1]
    )


def _execution(args: str, ok: bool, by_shell: bool) -> Execution:
    strings = _strings(args)
    array = _ARRAY.search(args)
    argv = tuple(_strings(array.group(1))) if array else ()
    return Execution(strings[0] if strings else "?", argv, ok, by_shell)


def _is_the_shell_starting(execution: Execution, command: str) -> bool:
    return execution.path == BASH and execution.argv == (
        BASH,
        "--norc",
        "--noprofile",
        "-c",
        command,
    )


def _socket(call: str, args: str) -> str:
    if call == "socket":
        return f"socket({args.split(',', 1)[0]})"
    family = re.search(r"sa_family=(\w+)", args)
    path = _strings(args)
    address = re.search(r"sin6?_addr=[^}]*|sin6?_port=[^,]*", args)
    where = path[0] if path else address.group() if address else args
    return f"{call}({family.group(1) if family else '?'}, {where})"


def _written(call: str, args: str) -> str | None:
    """`CALL FLAGS PATH` when this call writes or changes a file, else None."""
    paths = _strings(args)
    if call in _FILE_CHANGES:
        return f"{call} {' '.join(paths)}"
    if call in ("open", "openat", "openat2"):
        flags = re.search(r"\b(O_[A-Z_|]+)", args)
        text = flags.group(1) if flags else ""
        if any(flag in text.split("|") for flag in _WRITE_FLAGS):
            return f"{call} {text} {paths[0] if paths else '?'}"
    return None
