"""What the host holds that the sandbox hides or protects: read from the host, small.

Each function looks once, before the sandbox starts; `mounts.bwrap_arguments`
turns the answers into mounts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

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


def git_redirects(git: Path) -> tuple[Path, ...]:
    """In a repository's .git, the files git follows to another configuration."""
    return (git / "commondir", git / "config.worktree") if git.is_dir() else ()


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
