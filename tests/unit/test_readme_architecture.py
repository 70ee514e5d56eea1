"""The architecture tree (docs/architecture.md) names every module of the parts it maps
one by one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "copilot_driver"
MAPPED_ONE_BY_ONE = (
    "",
    "driver",
    "permissions",
    "harness",
    "harness/sandbox",
    "report",
    "sdk_loading",
)
"""Folders whose modules the tree lists each by name (adapters/ and testing/ are
described folder by folder)."""


def _tree() -> str:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = re.search(r"```\n(src/copilot_driver/.*?)```", page, re.DOTALL)
    assert found is not None, "no tree in docs/architecture.md"
    return found.group(1)


@pytest.mark.parametrize("folder", MAPPED_ONE_BY_ONE)
def test_every_module_is_in_the_architecture_tree(folder: str) -> None:
    names = set(re.findall(r"[\w]+\.py", _tree()))
    modules = {
        path.name
        for path in (PACKAGE / folder).glob("*.py")
        if path.name != "__init__.py" or folder == "sdk_loading"
    }
    missing = sorted(modules - names)
    assert not missing, (
        f"docs/architecture.md's tree lacks {missing} of src/copilot_driver/{folder}"
    )
