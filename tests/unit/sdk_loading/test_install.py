"""`sdk_loading.install()`: lazy only when every condition holds, else eager with the
reason; never raises. Each decision is made by a fresh interpreter (an import hook and
`sys.modules` are process-wide), importing the synthetic SDK."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from copilot_driver import sdk_loading
from copilot_driver.sdk_loading import BUILD_COMMAND, Loading, decision, install, sdk_folder
from copilot_driver.sdk_loading.cache import SDK_MODULES, cache_path, source_hashes
from copilot_driver.sdk_loading.verified import VERIFIED_SDK_FILES, verified_version
from helpers.synthetic_sdk import PUBLIC_RPC, build_cache, run_child, write_synthetic_sdk

CHILD = """
import json, sys
from pathlib import Path
from copilot_driver.sdk_loading import decision, install, verified
from copilot_driver.sdk_loading.cache import SDK_MODULES, source_hashes

sdk_dir, cache_dir, mode, verify, imported_first = json.loads(sys.argv[1])
before = decision()
if verify:
    verified.VERIFIED_SDK_FILES["9.9.9-synthetic"] = source_hashes(Path(sdk_dir))
if imported_first:
    import copilot
loading = install(mode, cache_dir=Path(cache_dir))
import copilot.rpc
request = copilot.rpc.ModeSetRequest.from_dict({"sessionId": "s", "mode": "plan"})
print(json.dumps({
    "before": before.reason,
    "lazy": loading.lazy,
    "mode": loading.mode,
    "reason": loading.reason,
    "version": loading.sdk_version,
    "last": decision() is loading,
    "kinds": sorted({type(sys.modules[name]).__name__ for name in SDK_MODULES}),
    "request": request.to_dict(),
}))
"""


def _install(
    sdk_dir: Path,
    cache_dir: Path,
    *,
    mode: str = "auto",
    verify: bool = True,
    imported_first: bool = False,
) -> dict[str, Any]:
    """What `install()` decided in a fresh interpreter, and how the SDK then loaded."""
    arguments = json.dumps([str(sdk_dir), str(cache_dir), mode, verify, imported_first])
    done = run_child(CHILD.replace("sys.argv[1]", repr(arguments)), sdk_dir)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    assert found["before"] == "the lazy loader was not installed"
    assert found["last"]
    assert found["request"] == {"sessionId": "s", "mode": "plan"}  # the SDK works either way
    assert found["mode"] == ("lazy" if found["lazy"] else "eager")
    assert found["kinds"] == (["LazyModule"] if found["lazy"] else ["module"])
    return found


def test_a_verified_sdk_with_its_cache_loads_lazily(
    sdk_dir: Path, cache_file: Path, tmp_path: Path
) -> None:
    found = _install(sdk_dir, cache_file.parent)
    assert found["lazy"]
    assert (
        found["reason"] == f"github-copilot-sdk 9.9.9-synthetic, verified cache {cache_file.name}"
    )
    assert found["version"] == "9.9.9-synthetic"


def test_eager_mode_is_eager_whatever_else_holds(sdk_dir: Path, cache_file: Path) -> None:
    found = _install(sdk_dir, cache_file.parent, mode="eager")
    assert not found["lazy"]
    assert found["reason"] == "COPILOT_DRIVER_SDK_LOADING=eager"


def test_an_sdk_imported_before_the_loader_stays_eager(sdk_dir: Path, cache_file: Path) -> None:
    found = _install(sdk_dir, cache_file.parent, imported_first=True)
    assert not found["lazy"]
    assert found["reason"] == "the SDK was imported before the loader"


def test_files_of_no_verified_release_are_imported_eagerly(sdk_dir: Path, cache_file: Path) -> None:
    found = _install(sdk_dir, cache_file.parent, verify=False)
    assert not found["lazy"]
    assert found["reason"] == (f"the SDK at {sdk_dir} is not a release verified for lazy loading")
    assert found["version"] is None


def test_without_a_cache_the_reason_names_the_build_command(sdk_dir: Path, tmp_path: Path) -> None:
    found = _install(sdk_dir, tmp_path / "empty")
    assert not found["lazy"]
    assert found["reason"] == (
        "no lazy-loading cache for github-copilot-sdk 9.9.9-synthetic: "
        "run `python -m copilot_driver.sdk_loading build`"
    )
    assert found["version"] == "9.9.9-synthetic"
    assert BUILD_COMMAND == "python -m copilot_driver.sdk_loading build"


@pytest.mark.parametrize(
    "content", [b"", b"garbage", b"{\xda\x06format"], ids=["empty", "garbage", "truncated"]
)
def test_a_corrupt_cache_means_eager_and_never_raises(
    sdk_dir: Path, tmp_path: Path, content: bytes
) -> None:
    path = cache_path(tmp_path, sdk_dir, source_hashes(sdk_dir))
    path.write_bytes(content)
    found = _install(sdk_dir, tmp_path)
    assert not found["lazy"]
    assert found["reason"].startswith(f"{path} is not a readable cache")
    assert found["reason"].endswith(f": run `{BUILD_COMMAND}` again")


def test_a_cache_for_other_files_is_not_used(tmp_path: Path, cache_file: Path) -> None:
    """One changed source: another key, so a cache built before is never read."""
    changed = write_synthetic_sdk(tmp_path, {"rpc.py": PUBLIC_RPC + "# changed\n"})
    shutil.copytree(cache_file.parent, tmp_path / "cache")
    found = _install(changed, tmp_path / "cache")
    assert not found["lazy"]
    assert found["reason"].startswith("no lazy-loading cache for github-copilot-sdk")
    build_cache(changed, tmp_path / "cache")
    assert _install(changed, tmp_path / "cache")["lazy"]


def test_unreadable_sdk_files_mean_eager(tmp_path: Path) -> None:
    sdk_dir = write_synthetic_sdk(tmp_path)
    (sdk_dir / "generated" / "session_events.py").rename(sdk_dir / "generated" / "moved.py")
    done = run_child(
        "from pathlib import Path\n"
        "from copilot_driver.sdk_loading import install\n"
        f"print(install(cache_dir=Path({str(tmp_path)!r})).reason)\n",
        sdk_dir,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the SDK's files could not be read (")
    assert "session_events.py" in done.stdout


def test_no_sdk_installed_means_eager(sdk_dir: Path, tmp_path: Path) -> None:
    done = run_child(
        "import sys\n"
        f"sys.path.remove({str(sdk_dir.parent)!r})\n"
        "from copilot_driver.sdk_loading import install, sdk_folder\n"
        "print(sdk_folder(), install().reason)\n",
        sdk_dir,
        "-S",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None github-copilot-sdk is not installed"


def test_decision_is_the_last_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_loading, "_decision", None)
    assert decision() == Loading(lazy=False, reason="the lazy loader was not installed")
    loading = install("eager")  # touches neither sys.meta_path nor sys.modules
    assert decision() is loading
    assert loading == Loading(lazy=False, reason="COPILOT_DRIVER_SDK_LOADING=eager")
    assert loading.mode == "eager"
    assert Loading(lazy=True, reason="").mode == "lazy"


def test_the_installed_sdk_is_a_verified_release() -> None:
    """The real github-copilot-sdk in this environment: its files are the table's."""
    folder = sdk_folder()
    assert folder is not None
    assert set(source_hashes(folder)) == set(SDK_MODULES.values())
    installed = importlib.metadata.version("github-copilot-sdk")
    assert verified_version(source_hashes(folder)) == installed
    assert set(VERIFIED_SDK_FILES[installed]) == set(SDK_MODULES.values())


def test_verified_version_needs_every_digest_to_match() -> None:
    version, files = next(iter(VERIFIED_SDK_FILES.items()))
    assert verified_version(files) == version
    assert verified_version({**files, "rpc.py": "0" * 64}) is None
    assert verified_version({k: v for k, v in files.items() if k != "rpc.py"}) is None
    assert verified_version({}) is None


def test_a_failure_inside_the_loader_means_the_eager_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever goes wrong in the decision, the run goes on with the ordinary import."""

    def broken(mode: str, cache_dir: Path) -> Loading:
        raise MemoryError("a cache too large to load")

    monkeypatch.setattr(sdk_loading, "_decide", broken)
    before = list(sys.meta_path)
    found = install()
    assert not found.lazy
    assert "a cache too large to load" in found.reason
    assert decision() == found
    assert sys.meta_path == before
