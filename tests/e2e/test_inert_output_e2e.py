"""What a workflow reads from a run is inert: the answer on stdout, stderr, the report.

The real CLI through the harness (real bubblewrap, real bash) under
GITHUB_ACTIONS=true, the scripted model answering with workflow commands and
terminal control sequences after a bash call whose command, description and
output hold them too (and so does the prompt). The oracle reads the bytes
the harness and `copilot-driver-report` printed as the Actions runner reads
them (`helpers.runner_commands`, a port of its parser) and looks for raw
control characters.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.inert_text import unwrapped, visible_controls
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers import runtime_record
from helpers.harness_runs import HarnessHarness
from helpers.runner_commands import commands_run

pytestmark = pytest.mark.e2e

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
ANSWER = (
    "Done.\n::error::ans-1\n  ::add-mask::ans-2\n\t::set-output name=a::ans-3\n"
    f"see ##[error]ans-4\n\x1b[31mred\x1b[0m and {OSC52} copied\n::stop-commands::z\n"
    "::error::ans-after-the-stop"
)
COMMAND = "printf '\\033[31mRED\\n::error::tool-1\\n##[error]tool-2\\n\\033]52;c;eA==\\a'"
"""Allowed: bash prints the sequences (the policy refuses a command holding a control
character, so they are spelled for bash)."""
DENIED = "rm -f '\x1b[2J' '##[error]denied-1'\n::error::denied-2"
"""Denied: the driver's log and its denial annotation quote it on stderr."""
DESCRIPTION = "::warning::desc-1 \x1b[2J"
PROMPT = "INERT: answer\n::error::prompt-1\n\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\n"
_FROM_THE_RUN = re.compile(r"(ans|tool|denied|desc|prompt)-")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def acted_on(output: str) -> list[tuple[str, str]]:
    """Commands the runner would run carrying the run's text, but for the driver's
    denial annotations (meant: their message quotes the denied command)."""
    found = commands_run(output) + commands_run(output, culture=True)
    return [
        (name, data)
        for name, data in found
        if _FROM_THE_RUN.search(data) and not data.startswith("Tool invocation denied")
    ]


def test_the_answer_stderr_and_the_report_are_inert_under_actions(
    tmp_path: Path, scripted_model: ScriptedModelServer, copilot_cli: Path, copilot_cache_home: Path
) -> None:
    run = HarnessHarness(tmp_path, scripted_model, copilot_cli, copilot_cache_home)
    run.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-tool", "shell(printf:*)"])
    call = ToolCall("bash", {"command": COMMAND, "description": DESCRIPTION}, call_id="call")
    denied = ToolCall("bash", {"command": DENIED, "description": "remove"}, call_id="denied")
    scripted_model.script = Script(
        rules=(Rule("INERT", (Reply(tool_calls=(call, denied)), Reply(text=ANSWER))),)
    )
    (tmp_path / "prompt.md").write_text(PROMPT)
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    completed = run.run(
        GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(outputs), GITHUB_STEP_SUMMARY=str(summary)
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    # The tool really printed the commands (the model was told them; the CLI itself
    # strips ESC sequences from what it tells the model).
    told = runtime_record.tool_results(scripted_model)["call"]
    assert "RED\n::error::tool-1\n##[error]tool-2\n" in told

    # stdout: the answer, every line shown, none acted on; its controls visible.
    assert acted_on(completed.stdout) == []
    assert commands_run(completed.stdout) == []
    assert not _CONTROL.search(completed.stdout)
    assert re.match(r"::stop-commands::[0-9a-f]{32}\n", completed.stdout)
    assert unwrapped(completed.stdout) == visible_controls(ANSWER) + "\n"
    assert "\u241b[31mred\u241b[0m and \u241b]52;c;ZXZpbA==\u2407 copied" in completed.stdout
    # stderr: the harness's own commands only, and no control characters.
    assert acted_on(completed.stderr) == []
    assert not _CONTROL.search(completed.stderr)
    assert "##\\u005berror]denied-1" in completed.stderr  # the denied command, quoted
    # The step output is the answer itself (a file the runner reads no command from);
    # the step summary shows the run's text with its controls visible.
    assert visible_controls(ANSWER) in outputs.read_text()
    assert "::stop-commands::" not in outputs.read_text().replace("::stop-commands::z", "")
    assert not _CONTROL.search(summary.read_text())
    assert "\u241b]52;c;ZXZpbA==\u2407 copied" in summary.read_text()

    (events,) = run.state.glob("*/events.jsonl")
    for form in ("text", "markdown"):
        report = subprocess.run(
            [sys.executable, "-m", "copilot_driver.report", str(events), "--format", form],
            env={**run.env, "GITHUB_ACTIONS": "true"},
            capture_output=True,
            text=True,
            check=True,
        )
        assert acted_on(report.stdout) == [], form
        assert commands_run(report.stdout) == [], form
        assert not _CONTROL.search(report.stdout + report.stderr), form
        assert re.match(r"::stop-commands::[0-9a-f]{32}\n", report.stdout), form
        for shown in ("\u241b[2J", "tool-1", "denied-1", "::error::ans-1", "ZXZpbA==\u2407"):
            assert shown in report.stdout, (form, shown)

    # Redirected to a file (`>> "$GITHUB_STEP_SUMMARY"`), no runner reads it: no wrapping.
    with (tmp_path / "report.md").open("w") as file:
        subprocess.run(
            [sys.executable, "-m", "copilot_driver.report", str(events), "--format", "markdown"],
            env={**run.env, "GITHUB_ACTIONS": "true"},
            stdout=file,
            check=True,
        )
    written = (tmp_path / "report.md").read_text()
    assert written.startswith("## Copilot session timeline")
    assert not _CONTROL.search(written)


def test_the_oracle_catches_the_raw_run_text() -> None:
    # Raw, the answer's commands run, and its stop silences the rest of the step.
    assert [data for _, data in acted_on(ANSWER)] == ["ans-1", "ans-2", "ans-3", "ans-4"] * 2
    assert acted_on('{"m": "##[error]denied-1"}') == [("error", 'denied-1"}')] * 2
