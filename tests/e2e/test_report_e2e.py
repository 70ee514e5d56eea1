"""The run report end to end: the real driver on the real Copilot CLI sidecar (the
scripted model asks for one allowed and one denied shell call), then the report
command on the session folder it left; and the installed `copilot-driver-report`
command on a session folder holding the harness's `sandbox.json`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.report import (
    RunOutcome,
    SandboxSummary,
    load_timeline,
    render_step_summary,
    sandbox_record,
)
from copilot_driver.report.markdown import prose
from copilot_driver.report.summary import duration
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import DriverRunner
from helpers.markdown_render import rendered_text
from helpers.report_samples import CHART_HEADER, mermaid_block, sandbox_session

pytestmark = pytest.mark.e2e

ANSWER = "Git is installed; I was not allowed to remove victim.txt."
SCRIPT = Script(
    rules=(
        Rule(
            "TIDY",
            (
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": "git --version", "description": "version"}),
                    )
                ),
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": "rm victim.txt", "description": "remove"}),
                    )
                ),
                Reply(text=ANSWER),
            ),
        ),
    )
)
GIT_ONLY = json.dumps(["--headless", "--allow-tool", "shell(git:*)"])


def _run_report(
    path: Path, *options: str, command: tuple[str, ...] | None = None
) -> subprocess.CompletedProcess[str]:
    command = command or (sys.executable, "-m", "copilot_driver.report")
    return subprocess.run(
        [*command, str(path), *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _report(path: Path, *options: str, command: tuple[str, ...] | None = None) -> str:
    completed = _run_report(path, *options, command=command)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return completed.stdout


def test_the_report_of_a_real_run_shows_usage_the_denial_and_the_exit_code(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.script = SCRIPT
    env = driver.environment("TIDY the workspace", GH_AW_COPILOT_SDK_SERVER_ARGS=GIT_ONLY)
    victim = Path(env["GITHUB_WORKSPACE"]) / "victim.txt"
    victim.write_text("still here\n")

    run = driver.run("", env=env)

    assert run.exit_code == 0, run.stderr
    assert victim.exists()
    folder = run.events_file.parent
    (denial,) = run.entries("permission.denied")
    reason = denial["reason"]

    text = _report(folder)
    assert "  exit code    0\n" in text
    assert "\n  policy       1 allow rule (from GH_AW_COPILOT_SDK_SERVER_ARGS): only what" in text
    assert "\n                 allow  shell(git:*)\n" in text
    assert "DENIED shell(rm victim.txt)" in text
    assert "approved shell(git --version)" in text
    assert "denied-interactively-by-user" not in text
    flat_text = " ".join(text.split())
    assert f"denied: {reason}; the rule that would allow it: shell(rm victim.txt)" in flat_text
    assert "\n                shell(rm victim.txt)\n" in text  # a line of its own, to copy
    assert "  usage        gpt-4.1: 3 requests; tokens: " in text
    assert "  premium      0 requests" in text
    assert "  format       report v2" in text
    assert "event types not shown" not in text  # policy.denial is read, not unknown

    markdown = _report(folder, "--format", "markdown")
    assert "| Exit code | 0 |" in markdown
    assert "| Policy | 1 allow rule (from GH\\_AW\\_COPILOT\\_SDK\\_SERVER\\_ARGS): " in markdown
    assert "| gpt-4.1 | 3 | " in markdown
    listed = f"- shell(rm victim.txt): denied: {prose(reason)}; allow with `shell(rm victim.txt)`"
    assert listed in markdown
    assert "`" not in rendered_text(markdown).split("### Denied", 1)[-1].split("Final answer")[0]
    assert "<sub>report v2." in markdown
    assert len(mermaid_block(markdown)) == CHART_HEADER + 1 + 2  # the header, one section, two bars

    summary = render_step_summary(RunOutcome(0, None, None, None), load_timeline(folder))
    assert summary.startswith("## Copilot run succeeded\n")
    assert "allow with `shell(rm victim.txt)`" in summary

    # The figure the driver's log shows is the report's driver time, named as such.
    (completed,) = run.entries("session.completed")
    driver_time = duration(completed["durationMs"])
    assert f"  driver time  {driver_time}, from sending the prompt to completion " in text
    assert "  event span   " in text
    assert f"| Driver time | {driver_time}, from sending the prompt to completion " in markdown

    # What a new user points the command at: the result.json the log names, the state folder.
    beside = _run_report(folder / "result.json")
    assert (beside.returncode, beside.stdout) == (0, text)
    assert "is the driver's result file; reporting the events file beside it" in beside.stderr
    state = _run_report(folder.parent)
    assert (state.returncode, state.stdout) == (0, text)
    assert f"reporting its only session, {folder.name} (events.jsonl modified " in state.stderr


def _report_command() -> tuple[str, ...]:
    """The console script installed beside this Python (the virtualenv's), else PATH's."""
    beside = Path(sys.executable).with_name("copilot-driver-report")
    found = str(beside) if beside.is_file() else shutil.which("copilot-driver-report")
    assert found, "copilot-driver-report is not installed"
    return (found,)


def test_the_report_command_shows_the_sandbox_of_the_session_folder(tmp_path: Path) -> None:
    workspace = SandboxSummary(
        mode="workspace",
        allowed_hosts=("127.0.0.1:43121", "githubcopilot.com:443"),
        egress_denied=(("evil.example:443", 12), ("a|b<i>:80", 1)),
        passed_env=("PIP_INDEX_URL",),
    )
    folder = sandbox_session(tmp_path / "session", sandbox_record(workspace))
    command = _report_command()

    text = _report(folder, command=command)
    assert "\nSandbox: workspace\n" in text
    assert "  allowed hosts  127.0.0.1:43121, githubcopilot.com:443\n" in text
    assert "  passed env     PIP_INDEX_URL\n" in text
    assert "  egress denied  12  evil.example:443\n                  1  a|b<i>:80\n" in text
    assert "WARNING" not in text
    assert text == _report(folder / "events.jsonl", command=command)

    markdown = _report(folder, "--format", "markdown", command=command)
    assert "| Mode | workspace |" in markdown
    assert "| Egress denied | 13 connections to 2 hosts |" in markdown
    assert "| evil.example:443 | 12 |\n| a\\|b\\<i\\>:80 | 1 |\n" in markdown
    assert "[!WARNING]" not in markdown

    (folder / "sandbox.json").write_text(json.dumps({"mode": "off"}), encoding="utf-8")
    warning = (
        "The OS sandbox was off (--sandbox off): tools ran with the runner's full file system, "
        "network and environment."
    )
    off_text = _report(folder, command=command)
    assert "\nSandbox: off\n  WARNING: The OS sandbox was off " in off_text
    assert f"WARNING: {warning}" in " ".join(off_text.split())  # wrapped at 96 columns
    markdown = _report(folder, "--format", "markdown", command=command)
    assert markdown.startswith(f"## Copilot session timeline\n\n> [!WARNING]\n> {warning}\n")
