"""Where `python -m copilot_driver.sdk_loading build` puts the lazy-loading cache, run
for real: in the user's cache folder (XDG_CACHE_HOME here), never in the package, so
`pip uninstall copilot-driver` leaves nothing behind; a new build removes the
folder's stale caches; `status` finds what `build` made; the command's help and
errors have the package's one form."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from copilot_driver import sdk_loading
from copilot_driver.sdk_loading.cache import write_cache
from copilot_driver.testing.fixtures import missing_component
from helpers.wheels import WHEELHOUSE, build_wheel

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(sdk_loading.__file__).parent
COMMAND = [sys.executable, "-m", "copilot_driver.sdk_loading"]


def _environment(xdg: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_WORKSPACE"}
    env["XDG_CACHE_HOME"] = str(xdg)
    return env


def _run(*arguments: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *arguments],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _files(folder: Path) -> set[Path]:
    """Every file under `folder` but Python's own bytecode."""
    return {path for path in folder.rglob("*") if "__pycache__" not in path.parts}


@dataclass(frozen=True)
class Built:
    xdg: Path
    work: Path
    done: subprocess.CompletedProcess[str]
    package_before: set[Path]
    package_after: set[Path]
    planted: dict[str, Path]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One real build (`--force`) into a fresh XDG_CACHE_HOME where stale caches were
    planted first: a file that is no cache, one for an SDK folder that is gone, and a
    build's temporary file left a day and more ago."""
    root = tmp_path_factory.mktemp("sdk-cache-home")
    xdg, work = root / "xdg", root / "work"
    folder = xdg / "copilot-driver" / "sdk-loading"
    folder.mkdir(parents=True)
    work.mkdir()
    planted = {
        "garbage": folder / "copilot-sdk-0badc0de.marshal",
        "gone": folder / "copilot-sdk-0000dead.marshal",
        "temporary": folder / ".building-killed",
    }
    planted["garbage"].write_bytes(b"no cache")
    write_cache(planted["gone"], {}, sdk_dir=root / "uninstalled" / "copilot", sources={})
    planted["temporary"].write_bytes(b"")
    old = time.time() - 2 * 24 * 3600
    os.utime(planted["temporary"], (old, old))
    before = _files(PACKAGE)
    done = _run("build", "--force", env=_environment(xdg), cwd=work)
    return Built(xdg, work, done, before, _files(PACKAGE), planted)


def test_the_build_writes_into_the_users_cache_folder_and_not_the_package(built: Built) -> None:
    assert built.done.returncode == 0, built.done.stderr
    folder = built.xdg / "copilot-driver" / "sdk-loading"
    (cache,) = folder.glob("copilot-sdk-[0-9a-f]*.marshal")
    assert f"built and verified {cache}" in built.done.stdout
    assert built.done.stdout.startswith("[copilot-driver-sdk-loading] github-copilot-sdk ")
    # Nothing new beside the package (the folder 0.1.0 kept caches in is emptied).
    assert built.package_after <= built.package_before, built.package_after - built.package_before
    assert not (PACKAGE / "_caches").exists()


def test_the_build_removes_the_stale_caches_and_says_why(built: Built) -> None:
    for path in built.planted.values():
        assert not path.exists(), path
    said = built.done.stdout
    assert "removed " in said
    assert "copilot-sdk-0badc0de.marshal (not a readable cache)" in said
    assert "copilot-sdk-0000dead.marshal (its SDK folder " in said
    assert ".building-killed (a build's temporary file)" in said


def test_status_finds_the_cache_the_build_made_and_only_there(built: Built, tmp_path: Path) -> None:
    found = _run("status", env=_environment(built.xdg), cwd=built.work)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("[copilot-driver-sdk-loading] the SDK loads lazy: ")
    elsewhere = _run("status", env=_environment(tmp_path / "other-xdg"), cwd=built.work)
    assert "the SDK loads eager: no lazy-loading cache for github-copilot-sdk" in elsewhere.stdout
    # Run from inside the folder that holds it, with no GITHUB_WORKSPACE: that is the
    # workspace, where tools write, and the cache is not used.
    inside = _run("status", env=_environment(built.xdg), cwd=built.xdg)
    assert "the SDK loads eager: the lazy-loading cache folder " in inside.stdout
    assert "is in the workspace" in inside.stdout


def test_a_second_build_finds_it_built(built: Built) -> None:
    again = _run("build", env=_environment(built.xdg), cwd=built.work)
    assert again.returncode == 0, again.stderr
    assert " is built" in again.stdout


def test_the_help_lists_build_and_status_only(tmp_path: Path) -> None:
    shown = _run("--help", env=_environment(tmp_path), cwd=tmp_path)
    assert shown.returncode == 0
    assert "SUPPRESS" not in shown.stdout
    assert "describe" not in shown.stdout
    assert "{build,status}" in shown.stdout
    assert "XDG_CACHE_HOME" in shown.stdout


def test_usage_errors_are_one_line_with_the_usage_status(tmp_path: Path) -> None:
    for arguments in (("frobnicate",), (), ("build", "--order-seeds", "x")):
        done = _run(*arguments, env=_environment(tmp_path), cwd=tmp_path)
        assert done.returncode == 2, (arguments, done.stderr)
        (line,) = done.stderr.splitlines()
        assert line.startswith("[copilot-driver-sdk-loading] error: "), line
        assert "`python -m copilot_driver.sdk_loading" in line
        assert "describe" not in line


def test_a_cache_folder_that_cannot_be_made_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = _run("build", env=_environment(blocker), cwd=tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        f"[copilot-driver-sdk-loading] error: the lazy-loading cache could not be written in "
        f"{blocker / 'copilot-driver' / 'sdk-loading'} ("
    )
    assert "run this as the user that runs the driver" in line


def test_uninstalling_the_wheel_leaves_nothing_in_site_packages(tmp_path: Path) -> None:
    """The wheel in a throw-away virtualenv (offline, from `make setup`'s wheels),
    its cache built, then `pip uninstall -y copilot-driver`."""
    if not list(WHEELHOUSE.glob("github_copilot_sdk-*.whl")):
        missing_component(
            "the dependency wheels", FileNotFoundError(f"no wheels in {WHEELHOUSE}: make setup")
        )
    started = time.monotonic()
    wheel = build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip_env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    pip_env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip_env.pop("PYTHONPATH", None)
    install = [python, "-m", "pip", "install", "-q", "--no-index", "--find-links"]
    installed = subprocess.run(
        [*install, str(WHEELHOUSE), str(wheel)],
        env=pip_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (site,) = venv.glob("lib/python3.*/site-packages")
    assert (site / "copilot_driver" / "sdk_loading" / "__init__.py").is_file()

    xdg = tmp_path / "xdg"
    cache = subprocess.run(
        [python, "-m", "copilot_driver.sdk_loading", "build"],
        env={**pip_env, "XDG_CACHE_HOME": str(xdg)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert cache.returncode == 0, cache.stderr
    assert list((xdg / "copilot-driver" / "sdk-loading").glob("copilot-sdk-*.marshal"))

    removed = subprocess.run(
        [python, "-m", "pip", "uninstall", "-y", "-q", "copilot-driver"],
        env=pip_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert removed.returncode == 0, removed.stderr
    assert not (site / "copilot_driver").exists(), sorted(
        str(p.relative_to(site)) for p in (site / "copilot_driver").rglob("*")
    )
    importable = subprocess.run(
        [python, "-c", "import copilot_driver"], capture_output=True, text=True, check=False
    )
    assert importable.returncode == 1
    assert "No module named 'copilot_driver'" in importable.stderr
    assert time.monotonic() - started < 90
