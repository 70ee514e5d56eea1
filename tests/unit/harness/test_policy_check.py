"""Before the run, the harness says when the driver will approve every tool request,
and names a misspelt variable: pure checks, then the real command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.harness.policy_check import (
    NO_POLICY_TITLE,
    misspelt_variables,
    unrestricted_policy,
)
from copilot_driver.workflow_commands import escape_property


def test_no_policy_at_all_is_said_with_the_fix() -> None:
    warning = unrestricted_policy({})
    assert warning is not None
    assert "the driver approves every tool request" in warning
    assert 'GH_AW_COPILOT_SDK_PERMISSIONS=\'{"allowedTools"' in warning


@pytest.mark.parametrize(
    "env",
    [
        {"GH_AW_COPILOT_SDK_PERMISSIONS": '{"allowedTools": ["read"]}'},
        {"GH_AW_COPILOT_SDK_SERVER_ARGS": '["--allow-tool", "read"]'},
        {"GH_AW_COPILOT_SDK_SERVER_ARGS": '["--deny-tool", "shell(rm)"]'},
        {"GH_AW_COPILOT_SDK_TOOL_CONFIG": "{}"},  # the driver checks it (a broken one stops it)
        {"GH_AW_COPILOT_SDK_PERMISSIONS": "not json"},  # the driver reports it
    ],
)
def test_a_policy_or_a_broken_input_is_not_called_unrestricted(env: dict[str, str]) -> None:
    assert unrestricted_policy(env) is None


def test_server_args_without_rules_are_no_policy() -> None:
    assert unrestricted_policy({"GH_AW_COPILOT_SDK_SERVER_ARGS": '["--log-level", "info"]'})


def test_a_misspelt_variable_names_the_one_meant() -> None:
    env = {"GH_AW_COPILOT_SDK_PERMISSION": "{}", "COPILOT_GITHUB_TOKEN": "x", "HOME": "/h"}
    assert misspelt_variables(env) == [
        "GH_AW_COPILOT_SDK_PERMISSION is not a variable copilot-driver reads; did you mean "
        "GH_AW_COPILOT_SDK_PERMISSIONS?"
    ]


def test_the_harness_warns_before_anything_starts(tmp_path: Path) -> None:
    """The real command, stopped right after its checks by a state folder it cannot
    create (a file stands where the folder would be)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Say hello.\n")
    env = {
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_MODEL": "gpt-5-mini",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "COPILOT_CLI_PATH": "/bin/true",
        "COPILOT_GITHUB_TOKEN": "github_pat_" + "x" * 30,
        "GH_AW_COPILOT_SDK_PERMISSION": '{"allowedTools": ["read"]}',
        "GH_AW_SESSION_STATE_BASE_DIR": str(blocker / "state"),
        "GITHUB_ACTIONS": "true",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    run = subprocess.run(
        [sys.executable, "-m", "copilot_driver.harness"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert "did you mean GH_AW_COPILOT_SDK_PERMISSIONS?" in run.stderr
    assert "the driver approves every tool request" in run.stderr
    title = escape_property(NO_POLICY_TITLE)
    assert f"::warning title={title}::no tool policy" in run.stderr
    assert "cannot create the session state folder" in run.stderr


def test_a_run_that_cannot_start_names_the_misspelt_variable_beside_the_problem(
    tmp_path: Path,
) -> None:
    """The model left out, and a near miss of its variable set: the warning says which
    was meant, the error what is missing; the policy warning waits for a run that starts."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "COPILOT_CLI_PATH": "/bin/true",
        "COPILOT_GITHUB_TOKEN": "github_pat_" + "x" * 30,
        "COPILOT_MODLE": "gpt-5-mini",
        "GH_AW_PROMPT": str(tmp_path / "prompt.md"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    (tmp_path / "prompt.md").write_text("Say hello.\n")
    run = subprocess.run(
        [sys.executable, "-P", "-m", "copilot_driver.harness", "--sandbox", "off"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        "[copilot-driver-harness] warning: COPILOT_MODLE is not a variable copilot-driver "
        "reads; did you mean COPILOT_MODEL?",
        "[copilot-driver-harness] error: COPILOT_MODEL is not set: set it to the model name "
        "(e.g. gpt-5-mini)",
    ]
