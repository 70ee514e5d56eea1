"""Import the SDK's generated modules lazily where that was proven to change nothing.

`import copilot` spends most of a driver run's start-up building ~2,900 generated
definitions (`copilot.generated.rpc`: ~1,500 dataclasses, ~440 enums) of which a
run uses a few hundred. `install()`, called before the SDK is imported, puts an
import hook (`finder.SdkFinder`) in front of the four generated and re-export
modules (`cache.SDK_MODULES`) so each definition is built on its first lookup.

It is used only when all of these hold, else the SDK is imported as usual:

- the SDK's four files have the sha256 of a release this project verified
  (`verified.VERIFIED_SDK_FILES`, every tested github-copilot-sdk version);
- a cache for exactly those files, this Python and this loader exists: built at
  install or set-up time by `python -m copilot_driver.sdk_loading build`, which
  splits the sources (`splitter`, declining anything it does not understand) and
  keeps the cache only if a child process importing the SDK lazily, in a
  shuffled order, describes every public name exactly as an eager import does
  (`fingerprint`). A run never builds a cache: on a miss it imports eagerly;
- the cache is in the user's cache folder where only that user could have written
  it, outside the workspace (`folder`);
- `COPILOT_DRIVER_SDK_LOADING` is not `eager` (the way to turn it off).

Layout: `verified` (the table), `cache` (files, keys, format), `folder` (where, and
who may write there), `namespace` (the lazy module), `finder` (the import hook):
what a run loads. `splitter`, `fingerprint`, `build` and `prune` (with `__main__`):
build time only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from copilot_driver.sdk_loading.cache import (
    SDK_MODULES,
    cache_path,
    read_cache,
    source_hashes,
)
from copilot_driver.sdk_loading.finder import SdkFinder
from copilot_driver.sdk_loading.folder import default_cache_dir, in_workspace, writable_by_others
from copilot_driver.sdk_loading.verified import verified_version

__all__ = ["BUILD_COMMAND", "Loading", "Mode", "decision", "default_cache_dir", "install"]

Mode = Literal["auto", "eager"]
BUILD_COMMAND = "python -m copilot_driver.sdk_loading build"


@dataclass(frozen=True)
class Loading:
    """How this process imports the SDK, and why."""

    lazy: bool
    reason: str
    sdk_version: str | None = None

    @property
    def mode(self) -> str:
        return "lazy" if self.lazy else "eager"


_decision: Loading | None = None


def decision() -> Loading:
    """What `install` decided in this process (eager when it was never called)."""
    return _decision or Loading(lazy=False, reason="the lazy loader was not installed")


def install(mode: Mode = "auto", *, cache_dir: Path | None = None) -> Loading:
    """Before `import copilot`: the lazy loader when it applies; the reason either way.
    `cache_dir` defaults to the user's cache folder (`folder.default_cache_dir`).

    Never raises for a problem of its own: any doubt means the eager import."""
    global _decision
    try:
        _decision = _decide(mode, cache_dir)
    except Exception as error:  # the loader must never be what stops a run
        _decision = Loading(lazy=False, reason=f"the lazy loader failed ({error!r})")
    return _decision


def install_cache(path: Path, sdk_dir: Path) -> None:
    """The lazy loader from one cache file, unconditionally: the build's verification."""
    sys.meta_path.insert(0, SdkFinder(sdk_dir, read_cache(path)))


def sdk_folder() -> Path | None:
    """The folder of the `copilot` package this interpreter would import."""
    spec = importlib.util.find_spec("copilot")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _decide(mode: Mode, cache_dir: Path | None) -> Loading:
    if mode == "eager":
        return Loading(lazy=False, reason="COPILOT_DRIVER_SDK_LOADING=eager")
    if any(name in sys.modules for name in ("copilot", *SDK_MODULES)):
        return Loading(lazy=False, reason="the SDK was imported before the loader")
    try:
        sdk_dir = sdk_folder()
        if sdk_dir is None:
            return Loading(lazy=False, reason="github-copilot-sdk is not installed")
        hashes = source_hashes(sdk_dir)
    except (ImportError, OSError, ValueError) as error:
        return Loading(lazy=False, reason=f"the SDK's files could not be read ({error})")
    version = verified_version(hashes)
    if version is None:
        return Loading(
            lazy=False,
            reason=f"the SDK at {sdk_dir} is not a release verified for lazy loading",
        )
    cache_dir = cache_dir or default_cache_dir()
    if cache_dir is None:
        return Loading(
            lazy=False,
            reason="no cache folder (neither XDG_CACHE_HOME nor HOME is set)",
            sdk_version=version,
        )
    path = cache_path(cache_dir, sdk_dir, hashes)
    if not path.is_file():
        return Loading(
            lazy=False,
            reason=f"no lazy-loading cache for github-copilot-sdk {version}: run `{BUILD_COMMAND}`",
            sdk_version=version,
        )
    distrusted = _distrusted(path)
    if distrusted is not None:
        return Loading(lazy=False, reason=distrusted, sdk_version=version)
    try:
        with path.open("rb") as file:
            # Checked on the file read, not on its name: a file swapped in between is not.
            problem = writable_by_others(os.fstat(file.fileno()))
            data = file.read()
        if problem is not None:
            return Loading(
                lazy=False,
                reason=f"the lazy-loading cache {path} is not used: {problem}; remove it and "
                f"run `{BUILD_COMMAND}` as the user that runs the driver",
                sdk_version=version,
            )
        modules = read_cache(path, data)
    except (OSError, ValueError) as error:
        return Loading(
            lazy=False,
            reason=f"{error}: run `{BUILD_COMMAND}` again",
            sdk_version=version,
        )
    sys.meta_path.insert(0, SdkFinder(sdk_dir, modules))
    return Loading(
        lazy=True,
        reason=f"github-copilot-sdk {version}, verified cache {path.name}",
        sdk_version=version,
    )


def _distrusted(path: Path) -> str | None:
    """Why no cache in `path`'s folder may be used (someone else could write it)."""
    folder = path.parent
    workspace = in_workspace(folder)
    if workspace is not None:
        return (
            f"the lazy-loading cache folder {folder} is in the workspace {workspace}, where "
            "tools write: set XDG_CACHE_HOME to a folder outside it and run "
            f"`{BUILD_COMMAND}` again"
        )
    problem = writable_by_others(folder.stat())
    if problem is not None:
        return (
            f"the lazy-loading cache folder {folder} is not used: {problem}; "
            f"make it yours alone (`chmod 700 {folder}`) or set XDG_CACHE_HOME elsewhere"
        )
    return None
