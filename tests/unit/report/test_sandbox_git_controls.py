"""`sandbox.json`'s `gitNeutralised`: written when there is something, read back, shown."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.report import SandboxSummary, read_sandbox_file, sandbox_record
from copilot_driver.report.markdown import sandbox_section
from copilot_driver.report.model import Timeline
from copilot_driver.report.text import render_text

MOVED = (
    "moved /ws/nested/.git to .git.sandboxed, written in the sandbox: a later git command "
    "on the host would run its hooks and configuration"
)


def test_nothing_put_away_adds_no_key() -> None:
    assert "gitNeutralised" not in sandbox_record(SandboxSummary("workspace"))


@given(st.lists(st.text(min_size=1)))
def test_what_was_put_away_is_read_back(sentences: list[str]) -> None:
    summary = SandboxSummary("workspace", git_neutralised=tuple(sentences))
    record = json.loads(json.dumps(sandbox_record(summary)))
    assert record.get("gitNeutralised", []) == sentences


def test_a_field_of_the_wrong_type_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "sandbox.json"
    path.write_text(json.dumps({"mode": "workspace", "gitNeutralised": ["one", 2, None]}))
    summary = read_sandbox_file(path)
    assert summary is not None
    assert summary.git_neutralised == ("one",)
    path.write_text(json.dumps({"mode": "workspace", "gitNeutralised": "one"}))
    summary = read_sandbox_file(path)
    assert summary is not None
    assert summary.git_neutralised == ()


def test_both_reports_show_each_sentence_whole() -> None:
    summary = SandboxSummary("workspace", git_neutralised=(MOVED,))
    text = render_text(Timeline(sandbox=summary))
    assert "  git controls   moved /ws/nested/.git to .git.sandboxed" in text
    assert " ".join(text.split()).count(MOVED) == 1  # wrapped, never cut
    markdown = "\n".join(sandbox_section(summary))
    assert "| Git control files a tool wrote, after the run |" in markdown
    assert "/ws/nested/.git to .git.sandboxed" in markdown
