"""The run report end to end: the real driver on the real Copilot CLI sidecar (the
scripted model asks for one allowed and one denied shell call), then the report
command on the session folder it left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.report import RunOutcome, load_timeline, render_step_summary
from copilot_driver.report.markdown import cell
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import DriverRunner
from helpers.report_samples import mermaid_block

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


def _report(path: Path, *options: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "copilot_driver.report", str(path), *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
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
    assert "  exit code 0\n" in text
    assert "DENIED shell(rm victim.txt)" in text
    assert "approved shell(git --version)" in text
    assert "denied-interactively-by-user" not in text
    flat_text = " ".join(text.split())
    assert f"denied: {reason}; allow with `shell(rm victim.txt)`" in flat_text
    assert "  usage        gpt-4.1: 3 requests; tokens: " in text
    assert "  premium      0 requests" in text
    assert "  format       report v2" in text
    assert "event types not shown" not in text  # policy.denial is read, not unknown

    markdown = _report(folder, "--format", "markdown")
    assert "| Exit code | 0 |" in markdown
    assert "| gpt-4.1 | 3 | " in markdown
    assert f"- shell(rm victim.txt): denied: {cell(reason)}; allow with `shell(rm victim.txt)`" in (
        markdown
    )
    assert "<sub>report v2." in markdown
    assert len(mermaid_block(markdown)) == 5 + 1 + 2  # the header, one section, two bars

    summary = render_step_summary(RunOutcome(0, None, None, None), load_timeline(folder))
    assert summary.startswith("## Copilot run succeeded\n")
    assert "allow with `shell(rm victim.txt)`" in summary
