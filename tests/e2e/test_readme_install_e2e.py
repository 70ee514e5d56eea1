"""The README's install commands, run as written, each into a fresh virtualenv.

The package is not on PyPI yet, so the README installs it from its repository
(`https://github.com/<owner>/copilot-driver`, `<owner>` named as a placeholder
there). The test stands in for that repository with a clone of this one and
runs each `git clone` and `pip install` line of the README's Install block with
only that address changed. pip runs offline: `PIP_NO_INDEX` and
`PIP_FIND_LINKS` point it at the wheels `make setup` downloads (the package's
dependencies and its build backend), so the command text is the README's own.
The Copilot CLI's `npm install` line is not run here: `make setup` installs
that version from the npm registry for every other test.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver import __version__
from copilot_driver.testing.fixtures import missing_component

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / ".cache" / "wheels"
PLACEHOLDER = "https://github.com/<owner>/copilot-driver"


def install_block() -> list[str]:
    """The shell lines (comments dropped) of the first `sh` block under `## Install`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "no sh block under ## Install"
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_install_block_installs_from_the_repository_not_from_pypi() -> None:
    lines = install_block()
    pip_lines = [line for line in lines if line.startswith("pip install")]
    assert pip_lines, lines
    assert all(PLACEHOLDER in line or "./copilot-driver" in line for line in pip_lines)
    assert "pip install copilot-driver" not in lines, "not on PyPI yet"


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository, standing in for github.com/<owner>/copilot-driver."""
    if not (ROOT / ".git").exists():
        missing_component("a git checkout of this repository", FileNotFoundError(ROOT / ".git"))
    if not list(WHEELHOUSE.glob("hatchling-*.whl")):
        missing_component(
            "the wheels `make setup` downloads",
            FileNotFoundError(f"no hatchling wheel in {WHEELHOUSE}: run `make setup`"),
        )
    remote = tmp_path_factory.mktemp("remote") / "copilot-driver"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(remote)],
        check=True,
        timeout=120,
    )
    return remote


def _run_as_written(line: str, repository: Path, workdir: Path) -> None:
    """One README line with the repository's address replaced, in a fresh virtualenv."""
    venv = workdir / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin",
        "HOME": str(workdir),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_QUIET": "1",
    }
    # `localhost`: a `name @ git+file:` requirement needs a host in its URL.
    command = shlex.split(line.replace(PLACEHOLDER, f"file://localhost{repository}"))
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("form", ["git URL", "clone"])
def test_each_install_form_of_the_readme_works_as_written(
    repository: Path, tmp_path: Path, form: str
) -> None:
    lines = install_block()
    if form == "git URL":
        chosen = [line for line in lines if "git+" in line]
    else:
        chosen = [line for line in lines if line.startswith("git clone") or "./" in line]
    assert chosen, f"no {form} form in {lines}"
    for line in chosen:
        _run_as_written(line, repository, tmp_path)

    version = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "copilot-driver"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (version.returncode, version.stdout) == (0, f"copilot-driver {__version__}\n")
    for command in ("copilot-driver-harness", "copilot-driver-report"):
        assert (tmp_path / "venv" / "bin" / command).exists(), command
