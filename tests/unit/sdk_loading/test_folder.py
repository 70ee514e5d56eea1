"""`sdk_loading.folder` and `prune`: the caches live in the user's cache folder, a run
trusts only one nobody else could have written, and a build removes the stale ones."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.sdk_loading import prune as prune_module
from copilot_driver.sdk_loading.cache import FORMAT, cache_path, source_hashes, write_cache
from copilot_driver.sdk_loading.folder import (
    SUBFOLDER,
    default_cache_dir,
    in_workspace,
    writable_by_others,
)
from copilot_driver.sdk_loading.prune import prune, stale_reason
from helpers.synthetic_sdk import build_cache, run_child, write_synthetic_sdk

# -- where ------------------------------------------------------------------------------


def test_an_absolute_xdg_cache_home_holds_the_folder() -> None:
    found = default_cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"})
    assert found == Path("/c/copilot-driver/sdk-loading")


@pytest.mark.parametrize("xdg", ["", "  ", "relative/cache"])
def test_without_an_absolute_xdg_cache_home_it_is_under_home(xdg: str) -> None:
    """The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored."""
    found = default_cache_dir({"XDG_CACHE_HOME": xdg, "HOME": "/home/u"})
    assert found == Path("/home/u/.cache/copilot-driver/sdk-loading")


@given(st.text(alphabet=st.characters(blacklist_characters="\0"), max_size=30))
def test_the_folder_is_never_relative_and_never_in_the_package(xdg: str) -> None:
    found = default_cache_dir({"XDG_CACHE_HOME": xdg, "HOME": "/home/u"})
    assert found is not None
    assert found.is_absolute()
    assert found.parts[-2:] == SUBFOLDER.parts
    package = Path(prune_module.__file__).parent
    assert package not in found.parents


def test_without_xdg_cache_home_or_home_it_asks_the_password_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HOME", raising=False)
    found = default_cache_dir({})
    expected = os.path.expanduser("~")
    if os.path.isabs(expected):
        assert found == Path(expected) / ".cache" / SUBFOLDER
    else:
        assert found is None


def test_a_folder_in_the_workspace_is_named_links_resolved(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "home" / ".cache").mkdir(parents=True)
    outside = tmp_path / "cache"
    outside.mkdir()
    env = {"GITHUB_WORKSPACE": str(workspace)}
    assert in_workspace(workspace / "home" / ".cache", env) == workspace
    assert in_workspace(workspace, env) == workspace
    assert in_workspace(outside, env) is None
    link = tmp_path / "link"
    link.symlink_to(workspace / "home")
    assert in_workspace(link / ".cache", env) == workspace


def test_without_github_workspace_the_workspace_is_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c").mkdir()
    assert in_workspace(tmp_path / "c", {}) == tmp_path.resolve()
    assert in_workspace(tmp_path / "c", {"GITHUB_WORKSPACE": "  "}) == tmp_path.resolve()


def test_only_the_user_or_root_and_nobody_else_may_write(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    for mode in (0o600, 0o644, 0o755, 0o700):
        path.chmod(mode)
        assert writable_by_others(path.stat()) is None, oct(mode)
    for mode in (0o664, 0o646, 0o777):
        path.chmod(mode)
        said = writable_by_others(path.stat())
        assert said is not None
        assert said.startswith("its group or other users may write it (mode ")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    os.chown(path, 65534, 65534)
    assert writable_by_others(path.stat()) == "it belongs to user 65534, not to 0"


# -- what a run decides -------------------------------------------------------------------

CHILD = """
import json, os, sys
from pathlib import Path
from copilot_driver.sdk_loading import install, verified
from copilot_driver.sdk_loading.cache import source_hashes

sdk_dir = Path(sys.argv[1])
verified.VERIFIED_SDK_FILES["9.9.9-synthetic"] = source_hashes(sdk_dir)
loading = install()
print(json.dumps({"lazy": loading.lazy, "reason": loading.reason}))
"""


def _decided(sdk_dir: Path, cwd: Path, **env: str) -> dict[str, Any]:
    """`install()` with no cache folder given (the one the environment names), run in
    `cwd` (made if need be)."""
    cwd.mkdir(parents=True, exist_ok=True)
    code = CHILD.replace("sys.argv[1]", repr(str(sdk_dir)))
    done = run_child(f"import os; os.chdir({str(cwd)!r})\n{code}", sdk_dir, **env)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture
def cache_home(tmp_path: Path, sdk_dir: Path) -> Path:
    """An XDG_CACHE_HOME whose folder holds the synthetic SDK's cache."""
    home = tmp_path / "xdg"
    build_cache(sdk_dir, home / SUBFOLDER)
    return home


def test_the_cache_is_found_in_xdg_cache_home(
    sdk_dir: Path, cache_home: Path, tmp_path: Path
) -> None:
    found = _decided(sdk_dir, tmp_path / "work", XDG_CACHE_HOME=str(cache_home))
    assert found["lazy"], found["reason"]
    assert found["reason"].startswith("github-copilot-sdk 9.9.9-synthetic, verified cache ")


def test_the_cache_is_found_under_home_without_xdg_cache_home(
    sdk_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    build_cache(sdk_dir, home / ".cache" / SUBFOLDER)
    assert _decided(sdk_dir, tmp_path / "work", HOME=str(home))["lazy"]


def test_a_cache_folder_in_the_workspace_is_not_used(
    sdk_dir: Path, cache_home: Path, tmp_path: Path
) -> None:
    """HOME or XDG_CACHE_HOME in the workspace: a tool could have planted the cache."""
    found = _decided(
        sdk_dir, tmp_path, XDG_CACHE_HOME=str(cache_home), GITHUB_WORKSPACE=str(tmp_path)
    )
    assert not found["lazy"]
    folder = cache_home / SUBFOLDER
    assert found["reason"] == (
        f"the lazy-loading cache folder {folder} is in the workspace {tmp_path.resolve()}, "
        "where tools write: set XDG_CACHE_HOME to a folder outside it and run "
        "`python -m copilot_driver.sdk_loading build` again"
    )
    # The same folder, with the workspace elsewhere: used.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _decided(
        sdk_dir, elsewhere, XDG_CACHE_HOME=str(cache_home), GITHUB_WORKSPACE=str(elsewhere)
    )["lazy"]


def test_a_cache_in_the_current_directory_is_not_used_without_github_workspace(
    sdk_dir: Path, cache_home: Path
) -> None:
    found = _decided(sdk_dir, cache_home, XDG_CACHE_HOME=str(cache_home))
    assert not found["lazy"]
    assert "is in the workspace" in found["reason"]


@pytest.mark.parametrize("target", ["folder", "file"])
def test_a_cache_others_may_write_is_not_used(
    sdk_dir: Path, cache_home: Path, tmp_path: Path, target: str
) -> None:
    folder = cache_home / SUBFOLDER
    (cache_file,) = folder.glob("copilot-sdk-*.marshal")
    (folder if target == "folder" else cache_file).chmod(0o777 if target == "folder" else 0o666)
    found = _decided(sdk_dir, tmp_path / "work", XDG_CACHE_HOME=str(cache_home))
    assert not found["lazy"]
    assert "its group or other users may write it" in found["reason"]
    fix = f"`chmod 700 {folder}`" if target == "folder" else "remove it and run `python -m"
    assert fix in found["reason"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_cache_file_of_another_user_is_not_used(
    sdk_dir: Path, cache_home: Path, tmp_path: Path
) -> None:
    (cache_file,) = (cache_home / SUBFOLDER).glob("copilot-sdk-*.marshal")
    os.chown(cache_file, 65534, 65534)
    found = _decided(sdk_dir, tmp_path / "work", XDG_CACHE_HOME=str(cache_home))
    assert not found["lazy"]
    assert "it belongs to user 65534, not to 0" in found["reason"]


# -- what a build removes ---------------------------------------------------------------


def _cache_for(for_sdk: Path, folder: Path, **origin: Any) -> Path:
    """A cache file keyed for `for_sdk`, saying `origin` (its sdk_dir and sources)."""
    path = cache_path(folder, for_sdk, source_hashes(for_sdk))
    write_cache(path, {}, **origin)
    return path


def test_a_cache_whose_sdk_is_still_there_is_kept(sdk_dir: Path, tmp_path: Path) -> None:
    path = _cache_for(sdk_dir, tmp_path, sdk_dir=sdk_dir, sources=source_hashes(sdk_dir))
    assert stale_reason(path) is None


def test_a_cache_whose_sdk_is_gone_or_changed_is_stale(tmp_path: Path) -> None:
    sdk_dir = write_synthetic_sdk(tmp_path / "site")
    path = _cache_for(sdk_dir, tmp_path / "c", sdk_dir=sdk_dir, sources=source_hashes(sdk_dir))
    (sdk_dir / "rpc.py").write_text("# upgraded in place\n")
    assert stale_reason(path) == f"the SDK in {sdk_dir} changed since"
    shutil.rmtree(sdk_dir)
    assert stale_reason(path) == f"its SDK folder {sdk_dir} is gone"


def test_other_formats_and_files_that_are_no_cache(
    sdk_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage = tmp_path / "copilot-sdk-garbage.marshal"
    garbage.write_bytes(b"not marshal")
    assert stale_reason(garbage) == "not a readable cache"
    monkeypatch.setattr("copilot_driver.sdk_loading.cache.FORMAT", FORMAT - 1)
    older = _cache_for(sdk_dir, tmp_path / "older", sdk_dir=sdk_dir)
    monkeypatch.setattr("copilot_driver.sdk_loading.cache.FORMAT", FORMAT + 1)
    newer = _cache_for(sdk_dir, tmp_path / "newer", sdk_dir=Path("/gone"))
    monkeypatch.undo()
    assert stale_reason(older) == f"format {FORMAT - 1}, older than {FORMAT}"
    assert stale_reason(newer) is None, "a newer copilot-driver's cache is its business"


def test_prune_removes_the_stale_and_old_temporary_files_and_keeps_the_rest(
    sdk_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "caches"
    keep = _cache_for(sdk_dir, folder, sdk_dir=sdk_dir, sources=source_hashes(sdk_dir))
    gone = folder / "copilot-sdk-0000.marshal"
    write_cache(gone, {}, sdk_dir=tmp_path / "gone", sources={})
    fresh_temporary = folder / ".building-fresh"
    old_temporary = folder / ".unverified-1-old"
    for temporary in (fresh_temporary, old_temporary):
        temporary.write_bytes(b"")
    os.utime(old_temporary, (0, 0))
    unrelated = folder / "notes.txt"
    unrelated.write_text("not ours")
    legacy = tmp_path / "_caches"
    legacy.mkdir()
    (legacy / "copilot-sdk-1111.marshal").write_bytes(b"old")
    monkeypatch.setattr(prune_module, "LEGACY_DIR", legacy)

    removed = prune(folder, keep)

    assert removed == [
        f"copilot-sdk-0000.marshal (its SDK folder {tmp_path / 'gone'} is gone)",
        ".unverified-1-old (a build's temporary file)",
        f"{legacy / 'copilot-sdk-1111.marshal'} (beside the package)",
    ]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [keep.name, fresh_temporary.name, unrelated.name]
    )
    assert not legacy.exists()


def test_the_folder_a_build_makes_is_the_users_alone(sdk_dir: Path, tmp_path: Path) -> None:
    path = _cache_for(sdk_dir, tmp_path / "new" / "folder")
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o644
