"""Every tested github-copilot-sdk release, unpacked by `make setup`, and its lazy cache.

`make setup` downloads each release in `compatibility.TESTED_SDK_VERSIONS` once and
unpacks it, bytecode compiled, into `.cache/sdk-releases/<version>/`. A driver or
a build run with that folder first on PYTHONPATH imports that release (its
`copilot` package and its metadata come first), so one virtualenv serves them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from copilot_driver.testing.fixtures import missing_component

RELEASES_DIR = Path(__file__).parents[2] / ".cache" / "sdk-releases"


def release_dir(version: str) -> Path:
    """The folder holding release `version`'s `copilot` package (skip, or fail in CI)."""
    folder = RELEASES_DIR / version
    if not (folder / "copilot" / "generated" / "rpc.py").is_file():
        missing_component(
            f"github-copilot-sdk {version} unpacked in {folder}",
            FileNotFoundError("run `make setup`"),
        )
    return folder


def release_environment(version: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) importing release `version` first."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(release_dir(version)), env.get("PYTHONPATH", "")) if part
    )
    return env


def build_release_cache(version: str, cache_dir: Path | None = None) -> str:
    """`python -m copilot_driver.sdk_loading build` for release `version` (into the
    user's cache folder unless `cache_dir` is given): its output."""
    folder = [] if cache_dir is None else ["--cache-dir", str(cache_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "copilot_driver.sdk_loading", "build", *folder],
        env=release_environment(version),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
