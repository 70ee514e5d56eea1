"""The CLI as the sandbox runs it: the native binary, its execute-only copy, its cache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from copilot_driver.harness.sandbox.cli_copy import (
    cli_package_cache,
    execute_only_copy,
    native_binary,
)
from helpers.cli_stand_ins import MACHINE, digest, native_file, script_file


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"XDG_CACHE_HOME": "/c", "HOME": "/h"}, Path("/c/copilot")),
        ({"HOME": "/h"}, Path("/h/.cache/copilot")),
        ({"XDG_CACHE_HOME": "", "HOME": "/h"}, Path("/h/.cache/copilot")),
        ({}, None),
    ],
)
def test_the_cli_package_cache(env: dict[str, str], expected: Path | None) -> None:
    assert cli_package_cache(env) == expected


# -- native_binary --------------------------------------------------------------------------


def test_a_native_binary_is_itself(tmp_path: Path) -> None:
    binary = native_file(tmp_path / "copilot")
    assert native_binary(binary) == binary


def test_a_link_to_a_native_binary_is_its_target(tmp_path: Path) -> None:
    binary = native_file(tmp_path / "real" / "copilot")
    (tmp_path / "copilot").symlink_to(binary)
    assert native_binary(tmp_path / "copilot") == binary


@pytest.mark.parametrize("flavour", ["linux", "linuxmusl"])
def test_a_script_finds_the_platform_package_beside_it(tmp_path: Path, flavour: str) -> None:
    script = script_file(tmp_path / "copilot")
    native = native_file(
        tmp_path / "node_modules" / "@github" / f"copilot-{flavour}-{MACHINE}" / "copilot"
    )
    assert native_binary(script) == native


def test_npms_loader_finds_the_platform_package_next_to_its_own(tmp_path: Path) -> None:
    github = tmp_path / "lib" / "node_modules" / "@github"
    loader = script_file(github / "copilot" / "npm-loader.js")
    native = native_file(github / f"copilot-linux-{MACHINE}" / "copilot")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "copilot").symlink_to(loader)
    assert native_binary(tmp_path / "bin" / "copilot") == native


def test_a_script_without_a_native_package_has_none(tmp_path: Path) -> None:
    script = script_file(tmp_path / "copilot")
    script_file(tmp_path / "node_modules" / "@github" / f"copilot-linux-{MACHINE}" / "copilot")
    assert native_binary(script) is None


# -- execute_only_copy ----------------------------------------------------------------------


def test_the_copy_is_execute_only_and_the_same_program(tmp_path: Path) -> None:
    source = native_file(tmp_path / "bin" / "copilot")
    copy = execute_only_copy(source, tmp_path / "cache")
    assert copy.is_relative_to(tmp_path / "cache" / "copilot-driver" / "execute-only")
    assert copy.name == "copilot"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o111
    assert digest(copy) == digest(source)  # readable here because the tests run as root
    assert [path.name for path in copy.parent.iterdir()] == ["copilot"]


def test_the_copy_is_made_once_per_binary(tmp_path: Path) -> None:
    source = native_file(tmp_path / "copilot")
    first = execute_only_copy(source, tmp_path / "cache")
    inode = first.stat().st_ino
    second = execute_only_copy(source, tmp_path / "cache")
    assert second == first
    assert second.stat().st_ino == inode


def test_a_changed_binary_gets_a_new_copy(tmp_path: Path) -> None:
    source = native_file(tmp_path / "copilot")
    first = execute_only_copy(source, tmp_path / "cache")
    source.write_bytes(source.read_bytes() + b"\0")
    facts = source.stat()
    os.utime(source, ns=(facts.st_atime_ns, facts.st_mtime_ns + 10**9))
    second = execute_only_copy(source, tmp_path / "cache")
    assert second != first
    assert digest(second) == digest(source) != digest(first)
    assert first.is_file()


def test_a_cache_that_cannot_be_made_is_an_os_error(tmp_path: Path) -> None:
    source = native_file(tmp_path / "copilot")
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder would go")
    with pytest.raises(OSError):  # noqa: PT011 - Sandbox.prepare words it (test_launch)
        execute_only_copy(source, blocker)
