"""The tested Copilot CLI version lives in one Python constant, equal to the Makefile's pin."""

from __future__ import annotations

import re
from pathlib import Path

from copilot_driver.compatibility import RECOMMENDED_CLI_VERSION, TESTED_CLI_VERSIONS

MAKEFILE = Path(__file__).resolve().parents[2] / "Makefile"


def makefile_cli_version() -> str:
    found = re.search(r"^COPILOT_CLI_VERSION\s*:?=\s*(\S+)\s*$", MAKEFILE.read_text(), re.M)
    assert found is not None, "the Makefile no longer sets COPILOT_CLI_VERSION"
    return found.group(1)


def test_the_makefile_provisions_the_recommended_version() -> None:
    assert makefile_cli_version() == RECOMMENDED_CLI_VERSION


def test_the_recommended_version_is_a_tested_one() -> None:
    assert RECOMMENDED_CLI_VERSION in TESTED_CLI_VERSIONS
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in TESTED_CLI_VERSIONS)
