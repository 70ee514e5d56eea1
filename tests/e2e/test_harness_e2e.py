"""The harness end to end: real sidecar, real driver processes, the process table.

Every harness started here carries a unique marker variable, inherited by the
sidecar, the driver and anything they start, so "no orphans" is checked by
scanning /proc/*/environ for it after the run.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
)
from copilot_driver.testing.environment import TEST_PROVIDER_KEY
from helpers.harness_runs import CANARIES, HarnessHarness, killing_leftovers

pytestmark = pytest.mark.e2e

SCRIPT = Script(
    rules=(
        Rule(
            "CLEANUP",
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
                Reply(text="Git works; removing the file was not allowed."),
            ),
        ),
        Rule("SLOW", (Reply(text="late", delay_s=60),)),
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


def test_t_csd_007_sidecar_and_driver_share_one_fresh_token_that_is_never_logged(
    harness: HarnessHarness,
) -> None:
    """T-CSD-007: In SDK mode, harness and driver receive the same non-empty
    COPILOT_CONNECTION_TOKEN, and token values are not logged."""
    tokens = []
    for run in ("first", "second"):
        driver, record = harness.recording_driver(run)
        completed = harness.run(driver=driver)
        assert completed.returncode == 0, completed.stderr
        seen = json.loads(record.read_text())
        token = seen["env"]["COPILOT_CONNECTION_TOKEN"]
        assert re.fullmatch(r"[0-9a-f]{64}", token)
        assert seen["sidecar_env"]["COPILOT_CONNECTION_TOKEN"] == token
        # The driver is pointed at the port the sidecar announced (it was asked for port 0).
        sidecar_log = max(harness.state.glob("sidecar-*.log"), key=lambda p: p.stat().st_mtime)
        port = re.search(r"listening on port (\d+)", sidecar_log.read_text())
        assert port is not None
        assert seen["env"]["COPILOT_SDK_URI"] == f"http://127.0.0.1:{port.group(1)}"
        # Never on a command line (other users can read argv), never in the sandbox's
        # launcher (bubblewrap), never in any output or file.
        assert token not in " ".join(seen["sidecar_argv"] + seen["argv"] + seen["launcher_argv"])
        assert token not in json.dumps(seen["launcher_env"])
        assert token not in harness.everything_written(completed.stdout, completed.stderr)
        tokens.append(token)
    assert tokens[0] != tokens[1]
    harness.assert_no_orphans()


@pytest.mark.parametrize("sandbox", ["workspace", "off"])
def test_the_platform_token_reaches_the_cli_as_its_credential_only(
    harness: HarnessHarness, sandbox: str
) -> None:
    """The CLI gets the token it prefers as COPILOT_GITHUB_TOKEN, which it keeps from the
    commands it runs; GH_TOKEN and GITHUB_TOKEN, which it would pass on, stay out."""
    driver, record = harness.recording_driver("isolation")
    completed = harness.run("--sandbox", sandbox, driver=driver)

    assert completed.returncode == 0, completed.stderr
    seen = json.loads(record.read_text())
    assert seen["sidecar_env"]["COPILOT_GITHUB_TOKEN"] == CANARIES["COPILOT_GITHUB_TOKEN"]
    assert "GH_TOKEN" not in seen["sidecar_env"]
    assert "GITHUB_TOKEN" not in seen["sidecar_env"]
    for name, canary in CANARIES.items():
        assert name not in seen["env"]
        assert canary not in json.dumps(seen["env"])
        if sandbox == "workspace":
            assert canary not in json.dumps(seen["launcher_env"])


def test_with_only_github_token_the_cli_gets_it_as_copilot_github_token(
    harness: HarnessHarness,
) -> None:
    driver, record = harness.recording_driver("github-token-only")
    harness.env.pop("COPILOT_GITHUB_TOKEN")
    harness.env.pop("GH_TOKEN")
    completed = harness.run(driver=driver)

    assert completed.returncode == 0, completed.stderr
    seen = json.loads(record.read_text())
    assert seen["sidecar_env"]["COPILOT_GITHUB_TOKEN"] == CANARIES["GITHUB_TOKEN"]
    assert "GITHUB_TOKEN" not in seen["sidecar_env"]


def test_a_full_run_through_the_harness(harness: HarnessHarness, tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier steps\n")
    completed = harness.run(GITHUB_STEP_SUMMARY=str(summary), GH_AW_TIMEOUT_MINUTES="5")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "Git works; removing the file was not allowed.\n"
    assert (harness.workspace / "victim.txt").exists()
    (session,) = [p for p in harness.state.iterdir() if p.is_dir()]
    assert (session / "events.jsonl").is_file()
    assert "listening on port" in (session / "sidecar.log").read_text()
    entries = [json.loads(line) for line in completed.stderr.splitlines() if line.startswith("{")]
    (start,) = [e for e in entries if e["event"] == "connection.start"]
    assert start["sendTimeoutMs"] == 270_000  # 5 minutes - 30 s, derived by the harness
    report = summary.read_text()
    assert report.startswith("# earlier steps\n")  # appended, not replaced
    assert "shell(rm victim.txt)" in report
    assert "```mermaid" in report
    for secret in [*CANARIES.values(), TEST_PROVIDER_KEY]:
        assert secret not in harness.everything_written(completed.stdout, completed.stderr)
    harness.assert_no_orphans()


def test_github_actions_masks_the_token_first_and_never_on_stdout(harness: HarnessHarness) -> None:
    driver, record = harness.recording_driver("masked")
    completed = harness.run(driver=driver, GITHUB_ACTIONS="true")

    assert completed.returncode == 0, completed.stderr
    token = json.loads(record.read_text())["env"]["COPILOT_CONNECTION_TOKEN"]
    first, *rest = completed.stderr.splitlines()
    assert first == f"::add-mask::{token}"
    assert token not in "\n".join(rest)
    assert completed.stdout == ""  # `answer=$(copilot-driver-harness)` captures no command


def test_secret_looking_values_and_github_tokens_are_masked_in_every_harness_output(
    harness: HarnessHarness, tmp_path: Path
) -> None:
    """A driver whose answer repeats a secret of the harness's environment (one the
    driver is never given) and a GitHub-shaped token: stdout, the step outputs and the
    step summary show `***`."""
    npm_secret = "npm-harness-secret-7f3e"
    github_shaped = "ghs_" + "Q" * 36
    answer = f"the answer holds {npm_secret} and {github_shaped}"
    driver = [sys.executable, "-c", f"print({answer!r})"]
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    completed = harness.run(
        driver=driver,
        NPM_TOKEN=npm_secret,
        GITHUB_OUTPUT=str(outputs),
        GITHUB_STEP_SUMMARY=str(summary),
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "the answer holds *** and ***\n"
    written = "\n".join(
        [completed.stdout, completed.stderr, outputs.read_text(), summary.read_text()]
    )
    assert npm_secret not in written
    assert github_shaped not in written
    assert "answer<<" in outputs.read_text()


def fake_sidecar(tmp: Path, body: str) -> Path:
    path = tmp / "fake-copilot"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{textwrap.dedent(body)}\n")
    path.chmod(0o755)
    return path


def test_a_sidecar_that_never_listens_fails_clearly_within_the_ready_timeout(
    harness: HarnessHarness, tmp_path: Path
) -> None:
    harness.cli = fake_sidecar(
        tmp_path,
        """
        print("starting up, never ready", file=sys.stderr, flush=True)
        time.sleep(600)
    """,
    )
    started = time.monotonic()
    completed = harness.run("--ready-timeout", "1", timeout=60)

    assert completed.returncode == 4
    assert "did not listen within 1s" in completed.stderr
    assert "starting up, never ready" in completed.stderr
    assert time.monotonic() - started < 20
    harness.assert_no_orphans()


def test_a_sidecar_that_exits_at_start_fails_with_its_stderr(
    harness: HarnessHarness, tmp_path: Path
) -> None:
    harness.cli = fake_sidecar(
        tmp_path,
        """
        print("Error: the port is taken", file=sys.stderr)
        sys.exit(3)
    """,
    )
    completed = harness.run(timeout=60)

    assert completed.returncode == 4
    assert "exited with status 3" in completed.stderr
    assert "the port is taken" in completed.stderr


def test_no_copilot_binary_is_a_usage_error(harness: HarnessHarness, tmp_path: Path) -> None:
    harness.cli = tmp_path / "no-such-copilot"
    completed = harness.run(timeout=30)

    assert completed.returncode == 2
    assert f"--copilot {harness.cli} does not exist: " in completed.stderr


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("['--allow-tool', 'shell(ls)']", "JSON strings take double quotes, not single quotes"),
        ('["--allow-tool", "shell(ls)",]', "it has a trailing comma"),
        ('["--allow-tool", "shell(ls)", 3]', "element 3 is a number"),
    ],
)
def test_unreadable_sidecar_arguments_are_a_usage_error_before_any_sidecar(
    harness: HarnessHarness, tmp_path: Path, raw: str, why: str
) -> None:
    """The harness and the driver read GH_AW_COPILOT_SDK_SERVER_ARGS with one parser: a
    value the driver would refuse never reaches the sidecar as allow flags."""
    harness.cli = fake_sidecar(tmp_path, "open(sys.argv[0] + '.started', 'w').close()")
    completed = harness.run(timeout=30, GH_AW_COPILOT_SDK_SERVER_ARGS=raw)

    assert completed.returncode == 2
    (line,) = [line for line in completed.stderr.splitlines() if "SERVER_ARGS" in line]
    assert line.startswith("[copilot-driver-harness] error: GH_AW_COPILOT_SDK_SERVER_ARGS ")
    assert why in line
    assert not Path(str(harness.cli) + ".started").exists(), "a sidecar was started"


def wait_for(condition: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_a_sidecar_that_dies_mid_run_is_reported(harness: HarnessHarness) -> None:
    (harness.tmp / "prompt.md").write_text("be SLOW\n")
    process = harness.start()
    wait_for(lambda: harness.model.chat_requests())  # the turn is in flight
    sidecars = [pid for pid, cmd in harness.processes() if "--headless" in cmd]
    os.kill(sidecars[0], signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)

    assert process.returncode == 5
    assert "sidecar exited with status" in stderr
    harness.assert_no_orphans()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_goes_to_the_driver_first_then_the_sidecar_stops(
    harness: HarnessHarness, signum: signal.Signals
) -> None:
    (harness.tmp / "prompt.md").write_text("be SLOW\n")
    process = harness.start()
    wait_for(lambda: harness.model.chat_requests())
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)

    assert process.returncode == 128 + signum  # the driver's own exit status
    entries = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert entries[-1]["errorKind"] == "interrupted"  # the driver cleaned up itself
    harness.assert_no_orphans()


def test_a_killed_driver_leaves_nothing_behind(harness: HarnessHarness) -> None:
    (harness.tmp / "prompt.md").write_text("be SLOW\n")
    process = harness.start()
    wait_for(lambda: harness.model.chat_requests())
    drivers = [pid for pid, cmd in harness.processes() if "-m copilot_driver " in cmd + " "]
    os.kill(drivers[0], signal.SIGKILL)
    process.communicate(timeout=60)

    assert process.returncode == 128 + signal.SIGKILL
    harness.assert_no_orphans()


def test_a_killed_harness_leaves_nothing_behind(harness: HarnessHarness) -> None:
    (harness.tmp / "prompt.md").write_text("be SLOW\n")
    process = harness.start()
    wait_for(lambda: harness.model.chat_requests())
    assert len(harness.processes()) >= 3  # harness, sidecar, driver
    process.kill()
    process.communicate(timeout=30)

    harness.assert_no_orphans()


def test_a_driver_that_ignores_sigterm_is_killed_after_the_sidecar_dies(
    harness: HarnessHarness, tmp_path: Path
) -> None:
    harness.cli = fake_sidecar(
        tmp_path,
        """
        print("CLI server listening on port 1", flush=True)
        time.sleep(1)
        sys.exit(9)
    """,
    )
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text(
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)\n"
    )
    started = time.monotonic()
    completed = harness.run(driver=[sys.executable, str(stubborn)], timeout=90)

    assert completed.returncode == 5
    assert "sidecar exited with status 9" in completed.stderr
    # 1 s to die + 5 s for the driver to notice + 20 s for SIGTERM, then SIGKILL.
    assert time.monotonic() - started < 60
    harness.assert_no_orphans()


def test_on_a_terminal_the_status_line_shows_each_phase_and_is_cleared_before_the_answer(
    harness: HarnessHarness,
) -> None:
    """stderr is a pseudo-terminal: the status line is drawn there, names the phases
    it went through, and the harness's last bytes on it clear it before the answer
    goes to stdout."""
    main, secondary = pty.openpty()
    process = subprocess.Popen(
        harness.command(),
        env=harness.env,
        stdout=subprocess.PIPE,
        stderr=secondary,
        text=True,
    )
    os.close(secondary)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = process.communicate(timeout=60)
    os.close(main)

    assert process.returncode == 0
    assert stdout == "Git works; removing the file was not allowed.\n"
    shown = seen.decode(errors="replace")
    assert "[copilot]" in shown
    assert "starting the Copilot CLI sidecar" in shown
    assert re.search(r"model round \d", shown) or "waiting for the model" in shown
    # Cleared before the run's account: nothing of it is left beside the answer, and the
    # account's last line (the policy in force) stands alone.
    last_drawn = shown.rindex("[copilot] ")
    assert "\r\x1b[K" in shown[last_drawn:]
    account = shown[last_drawn:].rsplit("\r\x1b[K", 1)[1]
    assert account == (
        "[copilot-driver-harness] tool policy in force: 1 rule: shell(git:*) "
        "(from GH_AW_COPILOT_SDK_SERVER_ARGS)\r\n"
    )


def test_outside_a_terminal_or_in_ci_no_status_line_is_drawn(harness: HarnessHarness) -> None:
    completed = harness.run()
    assert completed.returncode == 0
    assert "[copilot]" not in completed.stderr
    assert "\x1b[K" not in completed.stderr
