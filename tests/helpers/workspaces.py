"""The agent workspace the adapter tests run in: a fresh directory under tmp_path.

    workspace = workspace_fixture(git=True)          # in a test module

defines the module's `workspace` fixture. The default name holds a space,
so every test also checks that the path travels as one argument.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest


def make_workspace(
    parent: Path,
    name: str = "work space",
    *,
    git: bool = False,
    files: Mapping[str, str] | None = None,
) -> Path:
    """`parent/name`, made; a git repository when `git`; holding `files`
    (relative path -> text, parent directories made)."""
    path = parent / name
    path.mkdir()
    if git:
        subprocess.run(["git", "init", "-q", str(path)], check=True)
    for relative, text in (files or {}).items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return path


def workspace_fixture(
    name: str = "work space",
    *,
    git: bool = False,
    files: Mapping[str, str] | None = None,
) -> object:
    """A `workspace` fixture: `make_workspace(tmp_path, name, git=git, files=files)`."""

    @pytest.fixture
    def workspace(tmp_path: Path) -> Path:
        return make_workspace(tmp_path, name, git=git, files=files)

    return workspace
