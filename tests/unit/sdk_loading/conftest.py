"""One synthetic SDK and its cache for the folder; imports of it kept out of sys.modules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.sdk_loading import install_cache
from helpers.synthetic_sdk import build_cache, isolated_sdk_import, write_synthetic_sdk


@pytest.fixture(scope="session")
def sdk_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic `copilot/` folder (read only: tests that change it write their own)."""
    return write_synthetic_sdk(tmp_path_factory.mktemp("synthetic-sdk"))


@pytest.fixture(scope="session")
def cache_file(sdk_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cache(sdk_dir, tmp_path_factory.mktemp("sdk-cache"))


@pytest.fixture
def lazy_sdk(sdk_dir: Path, cache_file: Path) -> Iterator[None]:
    """`import copilot` imports the synthetic SDK lazily, in this test only."""
    with isolated_sdk_import(sdk_dir):
        install_cache(cache_file, sdk_dir)
        yield


@pytest.fixture
def eager_sdk(sdk_dir: Path) -> Iterator[None]:
    """`import copilot` imports the synthetic SDK as usual, in this test only."""
    with isolated_sdk_import(sdk_dir):
        yield
