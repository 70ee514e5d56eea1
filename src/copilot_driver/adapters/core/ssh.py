"""Running an agent on another machine over SSH.

The agent command becomes one remote shell command string, so every piece
of it is single-quoted (a `'` inside becomes `'\''`): a workspace path or
prompt with spaces, quotes, `$` or `;` reaches the agent as one literal
argument and is never interpreted by the remote shell.
"""

from __future__ import annotations

import itertools
import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.options import is_variable_name
from copilot_driver.vocabulary import AdapterErrorKind

HostKeyChecking = Literal["accept-new", "yes", "no"]
HOST_KEY_CHECKING_VALUES: tuple[str, ...] = get_args(HostKeyChecking)

SSH_EXIT_CONNECTION_FAILED = 255
EXIT_COMMAND_NOT_FOUND = 127


def find_ssh(env: Mapping[str, str]) -> str:
    """The local `ssh` (for SSH mode), or an `agent_not_found` AgentError."""
    found = shutil.which("ssh", path=env.get("PATH"))
    if found is None:
        raise AgentError(
            AdapterErrorKind.AGENT_NOT_FOUND, "ssh_hosts is set but no `ssh` binary is on PATH"
        )
    return found


def shell_quote(value: str) -> str:
    """POSIX single-quoting, always quoted (even when not needed): `'a'\\''b'`."""
    return "'" + value.replace("'", "'\\''") + "'"


@dataclass(frozen=True)
class SshSettings:
    hosts: tuple[str, ...]
    strict_host_key_checking: HostKeyChecking = "accept-new"
    _next: itertools.cycle[str] = field(init=False, repr=False, compare=False)
    _lock: threading.Lock = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.hosts:
            raise ValueError("ssh_hosts must name at least one host")
        if self.strict_host_key_checking not in HOST_KEY_CHECKING_VALUES:
            raise ValueError(
                "ssh_strict_host_key_checking must be one of "
                f"{', '.join(HOST_KEY_CHECKING_VALUES)}, not {self.strict_host_key_checking!r}"
            )
        object.__setattr__(self, "_next", itertools.cycle(self.hosts))
        object.__setattr__(self, "_lock", threading.Lock())

    def pick_host(self) -> str:
        """Round-robin over the hosts, one per new session."""
        with self._lock:
            return next(self._next)

    def options(self) -> list[str]:
        return [
            "-o", f"StrictHostKeyChecking={self.strict_host_key_checking}",
            "-o", "BatchMode=yes",
            "-o", "ConnectTimeout=30",
            "-o", "ServerAliveInterval=15",
            "-o", "ServerAliveCountMax=3",
        ]  # fmt: skip


def remote_command(
    workspace: str,
    argv: Sequence[str],
    *,
    environment: Sequence[tuple[str, str]] = (),
    read_from_stdin: Sequence[str] = (),
) -> str:
    """`cd '<ws>' && [NAME='v' ...] '<cmd>' '<arg>'...` for the remote shell.

    `read_from_stdin` names variables whose values arrive as the first lines
    of stdin (`IFS= read -r NAME && export NAME && ...`), for secrets that
    must not appear on any command line.
    """
    for name in [name for name, _ in environment] + list(read_from_stdin):
        if not is_variable_name(name):
            raise ValueError(f"{name!r} is not an environment variable name")
    words = ["cd", shell_quote(workspace), "&&"]
    for name in read_from_stdin:
        words += ["IFS=", "read", "-r", name, "&&", "export", name, "&&"]
    if read_from_stdin:
        words.append("exec")
    words += [f"{name}={shell_quote(value)}" for name, value in environment]
    return " ".join(words + [shell_quote(a) for a in argv])


def ssh_argv(
    ssh_binary: str,
    settings: SshSettings,
    host: str,
    workspace: str,
    argv: Sequence[str],
    *,
    environment: Sequence[tuple[str, str]] = (),
    read_from_stdin: Sequence[str] = (),
) -> list[str]:
    """The local argv that runs `argv` in `workspace` on `host`.

    `--` ends ssh's own options, so a host named like an option cannot
    change how ssh runs.
    """
    return [
        ssh_binary,
        *settings.options(),
        "--",
        host,
        remote_command(workspace, argv, environment=environment, read_from_stdin=read_from_stdin),
    ]
