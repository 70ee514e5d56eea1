"""The harness as a GitHub Actions step, end to end on the real sidecar.

Each run sets GITHUB_ACTIONS=true with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
pointing at files, then reads back what the runner would: the step outputs
(parsed the runner's way), the workflow commands on stderr, the summary, and
stdout, which must hold the answer and nothing else. Also here: the
credential preflight, retries of transient model failures (each try a fresh
session; never after a tool ran), and the overlapped start-up.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers.actions_runner import read_file_commands, unescape_command_value
from helpers.harness_runs import CANARIES, HarnessHarness

pytestmark = pytest.mark.e2e

SCRIPT = Script(
    rules=(
        Rule(
            "CLEANUP",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "git --version"}),)),
                Reply(tool_calls=(ToolCall("bash", {"command": "rm victim.txt"}),)),
                Reply(text="Git works; removing the file was not allowed."),
            ),
        ),
        Rule("FLAKY", (Reply(http_status=503),)),
        Rule(
            "TOOL THEN FAIL",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "git --version"}),)),
                Reply(http_status=500),
            ),
        ),
    )
)
ANSWER = "Git works; removing the file was not allowed."
OUTPUT_NAMES = [
    "answer",
    "exit-code",
    "error-kind",
    "session-id",
    "events-file",
    "denials",
    "premium-requests",
    "policy-mode",
    "policy",
]
POLICY = "1 rule: shell(git:*) (from GH_AW_COPILOT_SDK_SERVER_ARGS)"
"""The policy in force in these runs: HarnessHarness's sidecar arguments allow git."""


@dataclass
class StepRun:
    """What a runner would see of one step."""

    completed: subprocess.CompletedProcess[str]
    outputs: dict[str, str]
    summary: str

    @property
    def commands(self) -> list[str]:
        return [line for line in self.completed.stderr.splitlines() if line.startswith("::")]

    def annotations(self, level: str) -> list[tuple[str, str]]:
        """(title, message) of each `::level title=...::message`, unescaped."""
        found = []
        for line in self.commands:
            match = re.fullmatch(rf"::{level} title=([^:]*)::(.*)", line)
            if match:
                found.append((unescape_command_value(match[1]), unescape_command_value(match[2])))
        return found


class ActionsHarness(HarnessHarness):
    def step(self, *args: str, timeout: float = 120, **env: str) -> StepRun:
        outputs, summary = self.tmp / "github-output", self.tmp / "step-summary.md"
        outputs.write_text("")
        summary.write_text("")
        runner = {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
        }
        completed = self.run(*args, timeout=timeout, extra_env={**runner, **env})
        return StepRun(completed, read_file_commands(outputs.read_text()), summary.read_text())


@pytest.fixture
def actions(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> Iterator[ActionsHarness]:
    scripted_model.script = SCRIPT
    runner = ActionsHarness(tmp_path, scripted_model, copilot_cli, copilot_cache_home)
    try:
        yield runner
    finally:
        for pid, _ in runner.processes():  # never leave a failed test's processes behind
            os.kill(pid, signal.SIGKILL)


def assert_clean_stdout(run: StepRun, answer: str) -> None:
    assert run.completed.stdout == answer
    assert "::" not in run.completed.stdout


# -- each outcome: outputs, annotations, summary ---------------------------------------


def test_a_success_with_a_denial(actions: ActionsHarness) -> None:
    run = actions.step()

    assert run.completed.returncode == 0, run.completed.stderr
    assert_clean_stdout(run, ANSWER + "\n")
    assert sorted(run.outputs) == sorted(OUTPUT_NAMES)
    (session,) = [p for p in actions.state.iterdir() if p.is_dir()]
    assert run.outputs["answer"] == ANSWER
    assert run.outputs["exit-code"] == "0"
    assert run.outputs["error-kind"] == ""
    assert run.outputs["session-id"] == session.name
    assert run.outputs["events-file"] == str(session / "events.jsonl")
    assert run.outputs["denials"] == "1"
    assert run.outputs["premium-requests"] == "0"
    # The policy the driver enforced, as result.json names it, and said last on stderr.
    assert run.outputs["policy-mode"] == "scoped"
    assert run.outputs["policy"] == POLICY
    result = json.loads((session / "result.json").read_text())
    assert result["policy"]["summary"] == POLICY
    harness_lines = [
        line for line in run.completed.stderr.splitlines() if line.startswith("[copilot-driver")
    ]
    assert harness_lines[-1] == f"[copilot-driver-harness] tool policy in force: {POLICY}"
    # The token is masked before anything else; the log is one group; no error.
    assert run.commands[0].startswith("::add-mask::")
    assert run.commands[1] == "::group::Copilot driver log (try 1)"
    assert run.commands[-1] == "::endgroup::"
    assert run.annotations("error") == []
    assert run.annotations("warning") == [
        (
            "Copilot tool denied",
            "Tool invocation denied by workflow tool permissions: shell(rm victim.txt)",
        )
    ]
    assert (actions.workspace / "victim.txt").exists()  # what really happened
    assert "## Copilot run succeeded" in run.summary
    assert "allow with `shell(rm victim.txt)`" in run.summary
    assert "matches no shell rule" in run.summary
    assert "```mermaid" in run.summary
    for secret in CANARIES.values():
        assert secret not in actions.everything_written(run.completed.stderr, run.summary)
    actions.assert_no_orphans()


def test_the_denial_guard_stop(actions: ActionsHarness) -> None:
    run = actions.step(GH_AW_MAX_TOOL_DENIALS="1")

    assert run.completed.returncode == 3
    assert_clean_stdout(run, "")
    assert run.outputs["exit-code"] == "3"
    assert run.outputs["error-kind"] == "tool_denials_exceeded"
    assert run.outputs["denials"] == "1"
    assert run.outputs["session-id"]
    ((title, message),) = run.annotations("error")
    assert title == "Stopped: too many tool denials"
    assert "GH_AW_MAX_TOOL_DENIALS" in message
    assert "how to fix:" in message
    assert "## Copilot run failed: Stopped: too many tool denials" in run.summary
    assert "allow with `shell(rm victim.txt)`" in run.summary
    assert (actions.workspace / "victim.txt").exists()


def test_a_configuration_error_before_any_session(actions: ActionsHarness) -> None:
    run = actions.step(GH_AW_PROMPT=str(actions.tmp / "missing.md"))

    assert run.completed.returncode == 2
    assert_clean_stdout(run, "")
    assert run.outputs["exit-code"] == "2"
    assert run.outputs["error-kind"] == "config"
    assert run.outputs["session-id"] == run.outputs["events-file"] == ""
    assert run.outputs["policy-mode"] == run.outputs["policy"] == ""  # no driver read one
    ((title, message),) = run.annotations("error")
    assert title == "The run's configuration is invalid"
    said = f"GH_AW_PROMPT names {actions.tmp / 'missing.md'}, which does not exist"
    assert said in message
    assert "how to fix" not in message  # the line names its fix
    errors = [line for line in run.completed.stderr.splitlines() if " error: " in line]
    assert errors == [f"[copilot-driver-harness] error: {message.removeprefix('error: ')}"]
    assert "## Copilot run failed: The run's configuration is invalid" in run.summary
    assert not actions.state.exists()  # found before the sidecar: nothing started
    assert actions.model.requests == []
    actions.assert_no_orphans()


def test_every_problem_is_one_error_line_and_one_annotation_names_their_number(
    actions: ActionsHarness,
) -> None:
    (actions.tmp / "prompt.md").write_text("  \n")
    run = actions.step("--allow-domain", "*.pypi.org", COPILOT_MODEL="", timeout=30)

    assert run.completed.returncode == 2
    errors = [line for line in run.completed.stderr.splitlines() if " error: " in line]
    prefix = "[copilot-driver-harness] error: "
    assert len(errors) == 3, run.completed.stderr
    assert errors[0].startswith(f"{prefix}--allow-domain '*.pypi.org' is a wildcard")
    assert errors[0].endswith(
        "--allow-domain pypi.org (it allows pypi.org and every name under "
        "it; no rule allows the subdomains alone)"
    )
    assert errors[1] == (
        f"{prefix}GH_AW_PROMPT names {actions.tmp / 'prompt.md'}, which holds only white "
        "space: write the task into it"
    )
    assert errors[2] == (
        f"{prefix}COPILOT_MODEL is set but blank: set it to the model name (e.g. gpt-5-mini)"
    )
    assert run.outputs["error-kind"] == "config"  # the first problem's
    ((title, message),) = run.annotations("error")
    assert title == "3 problems stop the run before it starts"
    assert message.count("error: ") == 3
    assert not actions.state.exists()
    assert actions.model.requests == []


def test_a_sidecar_that_cannot_start(actions: ActionsHarness) -> None:
    actions.cli = actions.tmp / "broken-copilot"
    actions.cli.write_text(f"#!{sys.executable}\nimport sys\nsys.exit('Error: no such model')\n")
    actions.cli.chmod(0o755)
    started = time.monotonic()
    run = actions.step(timeout=60)

    assert run.completed.returncode == 4
    assert time.monotonic() - started < 15  # the waiting driver gave up at once
    assert_clean_stdout(run, "")
    assert run.outputs["error-kind"] == "sidecar_start_failed"
    ((title, message),) = run.annotations("error")
    assert title == "The Copilot CLI sidecar could not start"
    assert "Error: no such model" in message
    assert "## Copilot run failed: The Copilot CLI sidecar could not start" in run.summary
    actions.assert_no_orphans()


@pytest.mark.parametrize("token", ["", None])
def test_no_credential_fails_in_milliseconds_naming_the_secret(
    actions: ActionsHarness, token: str | None
) -> None:
    env = dict(actions.env)
    for name in (*CANARIES, "COPILOT_PROVIDER_BASE_URL"):
        env.pop(name, None)
    if token is not None:
        env["COPILOT_GITHUB_TOKEN"] = token
    actions.env = env
    started = time.monotonic()
    run = actions.step(timeout=30)

    assert run.completed.returncode == 2
    assert time.monotonic() - started < 5
    ((title, message),) = run.annotations("error")
    assert title == "No credential for the Copilot CLI"
    said = "is set but empty" if token is not None else "is not set"
    assert f"COPILOT_GITHUB_TOKEN {said}" in message
    assert "secrets.COPILOT_GITHUB_TOKEN" in message
    assert "fork" in message
    assert run.outputs["error-kind"] == "no_credential"
    assert "No credential for the Copilot CLI" in run.summary
    assert not any(actions.state.glob("*/events.jsonl")) if actions.state.exists() else True


# -- retries -------------------------------------------------------------------------------


def test_a_transient_model_failure_is_retried_with_a_fresh_session(
    actions: ActionsHarness, scripted_model: ScriptedModelServer
) -> None:
    """The model answers 503 until the first try has failed; the second try succeeds."""
    (actions.tmp / "prompt.md").write_text("FLAKY please\n")
    heal = threading.Thread(target=_heal_after_first_failure, args=(actions,), daemon=True)
    heal.start()
    run = actions.step("--retry-delay", "0.5", timeout=180)

    assert run.completed.returncode == 0, run.completed.stderr[-3000:]
    assert_clean_stdout(run, ANSWER + "\n")
    retry_lines = [line for line in run.completed.stderr.splitlines() if "retrying in" in line]
    assert retry_lines == [
        "[copilot-driver-harness] try 1 of 3 failed (the model provider answered HTTP 503); "
        "retrying in 0.5s with a fresh session"
    ]
    assert "::group::Copilot driver log (try 2)" in run.commands
    sessions = sorted(p.name for p in actions.state.iterdir() if p.is_dir())
    assert len(sessions) == 2  # each try is a fresh session
    assert run.outputs["session-id"] in sessions
    summary = run.summary.replace("\\_", "_")
    assert "### Attempts" in summary
    assert "| 1 | 1 | session_error |" in summary
    assert "503" in summary
    assert "| 2 | 0 | - | succeeded | - |" in summary


def _heal_after_first_failure(actions: ActionsHarness) -> None:
    """Swap the failing rule for a working one once the first session has failed."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for events in actions.state.glob("*/events.jsonl") if actions.state.exists() else ():
            if '"session.error"' in events.read_text(errors="replace"):
                actions.model.script = Script(rules=(Rule("FLAKY", SCRIPT.rules[0].replies),))
                return
        time.sleep(0.1)


def test_a_failure_after_a_tool_ran_is_never_retried(actions: ActionsHarness) -> None:
    (actions.tmp / "prompt.md").write_text("TOOL THEN FAIL\n")
    run = actions.step("--retry-delay", "0.5", timeout=180)

    assert run.completed.returncode == 1
    assert "retrying" not in run.completed.stderr
    assert len([p for p in actions.state.iterdir() if p.is_dir()]) == 1
    assert run.outputs["error-kind"] == "session_error"
    ((title, message),) = run.annotations("error")
    assert title == "The Copilot session failed"
    assert "500" in message


# -- overlapped start-up --------------------------------------------------------------------


SLOW_SIDECAR = textwrap.dedent(
    """
    import os, sys, time
    # Written into the workspace: the one folder of the host the sandbox lets it write.
    open(os.environ["GITHUB_WORKSPACE"] + "/.started", "w").write(str(time.time()))
    time.sleep(2)
    os.execv({cli!r}, [{cli!r}, *sys.argv[1:]])
    """
)


def test_the_driver_starts_while_the_sidecar_boots_and_connects_once_it_listens(
    actions: ActionsHarness,
) -> None:
    """A sidecar that takes 2 s to start: this package's driver is already running
    (importing the SDK) meanwhile, and waits for the harness's word before connecting."""
    slow = actions.tmp / "slow-copilot"
    slow.write_text(f"#!{sys.executable}\n" + SLOW_SIDECAR.format(cli=str(actions.cli)))
    slow.chmod(0o755)
    actions.cli = slow
    process = actions.start()
    seen_driver_early = False
    marker = actions.workspace / ".started"
    while process.poll() is None:
        booting = marker.exists() and time.time() - float(marker.read_text() or 0) < 1.5
        drivers = [cmd for _, cmd in actions.processes() if "-m copilot_driver " in cmd + " "]
        seen_driver_early = seen_driver_early or (booting and bool(drivers))
        time.sleep(0.05)
    stdout, stderr = process.communicate()

    assert process.returncode == 0, stderr
    assert stdout == ANSWER + "\n"
    assert seen_driver_early, "the driver was not running while the sidecar booted"
    connected = [json.loads(line) for line in stderr.splitlines() if '"client.started"' in line]
    assert len(connected) == 1
