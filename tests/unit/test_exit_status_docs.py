"""The documented exit statuses are `exit_codes`' own: one meaning per code, each command's
codes listed where its users read them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from copilot_driver.exit_codes import USED_BY, AdapterExitCode, ExitCode

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def _table_codes(section: str) -> set[int]:
    """The numbers in the first column of a Markdown table (128+N left out)."""
    return {int(found) for found in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)}


@pytest.mark.parametrize(
    ("heading", "command"), [("## The driver", "driver"), ("## The harness", "harness")]
)
def test_exit_status_md_lists_each_command_s_codes(heading: str, command: str) -> None:
    section = _section(DOCS / "exit-status.md", heading)
    assert _table_codes(section) == {int(code) for code in USED_BY[command]}
    assert "128+N" in section


def test_the_adapters_document_their_codes() -> None:
    said = _section(DOCS / "adapters.md", "Exit status: 0 every turn completed")
    sentence = said[: said.index("\n\n")]
    listed = {int(code) for code in re.findall(r"(?:^|[;:] )(\d+) ", sentence)}
    assert listed == {int(code) for code in AdapterExitCode}
    assert f"{int(AdapterExitCode.START_FAILED)} the session could not start" in sentence


def test_one_meaning_per_code() -> None:
    # Every command's own codes are ExitCode members: a code a command gives means the
    # same in every other command that gives it.
    for codes in USED_BY.values():
        assert all(isinstance(code, ExitCode) for code in codes)
    assert int(AdapterExitCode.START_FAILED) == int(ExitCode.START_FAILED)
    assert int(ExitCode.TOOL_DENIALS) not in {int(code) for code in AdapterExitCode}
