"""The report shows the run's text with its control characters visible, in every form:
text, markdown, the step summary, and `copilot-driver-report`'s own stdout and stderr."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.report import RunOutcome, parse_timeline, render_step_summary
from copilot_driver.report.cli import main
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.text import render_text
from copilot_driver.vocabulary import RunResult
from helpers.report_samples import bash_call, event, shutdown
from helpers.runner_commands import commands_run

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE = "\x1b[31mred\x1b]52;c;ZXZpbA==\x07\x1b]8;;http://x\x1b\\\x9b2J\x7f\rx\n::error::h"
"""ESC sequences (SGR, OSC 52, OSC 8), a C1 CSI, DEL, a lone CR, a workflow command."""


def hostile_lines(text: str) -> list[str]:
    """An events file with `text` in every string the report shows."""
    return [
        event("session.start", {"sessionId": text, "selectedModel": text, "copilotVersion": text}),
        event("user.message", {"content": text}),
        *bash_call("c1", text, 0.1, ok=False),
        event("session.error", {"message": text}, 0.2),
        event("assistant.message", {"content": text}, 0.3),
        shutdown(codeChanges={"filesModified": [text], "linesAdded": 1, "linesRemoved": 0}),
    ]


def renderings(text: str) -> dict[str, str]:
    timeline = parse_timeline(hostile_lines(text))
    timeline.result = RunResult(1, "session_error", text)
    outcome = RunOutcome(1, "session_error", text, text)
    return {
        "text": render_text(timeline),
        "markdown": render_markdown(timeline),
        "step summary": render_step_summary(outcome, timeline),
    }


def test_every_form_shows_the_controls_and_acts_on_none() -> None:
    for form, shown in renderings(HOSTILE).items():
        assert not _CONTROL.search(shown), form
        assert "\u241b" in shown, form  # ESC shown as its picture
        assert "\\u009b2J" in shown, form


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1))
def test_no_control_reaches_any_form(text: str) -> None:
    for form, shown in renderings(text).items():
        assert not _CONTROL.search(shown), form


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_the_cli_under_actions_prints_nothing_the_runner_runs(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    events = tmp_path / "s" / "events.jsonl"
    events.parent.mkdir()
    events.write_text("\n".join(hostile_lines(HOSTILE)) + "\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main([str(tmp_path), "--format", form]) == 0
    out, err = capsys.readouterr()
    assert commands_run(out) == []
    assert commands_run(out, culture=True) == []
    # The text form quotes the answer line by line: `::error::h` starts one, so the
    # report is wrapped; markdown puts it inside a table cell and a quote.
    assert out.startswith("::stop-commands::") == (form == "text")
    assert not _CONTROL.search(out + err)
    assert "::error::h" in out  # shown
