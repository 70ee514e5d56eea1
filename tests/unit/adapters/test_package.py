"""The adapters stand apart: no driver, no permissions, no SDK on import."""

from __future__ import annotations

import json
import subprocess
import sys

from copilot_driver.adapters import adapter_kinds, adapter_spec


def test_importing_every_adapter_loads_neither_the_driver_nor_the_sdk() -> None:
    code = (
        "import json, sys\n"
        "import copilot_driver.adapters.cli, copilot_driver.adapters.copilot_cli\n"
        "import copilot_driver.adapters.copilot_transcript\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    forbidden = [
        name
        for name in loaded
        if name == "copilot"
        or name.startswith("copilot.")
        or name.startswith(("copilot_driver.driver.lifecycle", "copilot_driver.permissions"))
        or name in ("copilot_driver.driver.connection", "copilot_driver.harness")
    ]
    assert forbidden == []


def test_the_copilot_kinds_are_registered_and_require_their_command() -> None:
    assert {"copilot-cli", "copilot-transcript"} <= set(adapter_kinds())
    for kind in ("copilot-cli", "copilot-transcript"):
        spec = adapter_spec(kind)
        assert spec.requires_command
        assert spec.default_command == "copilot"
