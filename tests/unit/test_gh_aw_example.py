"""The gh-aw example workflow names a driver gh-aw accepts and installs what it runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from copilot_driver.gh_aw import DEFAULT_PATH

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "gh-aw-workflow.md"
SEGMENT = re.compile(r"(?:\.[A-Za-z0-9_]|[A-Za-z0-9_])[A-Za-z0-9._-]*")
"""gh-aw's rule for each `/`-separated segment of `engine.driver`."""


def front_matter() -> dict[str, Any]:
    text = EXAMPLE.read_text(encoding="utf-8")
    _, matter, body = text.split("---\n", 2)
    assert body.strip(), "the workflow has a prompt"
    loaded = yaml.safe_load(matter)
    assert isinstance(loaded, dict)
    return loaded


def test_the_driver_is_the_file_the_command_writes_and_gh_aw_accepts_it() -> None:
    engine = front_matter()["engine"]
    assert engine["id"] == "copilot"
    driver = engine["driver"]
    assert driver == str(DEFAULT_PATH)
    assert driver == driver.strip()
    assert not driver.startswith("/")
    assert "\\" not in driver
    assert all(SEGMENT.fullmatch(segment) for segment in driver.split("/"))
    assert driver.endswith(".py"), "gh-aw runs a .py driver with python3"


def test_the_install_step_puts_the_package_on_the_drivers_python_path() -> None:
    matter = front_matter()
    target = "${GITHUB_WORKSPACE}/.copilot-driver/python"
    (step,) = matter["steps"]
    script = " ".join(step["run"].replace("\\\n", " ").split())
    assert f'--target "{target}" "copilot-driver @ git+https://github.com/' in script
    # The lazy-loading cache is built for the SDK the driver will import; never fatal.
    assert f'PYTHONPATH="{target}" python3 -m copilot_driver.sdk_loading build || true' in script
    python_path = matter["engine"]["env"]["PYTHONPATH"]
    assert python_path == "${{ github.workspace }}/.copilot-driver/python"


def test_the_tools_map_to_a_contract_this_driver_reads() -> None:
    """gh-aw compiles `tools` into the tool contract: bash rules become shell(...) grants."""
    tools = front_matter()["tools"]
    assert tools["edit"] is False
    assert all(isinstance(rule, str) and rule for rule in tools["bash"])
