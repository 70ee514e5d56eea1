"""The sandbox package's own helpers: which folder is the workspace, where the cache is."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_driver.harness.sandbox import sandbox_cache_home, workspace_of


def test_the_workspace_is_github_workspace_when_set(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    given = f" {tmp_path}/repo/../repo "
    assert workspace_of({"GITHUB_WORKSPACE": given}, Path("/")) == tmp_path.resolve() / "repo"


@pytest.mark.parametrize("env", [{}, {"GITHUB_WORKSPACE": ""}, {"GITHUB_WORKSPACE": "  "}])
def test_the_workspace_is_the_current_folder_otherwise(tmp_path: Path, env: dict[str, str]) -> None:
    assert workspace_of(env, tmp_path) == tmp_path.resolve()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"XDG_CACHE_HOME": "/cache", "HOME": "/home/u"}, Path("/cache")),
        ({"XDG_CACHE_HOME": " ", "HOME": "/home/u"}, Path("/home/u/.cache")),
        ({"HOME": "/home/u"}, Path("/home/u/.cache")),
    ],
)
def test_the_cache_is_the_users(env: dict[str, str], expected: Path) -> None:
    assert sandbox_cache_home(env) == expected


def test_without_home_the_cache_is_the_processs_home() -> None:
    assert sandbox_cache_home({}) == Path.home() / ".cache"
