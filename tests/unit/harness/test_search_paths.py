"""The driver's import and program paths never name the workspace."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.environment import (
    driver_command,
    driver_environment,
    own_import_root,
    trusted_search_path,
)

WORKSPACE = Path("/home/runner/work/project/project")


def test_relative_empty_and_workspace_entries_go() -> None:
    value = f":.:bin:node_modules/.bin:{WORKSPACE}/bin:{WORKSPACE}:/usr/bin:/home/runner/.local/bin"
    assert trusted_search_path(value, WORKSPACE) == "/usr/bin:/home/runner/.local/bin"


def test_a_folder_that_links_into_the_workspace_is_inside_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "bin").mkdir(parents=True)
    (tmp_path / "tools").symlink_to(workspace / "bin")
    assert trusted_search_path(f"{tmp_path / 'tools'}:/usr/bin", workspace) == "/usr/bin"


def test_the_packages_own_root_stays_even_in_the_workspace() -> None:
    root = f"{WORKSPACE}/src"
    assert trusted_search_path(f"{root}:src", WORKSPACE, keep=(root,)) == root


_ENTRY = st.sampled_from(["", ".", "bin", "/usr/bin", "/opt/x", f"{WORKSPACE}/a", str(WORKSPACE)])


@given(st.lists(_ENTRY, max_size=8))
def test_what_is_kept_is_absolute_and_outside(entries: list[str]) -> None:
    kept = trusted_search_path(":".join(entries), WORKSPACE)
    for entry in filter(None, kept.split(":")):
        assert entry.startswith("/")
        assert not Path(os.path.realpath(entry)).is_relative_to(WORKSPACE)


def test_the_drivers_environment_loses_the_workspace_from_its_paths() -> None:
    env = driver_environment(
        {"PATH": f"{WORKSPACE}/bin:/usr/bin", "PYTHONPATH": f"src:{WORKSPACE}/lib"},
        sdk_uri="http://127.0.0.1:1",
        token="t",
        workspace=WORKSPACE,
    )
    assert env["PATH"] == "/usr/bin"
    assert "PYTHONPATH" not in env


def test_this_packages_driver_runs_without_the_working_directory_on_its_path() -> None:
    assert driver_command("/usr/bin/python3") == ["/usr/bin/python3", "-P", "-m", "copilot_driver"]
    assert (Path(own_import_root()) / "copilot_driver" / "__init__.py").is_file()
