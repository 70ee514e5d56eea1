"""`copilot-driver-report` (`python -m copilot_driver.report`): the command, in process
and as the real process (what a user types: a state folder, a `result.json`, `--help`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver import __version__
from copilot_driver.report import load_timeline, render_markdown, render_text
from copilot_driver.report.cli import main
from helpers.report_samples import GUARD_STOP, POLICY_DENIAL_SESSION, TOOLS_AND_DENIAL

GIVE = (
    "give the session's events.jsonl or its folder (the driver's log names the result.json "
    "beside it), or the state folder holding the session folders"
)


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
    assert err == (
        f"[copilot-driver-report] error: cannot read {missing}: No such file or directory; {GIVE}\n"
    )


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


def _command(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "copilot_driver.report", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _session(state: Path, name: str, modified: float, source: Path = POLICY_DENIAL_SESSION) -> Path:
    """A copy of a real session folder in `state`, its events file modified at `modified`."""
    folder = state / name
    if source.is_dir():
        shutil.copytree(source, folder)
    else:
        folder.mkdir(parents=True)
        shutil.copyfile(source, folder / "events.jsonl")
    os.utime(folder / "events.jsonl", (modified, modified))
    return folder


def test_a_state_folder_reports_its_newest_session_and_names_the_others(tmp_path: Path) -> None:
    newest = _session(tmp_path, "ba2f-newest", 1_800_000_000)  # 2027-01-15 08:00:00 UTC
    _session(tmp_path, "older", 1_700_000_000, GUARD_STOP)  # 2023-11-14 22:13:20 UTC
    _session(tmp_path, "oldest", 1_600_000_000, TOOLS_AND_DENIAL)
    (tmp_path / "not-a-session").mkdir()

    completed = _command(tmp_path, "--format", "markdown")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == render_markdown(load_timeline(newest / "events.jsonl"))
    assert completed.stderr == (
        f"[copilot-driver-report] note: {tmp_path} holds no events.jsonl of its own; reporting "
        f"the newest of its 3 sessions, ba2f-newest (events.jsonl modified 2027-01-15 08:00:00 "
        f"UTC): {newest / 'events.jsonl'}\n"
        "[copilot-driver-report] note: 2 other sessions, newest first: "
        "older (2023-11-14 22:13:20 UTC), oldest (2020-09-13 12:26:40 UTC)\n"
    )


def test_a_state_folder_of_one_session_says_so(tmp_path: Path) -> None:
    only = _session(tmp_path, "only", 1_800_000_000)

    completed = _command(tmp_path)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == render_text(load_timeline(only))
    assert "reporting its only session, only (events.jsonl modified " in completed.stderr
    assert completed.stderr.count("\n") == 1


def test_the_other_sessions_listed_are_bounded_and_the_rest_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(25):
        _session(tmp_path, f"s{n:02d}", 1_700_000_000 + n, GUARD_STOP)

    assert main([str(tmp_path)]) == 0

    out, err = capsys.readouterr()
    assert "Copilot session " in out
    first, others = err.splitlines()
    assert "reporting the newest of its 25 sessions, s24 " in first
    listed = others.split("newest first: ", 1)[1]
    assert listed.startswith("s23 (")
    assert listed.count(" UTC)") == 10  # s23 to s14
    assert listed.endswith("s14 (2023-11-14 22:13:34 UTC), and 14 more")


def test_a_folder_without_any_events_file_names_both_places_expected(tmp_path: Path) -> None:
    (tmp_path / "a-session-without-events").mkdir()

    completed = _command(tmp_path)

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr == (
        f"[copilot-driver-report] error: {tmp_path} is a folder without events.jsonl and "
        f"without session folders holding one (expected {tmp_path / 'events.jsonl'} or "
        f"{tmp_path / '<sessionId>' / 'events.jsonl'}); {GIVE}\n"
    )


def test_result_json_reports_the_events_file_beside_it(tmp_path: Path) -> None:
    folder = _session(tmp_path, "session", 1_800_000_000)

    completed = _command(folder / "result.json")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == render_text(load_timeline(folder))
    assert "Turn 1: TIDY the workspace" in completed.stdout  # not "No events."
    assert completed.stderr == (
        f"[copilot-driver-report] note: {folder / 'result.json'} is the driver's result file; "
        f"reporting the events file beside it, {folder / 'events.jsonl'}\n"
    )


def test_result_json_without_events_beside_it_names_the_file_expected(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    shutil.copyfile(POLICY_DENIAL_SESSION / "result.json", result)

    completed = _command(result)

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr == (
        f"[copilot-driver-report] error: {result} is the driver's result file, not an events "
        f"file, and there is no events.jsonl beside it (expected {tmp_path / 'events.jsonl'}); "
        f"{GIVE}\n"
    )


def test_help_names_the_command_and_describes_path_and_format() -> None:
    completed = _command("--help")

    assert completed.returncode == 0
    help_text = " ".join(completed.stdout.split())
    assert completed.stdout.startswith(
        "usage: copilot-driver-report [-h] [--format {text,markdown}] [--version] PATH\n"
    )
    assert "python -m" not in completed.stdout
    assert "PATH the session's events.jsonl; or its session folder; or a file beside it" in (
        help_text
    )
    assert "the newest session, by its events file's modification time, is reported" in help_text
    assert "--format {text,markdown} text (the default): plain ASCII for a terminal;" in help_text
    assert "markdown: GitHub markdown with tables and a Mermaid gantt chart" in help_text
    assert (
        "Exit status: 0 with the report on stdout (an empty events.jsonl, a run that has "
        "written no event yet, is reported as such); 2, with one error line on stderr, when "
        "there is no events file to read, or PATH is not one (no line of it is an event "
        "record: a JSON object with a `type`)."
    ) in help_text


def test_a_usage_error_is_one_line_in_the_shared_form() -> None:
    completed = _command("--format", "html", "events.jsonl")

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1
    assert completed.stderr.startswith(
        "[copilot-driver-report] error: argument --format: invalid choice: 'html' (choose from "
    )
    assert completed.stderr.endswith("(`copilot-driver-report --help` lists the options)\n")
