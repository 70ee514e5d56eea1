"""`sdk_loading.cache`: a key over everything that makes a cache valid, a reader that
refuses what this loader did not write, and a writer that never leaves half a file."""

from __future__ import annotations

import importlib.util
import marshal
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.sdk_loading import cache
from copilot_driver.sdk_loading.build import split_sdk
from copilot_driver.sdk_loading.cache import (
    SDK_MODULES,
    CachedModule,
    cache_path,
    read_cache,
    source_hashes,
    write_cache,
)

HASHES = {relative: f"{index:064x}" for index, relative in enumerate(SDK_MODULES.values())}
SDK = Path("/site-packages/copilot")


def test_the_key_is_stable_and_names_a_file_in_the_cache_folder(tmp_path: Path) -> None:
    path = cache_path(tmp_path, SDK, HASHES)
    assert path.parent == tmp_path
    assert re.fullmatch(r"copilot-sdk-[0-9a-f]{32}\.marshal", path.name)
    assert cache_path(tmp_path, SDK, dict(reversed(HASHES.items()))) == path


@pytest.mark.parametrize("relative", list(SDK_MODULES.values()))
def test_the_key_changes_with_each_source(tmp_path: Path, relative: str) -> None:
    changed = {**HASHES, relative: "f" * 64}
    assert cache_path(tmp_path, SDK, changed) != cache_path(tmp_path, SDK, HASHES)


def test_the_key_changes_with_the_sdk_folder(tmp_path: Path) -> None:
    assert cache_path(tmp_path, SDK, HASHES) != cache_path(tmp_path, Path("/other/copilot"), HASHES)


def test_the_key_changes_with_the_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = cache_path(tmp_path, SDK, HASHES)
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    assert cache_path(tmp_path, SDK, HASHES) != before


def test_the_key_changes_with_the_bytecode_magic_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = cache_path(tmp_path, SDK, HASHES)
    monkeypatch.setattr(importlib.util, "MAGIC_NUMBER", b"\x00\x00\r\n")
    assert cache_path(tmp_path, SDK, HASHES) != before


def test_source_hashes_are_the_four_files_sha256(sdk_dir: Path, tmp_path: Path) -> None:
    hashes = source_hashes(sdk_dir)
    assert set(hashes) == set(SDK_MODULES.values())
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in hashes.values())
    with pytest.raises(FileNotFoundError):
        source_hashes(tmp_path)


@pytest.fixture(scope="module")
def modules(sdk_dir: Path) -> dict[str, CachedModule]:
    return split_sdk(sdk_dir)


def test_what_is_written_is_read_back(tmp_path: Path, modules: dict[str, CachedModule]) -> None:
    path = tmp_path / "deep" / "folder" / "cache.marshal"
    write_cache(path, modules)
    assert read_cache(path) == modules


def test_a_truncated_file_is_refused(tmp_path: Path, modules: dict[str, CachedModule]) -> None:
    path = tmp_path / "cache.marshal"
    write_cache(path, modules)
    whole = path.read_bytes()
    for size in sorted({0, 1, 2, 5, 17, *range(0, len(whole), max(1, len(whole) // 40))}):
        path.write_bytes(whole[:size])
        with pytest.raises(ValueError, match="is not a readable cache"):
            read_cache(path)


@pytest.mark.parametrize(
    "content",
    [
        b"garbage, not marshal data",
        b"\x00\x00\x00",
        marshal.dumps(None),
        marshal.dumps("format"),
        marshal.dumps([1, 2, 3]),
        marshal.dumps({"modules": {}}),
        marshal.dumps({"format": 1}),
        marshal.dumps({"format": 1, "modules": dict.fromkeys(SDK_MODULES)}),
        marshal.dumps({"format": 1, "modules": dict.fromkeys(SDK_MODULES, (1, 2, 3, 4, 5))}),
        marshal.dumps({"format": 1, "modules": dict.fromkeys(SDK_MODULES, "short")}),
        marshal.dumps({"format": 1, "modules": list(SDK_MODULES)}),
        marshal.dumps({"format": 1, "modules": {"copilot.rpc": None}}),
    ],
    ids=lambda content: repr(content[:24]),
)
def test_garbage_is_refused_with_value_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "cache.marshal"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(str(path))):
        read_cache(path)


def test_a_file_of_another_format_is_refused(
    tmp_path: Path, modules: dict[str, CachedModule], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.marshal"
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    write_cache(path, modules)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="written by another version of copilot-driver"):
        read_cache(path)


def test_a_file_missing_a_module_is_refused(
    tmp_path: Path, modules: dict[str, CachedModule]
) -> None:
    path = tmp_path / "cache.marshal"
    write_cache(path, {name: modules[name] for name in list(SDK_MODULES)[:3]})
    with pytest.raises(ValueError, match="another version"):
        read_cache(path)


def test_a_write_replaces_the_file_whole_and_leaves_no_temporary_file(
    tmp_path: Path, modules: dict[str, CachedModule]
) -> None:
    path = tmp_path / "cache.marshal"
    path.write_bytes(b"x" * 1_000_000)  # longer than the cache: no tail may survive
    write_cache(path, modules)
    assert read_cache(path) == modules
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.marshal"]
    fresh = tmp_path / "fresh.marshal"
    write_cache(fresh, modules)
    assert path.read_bytes() == fresh.read_bytes()


def test_a_cache_is_readable_by_every_user_like_the_installed_files(
    tmp_path: Path, modules: dict[str, CachedModule]
) -> None:
    """Built at install time (maybe by root), read by whoever runs the driver."""
    path = tmp_path / "cache.marshal"
    write_cache(path, modules)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(
    tmp_path: Path, modules: dict[str, CachedModule], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.marshal"
    write_cache(path, modules)
    before = path.read_bytes()

    def fail(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(marshal, "dump", fail)
    with pytest.raises(OSError, match="disk full"):
        write_cache(path, modules)
    assert path.read_bytes() == before
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.marshal"]
