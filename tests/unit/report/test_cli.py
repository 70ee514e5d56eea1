"""`python -m copilot_driver.report`: the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_driver import __version__
from copilot_driver.report import load_timeline, render_markdown, render_text
from copilot_driver.report.cli import main
from helpers.report_samples import GUARD_STOP, POLICY_DENIAL_SESSION, TOOLS_AND_DENIAL


def test_main_markdown_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(TOOLS_AND_DENIAL), "--format", "markdown"]) == 0

    out, err = capsys.readouterr()
    assert out.startswith("## Copilot session timeline\n")
    assert "```mermaid\ngantt\n" in out
    assert err == ""


def test_main_text_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(GUARD_STOP)]) == 0

    out, _ = capsys.readouterr()
    assert out == render_text(load_timeline(GUARD_STOP))


def test_main_missing_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"

    assert main([str(missing)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("copilot-driver-report: error: cannot read ")
    assert str(missing) in err


def test_main_survives_lone_surrogates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"type": "user.message", "data": {"content": "bad \\ud800 text"}}\n')

    assert main([str(path)]) == 0

    assert "Turn 1: bad ? text" in capsys.readouterr().out


def test_main_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])

    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert out == f"copilot-driver-report {__version__}\n"
    assert err == ""


def test_main_reads_a_session_folder_with_its_result(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(POLICY_DENIAL_SESSION), "--format", "markdown"]) == 0

    out, err = capsys.readouterr()
    assert out == render_markdown(load_timeline(POLICY_DENIAL_SESSION / "events.jsonl"))
    assert "| Exit code | 0 |" in out
    assert err == ""


def test_main_folder_without_events_names_the_file_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"copilot-driver-report: error: {tmp_path} is a folder without events.jsonl "
        f"(expected {tmp_path / 'events.jsonl'})\n"
    )
