"""`sdk_loading.finder.SdkFinder`: it answers only for the cache's four modules, and only
in the package folder the cache was built from; every other import goes on as usual."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path
from typing import cast

from copilot_driver.sdk_loading.cache import SDK_MODULES, read_cache
from copilot_driver.sdk_loading.finder import SdkFinder
from copilot_driver.sdk_loading.namespace import LazyModule
from helpers.synthetic_sdk import isolated_sdk_import


def test_it_answers_for_the_four_modules_in_their_own_folder_only(
    sdk_dir: Path, cache_file: Path, tmp_path: Path
) -> None:
    finder = SdkFinder(sdk_dir, read_cache(cache_file))
    for name, relative in SDK_MODULES.items():
        folder = str((sdk_dir / relative).parent)
        spec = finder.find_spec(name, [folder])
        assert spec is not None
        assert spec.loader is cast(object, finder)
        assert spec.origin == str(sdk_dir / relative)
        assert spec.has_location
        assert finder.find_spec(name, [str(tmp_path)]) is None
        assert finder.find_spec(name, None) is None
    assert finder.find_spec("copilot.client", [str(sdk_dir)]) is None
    assert finder.find_spec("json", None) is None


def test_an_sdk_in_another_folder_imports_as_usual(
    sdk_dir: Path, cache_file: Path, tmp_path: Path
) -> None:
    """The same files elsewhere: the cache's code objects name the other folder."""
    other = tmp_path / "copilot"
    shutil.copytree(sdk_dir, other)
    with isolated_sdk_import(other):
        sys.meta_path.insert(0, SdkFinder(sdk_dir, read_cache(cache_file)))
        rpc = importlib.import_module("copilot.generated.rpc")
        assert not isinstance(rpc, LazyModule)
        assert rpc.__file__ == str(other / "generated" / "rpc.py")
        assert not any(isinstance(sys.modules[name], LazyModule) for name in SDK_MODULES)


def test_other_modules_of_the_sdk_package_import_as_usual(sdk_dir: Path, cache_file: Path) -> None:
    with isolated_sdk_import(sdk_dir):
        sys.meta_path.insert(0, SdkFinder(sdk_dir, read_cache(cache_file)))
        copilot = importlib.import_module("copilot")
        generated = importlib.import_module("copilot.generated")
        assert not isinstance(copilot, LazyModule)
        assert not isinstance(generated, LazyModule)
        assert generated.rpc is sys.modules["copilot.generated.rpc"]
        assert isinstance(generated.rpc, LazyModule)
        assert copilot.rpc is sys.modules["copilot.rpc"]
