"""The driver file a gh-aw workflow names, and the command that writes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver import gh_aw


def test_the_driver_file_runs_the_driver_with_its_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert gh_aw.main([]) == 0
    path = tmp_path / ".github" / "drivers" / "copilot-driver.py"
    ended = subprocess.run(
        [sys.executable, str(path), "/usr/local/bin/copilot"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    # The trailing copilot binary is ignored, the configuration is read: exit 2.
    assert ended.returncode == 2
    assert "[copilot-sdk-driver] error: GH_AW_PROMPT is not set" in ended.stderr


def test_the_default_path_is_one_gh_aw_accepts() -> None:
    assert str(gh_aw.DEFAULT_PATH) == ".github/drivers/copilot-driver.py"


def test_a_name_that_would_hide_the_package_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gh_aw.main([str(tmp_path / "copilot_driver.py")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("[copilot-driver-gh-aw] error: ")
    assert "would hide the package" in line
    assert not (tmp_path / "copilot_driver.py").exists()


def test_a_package_planted_beside_the_driver_file_is_never_imported(tmp_path: Path) -> None:
    """The file lives in the workspace, where a tool may write a `copilot_driver` folder."""
    driver = tmp_path / "drivers" / "copilot-driver.py"
    gh_aw.write_driver_file(driver)
    planted = driver.parent / "copilot_driver"
    planted.mkdir()
    marker = tmp_path / "planted-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (planted / "cli.py").write_text("def run():\n    raise SystemExit(99)\n")
    done = subprocess.run(
        [sys.executable, str(driver), "--version"],
        cwd=driver.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("copilot-driver ")
    assert not marker.exists()


def _gh_aw(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command, `python -m copilot_driver.gh_aw ARGUMENTS`, run in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "copilot_driver.gh_aw", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_a_path_whose_folder_does_not_exist_outside_the_directory_is_refused(
    tmp_path: Path,
) -> None:
    """`/nonexistent/dir/x.py` (as root it used to create /nonexistent): one line, exit 2,
    nothing made."""
    missing = tmp_path / "nonexistent"
    work = tmp_path / "work"
    work.mkdir()
    for given in (str(missing / "dir" / "x.py"), "../nonexistent/dir/x.py"):
        done = _gh_aw(given, cwd=work)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith("[copilot-driver-gh-aw] error: the folder ")
        assert "does not exist; create it first (`mkdir -p " in line
        assert not missing.exists()


def test_the_folders_below_the_directory_are_made_as_in_a_fresh_checkout(tmp_path: Path) -> None:
    done = _gh_aw(cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".github" / "drivers" / "copilot-driver.py").is_file()
    nested = _gh_aw(str(tmp_path / "ci" / "drivers" / "driver.py"), cwd=tmp_path)
    assert nested.returncode == 0, nested.stderr
    assert (tmp_path / "ci" / "drivers" / "driver.py").is_file()


def test_a_folder_given_as_the_path_and_a_usage_error_are_one_line_each(tmp_path: Path) -> None:
    folder = _gh_aw(str(tmp_path), cwd=tmp_path)
    assert (folder.returncode, folder.stderr.count("\n")) == (2, 1)
    assert folder.stderr.startswith(f"[copilot-driver-gh-aw] error: {tmp_path} is a folder; ")
    usage = _gh_aw("--bogus", cwd=tmp_path)
    assert (usage.returncode, usage.stderr.count("\n")) == (2, 1)
    assert usage.stderr.startswith("[copilot-driver-gh-aw] error: unrecognized arguments: --bogus")
    assert "`python -m copilot_driver.gh_aw --help` lists the options" in usage.stderr
