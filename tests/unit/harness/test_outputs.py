"""A finished run's account: its lines, the files beside the events file, the step
outputs and the answer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.console import PREFIX, Console
from copilot_driver.harness.outputs import Ending, FinishedRun, Outputs
from copilot_driver.harness.progress import Progress, StatusLine
from copilot_driver.harness.sandbox import SandboxSettings
from copilot_driver.redaction import Redactor
from copilot_driver.report import SANDBOX_FILE
from copilot_driver.vocabulary import EVENTS_FILE_NAME, SIDECAR_LOG_NAME, HarnessErrorKind
from helpers.actions_runner import read_file_commands

SECRET = "f3c1a9e07b2d4c6e8a0b1c2d3e4f5a6b"


def finished(tmp_path: Path, ending: Ending, *, answer: str = "") -> FinishedRun:
    session = tmp_path / "state" / "session-1"
    session.mkdir(parents=True)
    (session / EVENTS_FILE_NAME).write_text("", encoding="utf-8")
    sidecar_log = tmp_path / "state" / "sidecar-x.log"
    sidecar_log.write_text("stdout: listening\n", encoding="utf-8")
    return FinishedRun(
        ending,
        answer=answer,
        attempts=(),
        progress=Progress(),
        state_base=tmp_path / "state",
        wall_started=0.0,
        sidecar_log=sidecar_log,
        sandbox_settings=SandboxSettings(enabled=False),
        sandbox=None,
    )


def tell(run: FinishedRun, env: dict[str, str], *, in_actions: bool = False) -> tuple[str, str]:
    stderr, stdout = io.StringIO(), io.StringIO()
    console = Console(StatusLine(stderr, enabled=False), in_actions=in_actions)
    console.redactor = Redactor([SECRET])
    Outputs(env, console=console, stdout=stdout).report(run)
    return stderr.getvalue(), stdout.getvalue()


def test_a_success_prints_the_answer_masked_and_writes_the_step_outputs(tmp_path: Path) -> None:
    run = finished(tmp_path, Ending(ExitCode.OK), answer=f"done {SECRET}\n")
    outputs = tmp_path / "github-output"
    stderr, stdout = tell(run, {"GITHUB_OUTPUT": str(outputs)})
    assert (stderr, stdout) == ("", "done ***\n")
    written = outputs.read_text(encoding="utf-8")
    assert "\ndone ***\n" in written
    assert "exit-code<<" in written
    assert f"\n{tmp_path / 'state' / 'session-1' / EVENTS_FILE_NAME}\n" in written


def test_the_sidecar_log_and_the_sandbox_record_go_beside_the_events_file(
    tmp_path: Path,
) -> None:
    run = finished(tmp_path, Ending(ExitCode.OK))
    tell(run, {})
    session = tmp_path / "state" / "session-1"
    assert (session / SIDECAR_LOG_NAME).read_text(encoding="utf-8") == "stdout: listening\n"
    assert run.sidecar_log is not None
    assert not run.sidecar_log.exists()
    record = json.loads((session / SANDBOX_FILE).read_text(encoding="utf-8"))
    assert record["mode"] == "off"


def test_a_failure_is_its_cause_and_fix_and_in_actions_an_annotation(tmp_path: Path) -> None:
    ending = Ending(ExitCode.CONFIG, HarnessErrorKind.CLI_NOT_FOUND, f"no CLI {SECRET}")
    stderr, _ = tell(finished(tmp_path, ending), {}, in_actions=True)
    lines = stderr.splitlines()
    assert lines[0] == f"{PREFIX} error: no CLI ***"
    assert lines[-1].startswith("::error title=No usable Copilot CLI::error: no CLI ***")


def test_lines_the_driver_already_showed_are_not_said_twice(tmp_path: Path) -> None:
    ending = Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, "bad variable", shown=True)
    stderr, _ = tell(finished(tmp_path, ending), {})
    assert stderr.splitlines() == [
        f"{PREFIX} how to fix: `python -m copilot_driver --help` lists every variable the "
        "driver reads"
    ]


def test_a_refusal_is_one_error_line_per_problem_with_no_separate_fix(tmp_path: Path) -> None:
    message = "COPILOT_MODEL is not set: set it\nthe prompt file x.md does not exist: give it"
    ending = Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, message, refused=True)
    stderr, _ = tell(finished(tmp_path, ending), {}, in_actions=True)
    lines = stderr.splitlines()
    assert lines[:2] == [
        f"{PREFIX} error: COPILOT_MODEL is not set: set it",
        f"{PREFIX} error: the prompt file x.md does not exist: give it",
    ]
    assert "how to fix" not in stderr
    (annotation,) = [line for line in lines if line.startswith("::error")]
    assert annotation.startswith("::error title=2 problems stop the run before it starts::")


def write_policy(tmp_path: Path, where: str) -> None:
    policy = {
        "mode": "scoped",
        "source": "GH_AW_COPILOT_SDK_PERMISSIONS",
        "allowedTools": ["read"],
        "deniedTools": [],
        "summary": "1 rule: read (from GH_AW_COPILOT_SDK_PERMISSIONS)",
    }
    session = tmp_path / "state" / "session-1"
    if where == "result.json":
        (session / "result.json").write_text(json.dumps({"exitCode": 0, "policy": policy}))
    else:
        record = {"type": "policy.in_force", "data": policy, "timestamp": "2026-01-01T00:00:00Z"}
        (session / EVENTS_FILE_NAME).write_text(json.dumps(record) + "\n")


@pytest.mark.parametrize("where", ["result.json", "the events file's first record"])
def test_the_policy_in_force_is_said_last_and_is_a_step_output(tmp_path: Path, where: str) -> None:
    run = finished(tmp_path, Ending(ExitCode.OK))
    write_policy(tmp_path, where)
    outputs = tmp_path / "github-output"
    stderr, _ = tell(run, {"GITHUB_OUTPUT": str(outputs)})
    assert stderr == (
        f"{PREFIX} tool policy in force: 1 rule: read (from GH_AW_COPILOT_SDK_PERMISSIONS)\n"
    )
    said = read_file_commands(outputs.read_text())
    assert said["policy-mode"] == "scoped"
    assert said["policy"] == "1 rule: read (from GH_AW_COPILOT_SDK_PERMISSIONS)"


def test_without_a_policy_the_outputs_are_empty_and_nothing_is_said(tmp_path: Path) -> None:
    outputs = tmp_path / "github-output"
    stderr, _ = tell(finished(tmp_path, Ending(ExitCode.OK)), {"GITHUB_OUTPUT": str(outputs)})
    assert stderr == ""
    said = read_file_commands(outputs.read_text())
    assert (said["policy-mode"], said["policy"]) == ("", "")


def test_a_text_format_cause_is_said_without_its_fields(tmp_path: Path) -> None:
    cause = (
        "the session failed: 400 no sessionId=abc errorKind=session_error exitCode=1 "
        'resultFile="/tmp/a b/result.json"'
    )
    ending = Ending(ExitCode.FAILURE, "session_error", cause)
    stderr, _ = tell(finished(tmp_path, ending), {})
    assert stderr.splitlines()[0] == f"{PREFIX} error: the session failed: 400 no"


def test_a_cause_that_quotes_output_is_one_error_line_then_the_quote(tmp_path: Path) -> None:
    cause = "the Copilot CLI sidecar could not start: it exited; its last output:\nfatal: bind"
    ending = Ending(ExitCode.START_FAILED, HarnessErrorKind.SIDECAR_START_FAILED, cause)
    stderr, _ = tell(finished(tmp_path, ending), {})
    assert [line for line in stderr.splitlines() if " error: " in line] == [
        f"{PREFIX} error: the Copilot CLI sidecar could not start: it exited; its last output:"
    ]
    assert f"{PREFIX} fatal: bind" in stderr.splitlines()


def test_a_step_file_that_cannot_be_written_is_one_error_line_naming_the_fix(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    env = {"GITHUB_OUTPUT": str(folder), "GITHUB_STEP_SUMMARY": str(folder)}
    stderr, stdout = tell(finished(tmp_path, Ending(ExitCode.OK), answer="done\n"), env)
    assert stderr.splitlines() == [
        f"{PREFIX} error: cannot write the step outputs to {folder}: Is a directory; "
        "GITHUB_OUTPUT must name a file this user can append to (the runner sets it)",
        f"{PREFIX} error: could not write the step summary to {folder}: Is a directory; "
        "GITHUB_STEP_SUMMARY must name a file this user can append to (the runner sets it)",
    ]
    assert stdout == "done\n"  # the run's account goes on
