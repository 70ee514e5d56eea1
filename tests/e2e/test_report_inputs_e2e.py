"""What `copilot-driver-report` (the installed command) does with each file a real harness
run leaves in its session folder, and with files that are not events files: it reports
an events file, says so of an empty `events.jsonl`, and refuses the rest with one error
line and exit status 2. The harness's step summary of the same run names the policy."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers.harness_runs import HarnessHarness
from helpers.markdown_render import rendered_text

pytestmark = pytest.mark.e2e

SCRIPT = Script(
    rules=(
        Rule(
            "CLEANUP",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "git --version"}),)),
                Reply(text="Git works."),
            ),
        ),
    )
)
GIVE = (
    "give the session's events.jsonl or its folder (the driver's log names the result.json "
    "beside it), or the state folder holding the session folders"
)


@pytest.fixture(scope="module")
def session(
    tmp_path_factory: pytest.TempPathFactory, copilot_cli: Path, copilot_cache_home: Path
) -> tuple[Path, str]:
    """A session folder of one real harness run, and the step summary it wrote."""
    tmp = tmp_path_factory.mktemp("report-inputs")
    with ScriptedModelServer() as model:
        model.script = SCRIPT
        harness = HarnessHarness(tmp, model, copilot_cli, copilot_cache_home)
        summary = tmp / "step-summary.md"
        try:
            completed = harness.run(GITHUB_STEP_SUMMARY=str(summary))
            assert completed.returncode == 0, completed.stderr[-3000:]
        finally:
            for pid, _ in harness.processes():
                os.kill(pid, signal.SIGKILL)
    (folder,) = [path for path in harness.state.iterdir() if path.is_dir()]
    return folder, summary.read_text(encoding="utf-8")


def _report(*args: str | Path) -> subprocess.CompletedProcess[str]:
    beside = Path(sys.executable).with_name("copilot-driver-report")
    command = str(beside) if beside.is_file() else shutil.which("copilot-driver-report")
    assert command, "copilot-driver-report is not installed"
    return subprocess.run(
        [command, *map(str, args)], capture_output=True, text=True, timeout=60, check=False
    )


def _refused(path: Path) -> str:
    """The one error line the command wrote for `path`, having exited 2 with no report."""
    completed = _report(path)
    assert (completed.returncode, completed.stdout) == (2, ""), completed.stderr
    assert completed.stderr.count("\n") == 1
    assert completed.stderr.startswith("[copilot-driver-report] error: ")
    return completed.stderr.removeprefix("[copilot-driver-report] error: ").rstrip("\n")


def test_the_session_folder_and_its_events_file_are_reported(session: tuple[Path, str]) -> None:
    folder, _ = session

    completed = _report(folder / "events.jsonl")

    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert "\n  policy       1 allow rule (from GH_AW_COPILOT_SDK_SERVER_ARGS): " in (
        completed.stdout
    )
    assert "\n                 allow  shell(git:*)\n" in completed.stdout
    assert completed.stdout == _report(folder).stdout


def test_the_sidecar_log_is_refused(session: tuple[Path, str]) -> None:
    folder, _ = session
    log = folder / "sidecar.log"
    text = log.read_text(encoding="utf-8")
    assert "listening on port" in text
    lines = len([line for line in text.splitlines() if line.strip()])
    said = "its only line is not" if lines == 1 else f"none of its {lines} lines is"

    assert _refused(log) == (
        f"{log} is not an events file: {said} an event record (a JSON object with a "
        f"`type`; line 1: not JSON); {GIVE}"
    )


def test_a_json_file_that_is_not_events_is_refused(session: tuple[Path, str]) -> None:
    folder, _ = session
    record = folder.parent / "sandbox-record.json"
    sandbox = json.loads((folder / "sandbox.json").read_text(encoding="utf-8"))
    record.write_text(json.dumps(sandbox) + "\n", encoding="utf-8")  # one object, no `type`
    pretty = folder.parent / "pretty.json"
    pretty.write_text(json.dumps(sandbox, indent=2) + "\n", encoding="utf-8")

    assert _refused(record) == (
        f"{record} is not an events file: its only line is not an event record (a JSON "
        f"object with a `type`; line 1: no event type); {GIVE}"
    )
    assert "line 1: not JSON" in _refused(pretty)


def test_an_empty_file_is_refused_but_an_empty_events_file_is_a_run_not_started(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "notes.txt"
    empty.write_text("", encoding="utf-8")
    assert _refused(empty) == f"{empty} is empty, not an events file; {GIVE}"

    started = tmp_path / "session" / "events.jsonl"
    started.parent.mkdir()
    started.write_text("\n", encoding="utf-8")
    for path in (started, started.parent):
        completed = _report(path)
        assert completed.returncode == 0, completed.stderr
        assert completed.stderr == (
            f"[copilot-driver-report] note: {started} is empty: the run had written no event yet\n"
        )
        assert "  outcome      no events yet\n" in completed.stdout
        assert "\nNo events yet: the file holds no event record (a run still starting" in (
            completed.stdout
        )
    markdown = _report(started, "--format", "markdown")
    assert "Outcome | no events yet" in rendered_text(markdown.stdout)


def test_an_events_file_with_broken_lines_is_reported_with_a_note(
    session: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = session
    events = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    partial = tmp_path / "events.jsonl"
    partial.write_text("\n".join([*events[:3], "not json", "[1]", *events[3:]]) + "\n")

    completed = _report(partial)

    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == (
        f"[copilot-driver-report] note: {partial}: 2 of its {len(events) + 2} lines are not "
        "event records and were skipped (line 4: not JSON; line 5: a JSON array, not an "
        "object); the report shows the rest\n"
    )
    assert f"  input        {len(events) + 2} lines, {len(events)} events, 2 skipped" in (
        completed.stdout
    )
    assert re.search(r"\n +\+\d+\.\d\ds +bash +git --version +ok +\d+ ms\n", completed.stdout)


def test_the_step_summary_names_the_policy_at_the_top(session: tuple[Path, str]) -> None:
    _, summary = session

    shown = rendered_text(summary).split("\n")

    assert shown[0] == "Copilot run succeeded"
    assert shown[1:3] == [
        "Field | Value",
        "Policy | 1 allow rule (from GH_AW_COPILOT_SDK_SERVER_ARGS): only what an allow rule "
        "allows was approved; allow shell(git:*)",
    ]
    assert sum(line.startswith("Policy |") for line in shown) == 1
