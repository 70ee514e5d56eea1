"""The harness's checks before anything starts, and the account it gives at the end,
on the real command, the real Copilot CLI and the scripted model.

Every problem the harness can find without starting anything is said at once, one
`[copilot-driver-harness] error: ...` line each with its fix, exit 2, and nothing
started: no session state folder (where the sidecar's log would be), no process
left, no model request. A failed run's error line says the driver's cause once,
whatever the driver's log format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers.harness_runs import HarnessHarness, killing_leftovers

pytestmark = pytest.mark.e2e

ERROR = "[copilot-driver-harness] error: "
SCRIPT = Script(
    rules=(
        Rule(
            "FETCH",
            (
                Reply(tool_calls=(ToolCall("bash", {"command": "git --version"}),)),
                Reply(text="fetched nothing"),
            ),
        ),
        Rule("REFUSE", (Reply(http_status=400, text="bad request: the model refuses"),)),
    )
)


@pytest.fixture
def harness(
    tmp_path: Path,
    scripted_model: ScriptedModelServer,
    copilot_cli: Path,
    copilot_cache_home: Path,
) -> Iterator[HarnessHarness]:
    scripted_model.script = SCRIPT
    with killing_leftovers(
        HarnessHarness(tmp_path, scripted_model, copilot_cli, copilot_cache_home)
    ) as runner:
        yield runner


def errors_of(completed: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in completed.stderr.splitlines() if " error: " in line]


def assert_nothing_started(harness: HarnessHarness) -> None:
    assert not harness.state.exists(), "the session state folder (the sidecar's log) was made"
    assert harness.model.requests == []
    harness.assert_no_orphans(within=0)


# -- every problem at once, nothing started -------------------------------------------------


def test_with_nothing_set_every_missing_input_is_said_at_once(
    tmp_path: Path, copilot_cli: Path
) -> None:
    """A fresh shell that only knows where the Copilot CLI is: the credential, the
    prompt and the model are all said, each with its fix, and nothing starts."""
    state = tmp_path / "state"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "COPILOT_CLI_PATH": str(copilot_cli),
        "GH_AW_SESSION_STATE_BASE_DIR": str(state),
    }
    completed = subprocess.run(
        [sys.executable, "-P", "-m", "copilot_driver.harness"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert completed.returncode == 2, completed.stderr
    errors = errors_of(completed)
    assert len(errors) == 3, completed.stderr
    assert errors[0].startswith(f"{ERROR}no credential for the Copilot CLI: ")
    assert "`export COPILOT_GITHUB_TOKEN=$(gh auth token)`" in errors[0]
    assert errors[1] == (
        f"{ERROR}no prompt: GH_AW_PROMPT is not set; give the prompt file as PROMPT_FILE "
        "(`copilot-driver-harness prompt.md`), or set GH_AW_PROMPT to its path"
    )
    assert (
        errors[2] == f"{ERROR}COPILOT_MODEL is not set: set it to the model name (e.g. gpt-5-mini)"
    )
    assert completed.stdout == ""
    assert not state.exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "is empty"),
        (b"  \n\t\n", "holds only white space"),
        (b"\xff\xfe", "is not valid UTF-8"),
    ],
)
def test_an_unusable_prompt_file_is_found_before_the_sidecar_starts(
    harness: HarnessHarness, content: bytes, said: str
) -> None:
    prompt = harness.tmp / "task.md"
    prompt.write_bytes(content)
    completed = harness.run(str(prompt), timeout=60)

    assert completed.returncode == 2, completed.stderr
    assert errors_of(completed) == [
        f"{ERROR}the prompt file {prompt} {said}"
        + (
            ": write the task into it"
            if "UTF-8" not in said
            else " (invalid byte at offset 0): save it as UTF-8"
        )
    ]
    assert_nothing_started(harness)


def test_several_bad_inputs_are_each_said_once_with_their_fix(harness: HarnessHarness) -> None:
    completed = harness.run(
        "--port",
        "http",
        "--retries",
        "99",
        "--allow-domain",
        "https://example.com/path",
        "--pass-env",
        "NPM-TOKEN",
        "missing.md",
        timeout=60,
        cwd=harness.tmp,
        COPILOT_MODEL=" ",
        GH_AW_COPILOT_SDK_PERMISSIONS='{"allowedTools": ["read"],}',
    )

    assert completed.returncode == 2, completed.stderr
    errors = errors_of(completed)
    assert errors[:6] == [
        f"{ERROR}--port 'http' is not a port number: give 0-65535 (0: any free port)",
        f"{ERROR}--retries '99' is not a number of retries: give 0-10 (0: never retry)",
        f"{ERROR}--allow-domain 'https://example.com/path' is a URL: give the host (and :port) "
        "alone, without scheme or path: --allow-domain example.com",
        f"{ERROR}--pass-env 'NPM-TOKEN' is not an environment variable name: give the name "
        "alone (letters, digits and _, not starting with a digit), e.g. --pass-env NPM_TOKEN",
        f"{ERROR}the prompt file missing.md does not exist (tried {harness.tmp / 'missing.md'}): "
        "give the path of the prompt file",
        f"{ERROR}COPILOT_MODEL is set but blank: set it to the model name (e.g. gpt-5-mini)",
    ]
    (policy,) = errors[6:]  # in the words of the reader the driver shares
    assert policy.startswith(f"{ERROR}GH_AW_COPILOT_SDK_PERMISSIONS is not valid JSON: ")
    assert "trailing comma" in policy
    assert policy.endswith(
        "(a permission policy that cannot be read is never widened to allow-all)"
    )
    assert_nothing_started(harness)


# -- --allow-domain: the fix it names works when pasted --------------------------------------


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("https://example.com/path", "is a URL: give the host (and :port) alone"),
        ("*.example.com", "is a wildcard, which a rule cannot hold: the plain name already "),
        ("example.com/path", "holds a path: the proxy allows hosts, never paths"),
    ],
)
def test_a_value_that_is_not_a_host_names_the_rule_meant_and_that_rule_runs(
    harness: HarnessHarness, given: str, said: str
) -> None:
    refused = harness.run("--allow-domain", given, timeout=60)
    assert refused.returncode == 2, refused.stderr
    (error,) = errors_of(refused)
    assert error.startswith(f"{ERROR}--allow-domain {given!r} {said}")
    assert "not a host name" not in error
    assert "no valid port" not in error
    fix = error.rsplit(": --allow-domain ", 1)[1].split(" ", 1)[0]
    assert fix == "example.com"
    assert_nothing_started(harness)

    (harness.tmp / "prompt.md").write_text("FETCH something\n")
    ran = harness.run("--allow-domain", fix, timeout=120)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert errors_of(ran) == []
    (sandbox_file,) = harness.state.glob("*/sandbox.json")
    assert "example.com" in json.loads(sandbox_file.read_text())["allowedHosts"]


# -- a failed run: the cause said once, briefly --------------------------------------------


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_failed_run_names_its_cause_once_in_either_log_format(
    harness: HarnessHarness, log_format: str
) -> None:
    """The driver's own error line is on stderr already; the harness's says the cause
    once, without the fields the text format appends (sessionId=, errorKind=, ...), then
    the fix."""
    (harness.tmp / "prompt.md").write_text("REFUSE this\n")
    completed = harness.run("--retries", "0", timeout=120, COPILOT_DRIVER_LOG_FORMAT=log_format)

    assert completed.returncode == 1, completed.stderr
    harness_lines = [
        line
        for line in completed.stderr.splitlines()
        if line.startswith("[copilot-driver-harness]")
    ]
    errors = [line for line in harness_lines if line.startswith(ERROR)]
    assert len(errors) == 1, completed.stderr
    cause = errors[0].removeprefix(ERROR)
    assert cause.startswith("the session failed: ")
    assert "bad request: the model refuses" in cause
    for field in ("sessionId=", "errorKind=", "exitCode=", "resultFile=", "durationMs="):
        assert field not in cause
    assert completed.stderr.count("bad request: the model refuses") == 2  # the driver's, ours
    assert harness_lines[-1] == (
        "[copilot-driver-harness] how to fix: see the session's error above; rerun if it was "
        "transient"
    )
    assert harness_lines[-3].startswith("[copilot-driver-harness] tool policy in force: ")
