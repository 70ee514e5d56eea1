"""The report of a real run, through the installed `copilot-driver-report`: the real
driver on the real Copilot CLI sidecar and the scripted model, under a scoped policy.
The model creates a file with `create`, removes one with a shell `rm` the policy allows,
and asks for an `rm` it denies; its answer has blank lines and a quoted command.

What the report must say of it: the policy in force near the top, the file the editing
tool changed (and that the shell command's deletion is not listed, with how many shell
commands ran), the denied rule on a line of its own, and the answer line for line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from copilot_driver.testing.fixtures import DriverRun, DriverRunner
from helpers.markdown_render import rendered_text

pytestmark = pytest.mark.e2e

RULES = ["write", "shell(rm old.txt)", "shell(git:*)"]
ANSWER = (
    "I created `new.txt` and removed old.txt.\n"
    "\n"
    "I was not allowed to remove victim.txt; to allow it, run again with the rule "
    "`shell(rm victim.txt)` added to GH_AW_COPILOT_SDK_PERMISSIONS.\n"
    "\n"
    "Done."
)


def _script(workspace: Path) -> Script:
    create = {"path": str(workspace / "new.txt"), "file_text": "hello\n"}
    return Script(
        rules=(
            Rule(
                "CHANGE",
                (
                    Reply(tool_calls=(ToolCall("create", create),)),
                    Reply(tool_calls=(ToolCall("bash", {"command": "rm old.txt"}),)),
                    Reply(tool_calls=(ToolCall("bash", {"command": "rm victim.txt"}),)),
                    Reply(text=ANSWER),
                ),
            ),
        )
    )


def _report_command() -> str:
    """The console script installed beside this Python (the virtualenv's), else PATH's."""
    beside = Path(sys.executable).with_name("copilot-driver-report")
    found = str(beside) if beside.is_file() else shutil.which("copilot-driver-report")
    assert found, "copilot-driver-report is not installed"
    return found


def _report(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_report_command(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def run(driver: DriverRunner, scripted_model: ScriptedModelServer) -> DriverRun:
    env = driver.environment(
        "CHANGE the workspace",
        GH_AW_COPILOT_SDK_PERMISSIONS=json.dumps({"allowedTools": RULES}),
    )
    workspace = Path(env["GITHUB_WORKSPACE"])
    for name in ("old.txt", "victim.txt"):
        (workspace / name).write_text("x\n", encoding="utf-8")
    scripted_model.script = _script(workspace)

    finished = driver.run("", env=env)

    assert finished.exit_code == 0, finished.stderr
    assert (workspace / "new.txt").exists()
    assert not (workspace / "old.txt").exists()  # the shell command removed it
    assert (workspace / "victim.txt").exists()  # denied
    return finished


def test_the_text_report_says_what_it_lists_and_keeps_rules_and_answers_whole(
    run: DriverRun,
) -> None:
    folder = run.events_file.parent
    cwd = run.events()[1]["data"]["context"]["cwd"]

    completed = _report(folder)

    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    text = completed.stdout
    lines = text.splitlines()
    header = text.split("\n\n", 1)[0]
    policy = header.split("\n  policy       ", 1)[1]
    assert " ".join(policy.split()).startswith(
        "3 allow rules (from GH_AW_COPILOT_SDK_PERMISSIONS): only what an allow rule allows "
        "was approved allow write"
    )
    assert policy.endswith(
        "\n                 allow  write"
        "\n                 allow  shell(rm old.txt)"
        "\n                 allow  shell(git:*)"
    )
    # The shutdown record counts the editing tools' files only: the removed old.txt is not
    # among them, and the report says so, with the shell commands that ran.
    changed = lines.index("  changed      1 file (+1 -0) by the editing tools (create, edit)")
    assert f"\n  cwd          {cwd}\n" in header  # the files are named relative to it
    assert lines[changed + 1 : changed + 3] == [
        "                 new.txt",
        "               not listed: what shell commands changed (1 ran)",
    ]
    assert "old.txt" not in "\n".join(lines[changed : changed + 3])
    # The rule to copy is a line of its own, whole.
    denied = lines.index("            DENIED shell(rm victim.txt)")
    assert lines[denied + 1].endswith("; the rule that would allow it:")
    assert lines[denied + 2] == "                shell(rm victim.txt)"
    # The answer line for line: its blank lines kept, the quoted rule on one line.
    answer = text.split("Final answer:\n", 1)[1].split("\n\nTotals:", 1)[0]
    assert [line.strip() for line in answer.split("\n")][:2] == [
        "I created `new.txt` and removed old.txt.",
        "",
    ]
    assert answer.endswith("\n\n  Done.")
    assert any("`shell(rm victim.txt)`" in line for line in answer.split("\n"))
    assert " ".join(answer.split()) == " ".join(ANSWER.split())


def test_the_markdown_report_renders_values_and_the_policy(run: DriverRun) -> None:
    folder = run.events_file.parent
    reason = run.entries("permission.denied")[0]["reason"]

    completed = _report(folder, "--format", "markdown")

    assert completed.returncode == 0, completed.stderr
    shown = rendered_text(completed.stdout)
    assert (
        "Policy | 3 allow rules (from GH_AW_COPILOT_SDK_PERMISSIONS): only what an allow rule "
        "allows was approved; allow write, shell(rm old.txt), shell(git:*)"
    ) in shown
    assert (
        "Files changed | 1 file (+1 -0) by the editing tools (create, edit); not listed: what "
        "shell commands changed (1 ran)"
    ) in shown
    assert "Not listed: what shell commands changed (1 ran)." in shown
    # The policy's reason quotes the command: rendered as code, not as literal backticks.
    assert reason.startswith("`rm victim.txt`")
    assert f"shell(rm victim.txt): denied: {reason.replace('`', '')}; allow with " in shown
    assert "`" not in shown.split("Denied permissions", 1)[1].split("Final answer", 1)[0]
