"""Build and verify the lazy-loading cache of the installed SDK (install time only).

`build()` splits the four modules (`splitter`), writes the cache to a temporary
file and runs two child processes: one imports the SDK eagerly, one lazily from
that file, touching the public names in a shuffled order; each describes every
public name (`fingerprint`). Only when the descriptions are equal is the file
renamed into place, where `install()` will find it, and the folder's stale
caches are removed (`prune`). A verified cache already in place is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from copilot_driver.errors import CopilotDriverError
from copilot_driver.sdk_loading import BUILD_COMMAND, sdk_folder
from copilot_driver.sdk_loading.cache import (
    SDK_MODULES,
    CachedModule,
    cache_path,
    source_hashes,
    write_cache,
)
from copilot_driver.sdk_loading.fingerprint import difference
from copilot_driver.sdk_loading.folder import default_cache_dir
from copilot_driver.sdk_loading.prune import prune
from copilot_driver.sdk_loading.splitter import (
    SplitDeclinedError,
    exported_names,
    split_module,
)
from copilot_driver.sdk_loading.verified import verified_version

Status = Literal["built", "present", "unverified", "declined", "differs"]
VERIFY_TIMEOUT_S = 300
"""A child describing ~2,900 names takes a few seconds; this only stops a hang."""


class DescribeError(CopilotDriverError, RuntimeError):
    """A child process describing the SDK failed: the cache is not trusted."""


@dataclass(frozen=True)
class BuildOutcome:
    status: Status
    message: str
    cache: Path | None = None
    removed: tuple[str, ...] = ()
    """The stale caches the build removed from the folder, each with its reason."""

    @property
    def ok(self) -> bool:
        """Nothing went wrong: built, already there, or an SDK that simply imports eagerly."""
        return self.status in ("built", "present", "unverified")


def build(
    sdk_dir: Path | None = None,
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    order_seeds: tuple[int, ...] = (1,),
) -> BuildOutcome:
    """The cache for the SDK at `sdk_dir` (default: the one this Python imports), in
    `cache_dir` (default: the user's, `folder.default_cache_dir`)."""
    cache_dir = cache_dir or default_cache_dir()
    if cache_dir is None:
        raise OSError("there is no cache folder: neither XDG_CACHE_HOME nor HOME is set")
    sdk_dir = sdk_dir or sdk_folder()
    if sdk_dir is None:
        return BuildOutcome("unverified", "github-copilot-sdk is not installed: nothing to build")
    hashes = source_hashes(sdk_dir)
    version = verified_version(hashes)
    if version is None:
        return BuildOutcome(
            "unverified",
            f"the SDK at {sdk_dir} is not a release verified for lazy loading; "
            "the driver imports it eagerly",
        )
    target = cache_path(cache_dir, sdk_dir, hashes)
    if target.is_file() and not force:
        return BuildOutcome("present", f"github-copilot-sdk {version}: {target} is built", target)
    # The folder first: one that cannot be made fails now, not after the split.
    cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        modules = split_sdk(sdk_dir)
    except SplitDeclinedError as declined:
        return BuildOutcome("declined", f"github-copilot-sdk {version}: {declined}")
    candidate = target.with_name(f".unverified-{os.getpid()}-{target.name}")
    write_cache(candidate, modules, sdk_dir=sdk_dir, sources=hashes)
    try:
        differences = verify(candidate, sdk_dir, order_seeds)
        if differences:
            return BuildOutcome(
                "differs",
                f"github-copilot-sdk {version}: the lazy import differs from the eager one, "
                "so the driver keeps importing it eagerly:\n  " + "\n  ".join(differences),
            )
        os.replace(candidate, target)
    finally:
        candidate.unlink(missing_ok=True)
    removed = tuple(prune(cache_dir, target))
    built = f"github-copilot-sdk {version}: built and verified {target}"
    if removed:
        built += f"; removed {len(removed)} stale: " + ", ".join(removed)
    return BuildOutcome("built", built, target, removed)


def split_sdk(sdk_dir: Path) -> dict[str, CachedModule]:
    """The four modules split (a re-export module after the module it re-exports)."""
    star_names: dict[str, tuple[str, ...]] = {}
    modules: dict[str, CachedModule] = {}
    for name, relative in SDK_MODULES.items():
        path = sdk_dir / relative
        source = path.read_text(encoding="utf-8")
        modules[name] = split_module(name, source, str(path), star_names=star_names)
        if modules[name].reexport_from is None:  # a generated module, a re-export may name
            star_names[name] = exported_names(source, str(path))
    return modules


def verify(cache: Path, sdk_dir: Path, order_seeds: tuple[int, ...]) -> list[str]:
    """Differences between the eager import and the lazy one in each order; [] if none."""
    expected = describe_in_child(sdk_dir)
    for seed in order_seeds:
        found = difference(expected, describe_in_child(sdk_dir, cache=cache, order_seed=seed))
        if found:
            return [f"in access order {seed}:", *found]
    return []


def describe_in_child(
    sdk_dir: Path, *, cache: Path | None = None, order_seed: int | None = None
) -> dict[str, str]:
    """Every public name described by a fresh interpreter (lazy from `cache` if given)."""
    with tempfile.TemporaryDirectory(prefix="copilot-sdk-describe-") as scratch:
        output = Path(scratch) / "fingerprint.json"
        command = [sys.executable, "-m", "copilot_driver.sdk_loading", "describe"]
        command += ["--sdk-dir", str(sdk_dir), "--out", str(output)]
        if cache is not None:
            command += ["--cache", str(cache)]
        if order_seed is not None:
            command += ["--order-seed", str(order_seed)]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=VERIFY_TIMEOUT_S,
                check=False,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
        except subprocess.TimeoutExpired as error:
            raise DescribeError(f"describing the SDK took over {VERIFY_TIMEOUT_S} s") from error
        if done.returncode != 0:
            mode = "lazily" if cache else "eagerly"
            raise DescribeError(
                f"describing the SDK {mode} failed (exit {done.returncode}): "
                f"{done.stderr.strip()[-2000:]}"
            )
        described: dict[str, str] = json.loads(output.read_text(encoding="utf-8"))
        return described


__all__ = [
    "BUILD_COMMAND",
    "BuildOutcome",
    "DescribeError",
    "build",
    "describe_in_child",
    "split_sdk",
    "verify",
]
