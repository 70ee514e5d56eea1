"""What the host holds that the sandbox hides or protects: read from the host, small.

Each function looks once, before the sandbox starts; `mounts.bwrap_arguments`
turns the answers into mounts.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.harness.sandbox.mounts import WRITABLE_HOME, HomeEntry

RUNNER_FILE_VARIABLES = (
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_EVENT_PATH",
)
"""The runner's file commands: a tool that wrote to them would change later steps."""


def path_kind(path: str) -> str | None:
    """What is at a host path, for `bwrap_arguments` (a last symbolic link not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    return "dir" if stat.S_ISDIR(mode) else "file"


def runner_directories(env: Mapping[str, str]) -> tuple[str, ...]:
    """The runner's temp folder and every folder holding a file-command file."""
    found = [env.get("RUNNER_TEMP", "")]
    found += [str(Path(env[name]).parent) for name in RUNNER_FILE_VARIABLES if env.get(name)]
    return tuple(dict.fromkeys(path for path in found if path.startswith("/")))


def host_unix_sockets(table: Path = Path("/proc/net/unix"), limit: int = 500) -> tuple[str, ...]:
    """The paths of the host's listening Unix sockets (docker, systemd, dbus, ...): a
    read-only file system does not stop `connect()`, so each is hidden by name."""
    try:
        lines = table.read_text(errors="replace").splitlines()[1:]
    except OSError:
        return ()
    paths = []
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.append(fields[7])
    return tuple(dict.fromkeys(paths))[:limit]


def submodule_git_files(git: Path, limit: int = 200) -> tuple[str, ...]:
    """The config and hooks of every repository under `.git/modules` (a submodule's git
    runs them too when a later step's git recurses into it)."""
    modules = git / "modules"
    if not modules.is_dir():
        return ()
    found: list[str] = []
    for config in sorted(modules.glob("**/config"))[:limit]:
        if (config.parent / "HEAD").is_file():  # a repository, not a file named config
            found.append(str(config))
            if (config.parent / "hooks").is_dir():
                found.append(str(config.parent / "hooks"))
    return tuple(found)


def home_entries(home: str | None, limit: int = 1000) -> tuple[HomeEntry, ...]:
    """The names in each WRITABLE_HOME folder of the host's $HOME, parents first, but
    sockets, pipes and devices (a folder of more than `limit` names, or an unreadable
    one: none, so $HOME stays as the host has it, read-only)."""
    if not home or not os.path.isdir(home) or os.path.islink(home):
        return ()
    found: list[HomeEntry] = []
    for folder in WRITABLE_HOME:
        where = os.path.join(home, folder) if folder else home
        if folder and path_kind(where) != "dir":
            continue
        try:
            with os.scandir(where) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError:
            return ()
        if len(names) > limit:
            return ()
        for name in names:
            relative = f"{folder}/{name}" if folder else name
            path = os.path.join(where, name)
            try:
                mode = os.lstat(path).st_mode
                target = os.readlink(path) if stat.S_ISLNK(mode) else ""
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                found.append(HomeEntry(relative, "link", target))
            elif stat.S_ISDIR(mode):
                found.append(HomeEntry(relative, "dir"))
            elif stat.S_ISREG(mode):  # never a socket, a pipe or a device: left out
                found.append(HomeEntry(relative, "file"))
    return tuple(found)


TRUSTED_CA_VARIABLES = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE")
"""Files of extra certificate authorities (a TLS-intercepting proxy): the CLI reads them,
so they are visible read-only inside, wherever they are on the host."""


def own_code_in(workspace: Path) -> list[Path]:
    """Where this harness's Python and its modules come from, when inside the workspace
    (a virtualenv there): read-only inside, so no tool changes the code that the next
    run's harness and driver run outside the sandbox."""
    found = [Path(os.path.realpath(entry)) for entry in (sys.prefix, *sys.path) if entry]
    return [
        path
        for path in found
        if path.is_absolute()
        and path.is_relative_to(workspace)
        and path != workspace
        and path.exists()
    ]


def trusted_ca_files(env: Mapping[str, str]) -> list[Path]:
    """The extra CA files the environment names that exist (a missing one is the
    CLI's to report, as it would be outside)."""
    named = (env.get(name, "").strip() for name in TRUSTED_CA_VARIABLES)
    return [Path(os.path.realpath(value)) for value in named if value and Path(value).is_file()]
