"""Where the lazy-loading caches live, and which of them a run may trust.

The caches are the user's, not the package's: `$XDG_CACHE_HOME/copilot-driver/
sdk-loading` (an absolute XDG_CACHE_HOME, as the XDG spec requires), else
`~/.cache/copilot-driver/sdk-loading`. Uninstalling the package then leaves nothing
in site-packages, and one folder serves every install of the user's, each SDK
install under a key of its own (`cache.cache_path`).

A cache holds code the driver runs outside the harness's sandbox, so a run uses one
only where no one else could have written it: the file and its folder belong to the
user running the driver (or root) and no one else may write them, and the folder is
not in the workspace (GITHUB_WORKSPACE, else the current directory, as the driver
reads it): tools write there, in the sandbox too, and with them an earlier run's
model.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

SUBFOLDER = Path("copilot-driver", "sdk-loading")
LEGACY_DIR = Path(__file__).parent / "_caches"
"""The cache folder beside the package that older builds of the loader wrote: a build
empties it, so uninstalling leaves nothing behind."""


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The user's cache folder for the lazy-loading caches; None without a home."""
    env = os.environ if env is None else env
    given = env.get("XDG_CACHE_HOME", "").strip()
    if given and os.path.isabs(given):
        return Path(given) / SUBFOLDER
    home = env.get("HOME", "").strip() or os.path.expanduser("~")
    if not os.path.isabs(home):  # no HOME and no entry in the password database
        return None
    return Path(home) / ".cache" / SUBFOLDER


def workspace(env: Mapping[str, str] | None = None) -> Path:
    """The driver's workspace, by its rule: GITHUB_WORKSPACE when set, else the
    current directory."""
    env = os.environ if env is None else env
    given = env.get("GITHUB_WORKSPACE", "").strip()
    return Path(os.path.realpath(given or os.getcwd()))


def in_workspace(cache_dir: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The workspace when `cache_dir` is in it (resolved: a link into it counts)."""
    folder = Path(os.path.realpath(cache_dir))
    here = workspace(env)
    return here if folder == here or here in folder.parents else None


def writable_by_others(status: os.stat_result) -> str | None:
    """Why a file or folder with `status` may have been written by someone else."""
    if status.st_uid not in (os.geteuid(), 0):
        return f"it belongs to user {status.st_uid}, not to {os.geteuid()}"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"its group or other users may write it (mode {stat.filemode(status.st_mode)})"
    return None


__all__ = ["LEGACY_DIR", "SUBFOLDER", "default_cache_dir", "in_workspace", "writable_by_others"]
