"""The driver file a gh-aw workflow names, and the command that writes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver import gh_aw


def test_the_driver_file_runs_the_driver_with_its_arguments(tmp_path: Path) -> None:
    path = tmp_path / ".github" / "drivers" / "copilot-driver.py"
    assert gh_aw.main([str(path)]) == 0
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
    with pytest.raises(SystemExit) as exited:
        gh_aw.main([str(tmp_path / "copilot_driver.py")])
    assert exited.value.code == 2
    assert "it would hide the package" in capsys.readouterr().err
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
