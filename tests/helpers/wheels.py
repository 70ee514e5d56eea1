"""This tree's wheel, and the dependency wheels `make setup` downloads, for the tests
that install the package offline into a throw-away virtualenv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / ".cache" / "wheels"
"""The dependency wheels `make setup` downloads (its WHEELHOUSE)."""


def build_wheel(out: Path) -> Path:
    """This tree's wheel, built into `out` without the network."""
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = out.glob("copilot_driver-*.whl")
    return found
