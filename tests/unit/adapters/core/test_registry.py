"""The registry lists the built-in kinds; each package exports its own SPEC."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from copilot_driver.adapters.core import registry
from copilot_driver.adapters.core.spec import AdapterSpec


@pytest.mark.parametrize("kind", sorted(registry.BUILT_IN))
def test_each_built_in_package_exports_the_spec_of_its_kind(kind: str) -> None:
    spec = importlib.import_module(registry.BUILT_IN[kind]).SPEC
    assert isinstance(spec, AdapterSpec)
    assert spec.kind == kind
    assert registry.adapter_spec(kind) is spec


def test_asking_for_one_kind_loads_no_other_adapter_package() -> None:
    code = (
        "import json, sys\n"
        "from copilot_driver.adapters import adapter_spec\n"
        "adapter_spec('copilot-cli')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert "copilot_driver.adapters.copilot_cli" in loaded
    others = [registry.BUILT_IN[kind] for kind in ("codex", "tool-loop", "copilot-transcript")]
    assert [name for name in others if name in loaded] == []
