"""The driver installs with the SDK and python-json-logger alone.

`pip install copilot-driver` brings only `dependencies`; the adapters' and the
test kit's packages are extras. Here the driver runs a real turn on the real
sidecar from an import path holding nothing but this package's source and the
distributions those two requirements pull in (found through their metadata),
with Python's site-packages switched off (`-S`): an import of anything else
fails the run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from copilot_driver.testing.fixtures import DriverRunner

SRC = Path(__file__).resolve().parents[2] / "src"
PYPROJECT = SRC.parent / "pyproject.toml"


def _core_requirements() -> list[str]:
    """The distribution names in pyproject's `dependencies` (not its extras)."""
    text = PYPROJECT.read_text(encoding="utf-8")
    block = text[text.index("\ndependencies = [") : text.index("]", text.index("\ndependencies"))]
    return re.findall(r'^\s+"([A-Za-z0-9_.-]+)', block, re.M)


def _closure(names: list[str]) -> set[str]:
    """The distributions `names` need on this interpreter, transitively (no extras)."""
    found: set[str] = set()
    pending = [Requirement(name) for name in names]
    while pending:
        requirement = pending.pop()
        key = requirement.name.lower().replace("_", "-")
        if key in found:
            continue
        found.add(key)
        for text in metadata.requires(requirement.name) or []:
            needed = Requirement(text)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                pending.append(needed)
    return found


def _site_of(distributions: set[str], into: Path) -> Path:
    """A folder of links to the files those distributions installed, and nothing else."""
    into.mkdir()
    for name in distributions:
        for file in metadata.files(name) or []:
            top = file.parts[0]
            source = Path(str(file.locate())).resolve()
            root = source.parents[len(file.parts) - 1]
            link = into / top
            if not link.exists() and (root / top).exists():
                link.symlink_to(root / top)
    return into


def test_the_core_requirements_are_the_sdk_and_the_json_logger() -> None:
    assert sorted(_core_requirements()) == ["github-copilot-sdk", "python-json-logger"]


@pytest.mark.e2e
def test_the_driver_runs_a_turn_with_only_its_core_requirements(
    driver: DriverRunner, tmp_path: Path
) -> None:
    distributions = _closure(_core_requirements())
    assert not distributions & {"pyyaml", "httpx-sse", "pytest", "hypothesis"}
    site = _site_of(distributions, tmp_path / "core-site")
    env = driver.environment("say hello")
    env["PYTHONPATH"] = f"{SRC}:{site}"
    # The same path refuses what only the extras provide: the check is real.
    for extra_only in ("yaml", "httpx_sse", "pytest"):
        probe = subprocess.run(
            [sys.executable, "-S", "-c", f"import {extra_only}"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert "ModuleNotFoundError" in probe.stderr, extra_only
    driver.command = [sys.executable, "-S", "-m", "copilot_driver"]
    run = driver.run("say hello", env=env)

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Hello from the scripted model.\n"
    assert run.result()["exitCode"] == 0


def test_the_adapters_without_their_extra_name_the_install_command(tmp_path: Path) -> None:
    site = _site_of(_closure(_core_requirements()), tmp_path / "core-site")
    ended = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "copilot_driver.adapters",
            "run",
            "--kind",
            "copilot-cli",
            "--workspace",
            str(tmp_path),
            "--prompt",
            "hi",
        ],
        env={"PYTHONPATH": f"{SRC}:{site}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ended.returncode == 2, ended.stderr
    assert ended.stdout == ""
    assert ended.stderr == (
        "[copilot-driver-adapters] error: the adapters need PyYAML, httpx-sse, which the "
        "driver alone does not install; pip install 'copilot-driver[adapters]'\n"
    )
