"""The driver end to end: real Copilot CLI sidecar, real SDK, scripted model."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import signal
import socket
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from copilot_driver.compatibility import TESTED_SDK_VERSIONS
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.environment import TEST_PROVIDER_KEY
from copilot_driver.testing.fixtures import DriverRun, DriverRunner
from helpers.sdk_releases import build_release_cache, release_environment

pytestmark = pytest.mark.e2e

LIFECYCLE = [
    "connection.start",
    "permissions.config",
    "client.started",
    "session.created",
    "prompt.dispatched",
]
TOOL_SCRIPT = Script(
    rules=(
        Rule(
            "RUNTOOL",
            (
                Reply(
                    tool_calls=(
                        ToolCall(
                            "bash", {"command": "echo e2e-marker", "description": "echo a marker"}
                        ),
                    )
                ),
                Reply(text="Done: the tool said e2e-marker"),
            ),
        ),
    )
)
SLOW_SCRIPT = Script(rules=(Rule("SLOW", (Reply(text="too late", delay_s=60),)),))
EPHEMERAL_TYPES = {
    "session.idle",
    "assistant.idle",
    "assistant.usage",
    "session.usage_info",
    "model.call_start",
    "tool.shell_output",
    "session.tools_updated",
}


SDK_LANES = {"newest": None, "oldest": TESTED_SDK_VERSIONS[0]}
"""Every test here runs on the installed SDK (the newest tested release) and on the oldest
tested release (`make setup` unpacks it), both loaded lazily: each run that logs JSON
must say so in its `connection.start` entry."""


class LazySdkRunner(DriverRunner):
    """The driver on one SDK release (None: the installed one), checked to load it lazily."""

    def __init__(
        self,
        tmp_path: Path,
        sidecar: TestSidecar,
        model: ScriptedModelServer,
        release: str | None,
    ) -> None:
        super().__init__(tmp_path, sidecar, model)
        self.release = release
        self.sdk_version = release or importlib.metadata.version("github-copilot-sdk")

    def environment(self, prompt: str, **overrides: str) -> dict[str, str]:
        env = super().environment(prompt, **overrides)
        return env if self.release is None else release_environment(self.release, env)

    def run(
        self,
        prompt: str,
        *,
        timeout: float = 120,
        env: dict[str, str] | None = None,
        **overrides: str,
    ) -> DriverRun:
        run = super().run(prompt, timeout=timeout, env=env, **overrides)
        for entry in run.entries("connection.start"):
            assert entry["sdkLoading"] == "lazy", entry["sdkLoadingReason"]
            assert f"github-copilot-sdk {self.sdk_version}," in entry["sdkLoadingReason"]
        return run


@functools.cache
def _release_cache(release: str) -> None:
    build_release_cache(release)


@pytest.fixture(params=list(SDK_LANES))
def driver(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> DriverRunner:
    release = SDK_LANES[request.param]
    if release is not None:
        _release_cache(release)
    return LazySdkRunner(tmp_path, copilot_sidecar, scripted_model, release)


def _timestamp(entry: dict[str, object]) -> datetime:
    return datetime.fromisoformat(str(entry["timestamp"]).replace("Z", "+00:00"))


def _assert_events_file_is_valid(run: DriverRun) -> list[dict[str, object]]:
    events = run.events()  # json.loads on every line: a bad line fails here
    assert events, "the events file is empty"
    for event in events:
        assert list(event)[:3] == ["type", "timestamp", "data"]
        _timestamp(event)
        assert event["type"] not in EPHEMERAL_TYPES
    return events


def test_plain_turn_prints_the_answer_and_leaves_an_audit_trail(driver: DriverRunner) -> None:
    run = driver.run("say hello")

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Hello from the scripted model.\n"
    events_in_order = [entry["event"] for entry in run.log_entries]
    assert events_in_order == [*LIFECYCLE, "session.completed"]
    (completed,) = run.entries("session.completed")
    assert completed["level"] == "info"
    assert completed["hasOutput"] is True
    assert isinstance(completed["durationMs"], int)
    assert completed["durationMs"] > 0
    session_id = run.entries("session.created")[0]["sessionId"]
    assert completed["sessionId"] == session_id
    assert run.events_file.parent.name == session_id

    events = _assert_events_file_is_valid(run)
    types = [event["type"] for event in events]
    assert types[:2] == ["policy.in_force", "session.start"]
    assert "user.message" in types
    assert "assistant.message" in types
    assert run.result() == {
        "exitCode": 0,
        "output": "Hello from the scripted model.",
        "hasOutput": True,
        "durationMs": completed["durationMs"],
        "sessionId": session_id,
        "error": None,
        "errorKind": None,
        "policy": events[0]["data"],
    }


def test_tool_turn_runs_a_real_tool_and_records_it(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.script = TOOL_SCRIPT
    run = driver.run("please RUNTOOL now")

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Done: the tool said e2e-marker\n"
    events = _assert_events_file_is_valid(run)
    by_type = {str(event["type"]): event for event in events}
    start, complete = by_type["tool.execution_start"], by_type["tool.execution_complete"]
    assert start["data"]["toolName"] == "bash"  # type: ignore[index]
    # The runtime's completion event has no tool name: the sink adds it.
    assert complete["data"]["toolName"] == "bash"  # type: ignore[index]
    assert complete["data"]["success"] is True  # type: ignore[index]
    assert by_type["permission.requested"]["data"]["permissionRequest"]["kind"] == "shell"  # type: ignore[index]
    # The shell really ran: the model got its output back.
    tool_messages = [
        message
        for message in scripted_model.chat_requests()[-1].body["messages"]
        if message.get("role") == "tool"
    ]
    assert any("e2e-marker" in str(message["content"]) for message in tool_messages)


def test_wrong_token_fails_clearly_without_printing_it(
    driver: DriverRunner, copilot_sidecar: TestSidecar
) -> None:
    wrong_token = "f" * 64
    env = driver.environment("say hello", COPILOT_CONNECTION_TOKEN=wrong_token)
    run = driver.run("", env=env, timeout=60)

    assert run.exit_code == 1
    (error,) = run.entries("error")
    assert error["errorKind"] == "auth_failed"
    assert "connection token" in str(error["message"])
    everything = run.everything_written()
    assert wrong_token not in everything
    assert copilot_sidecar.token not in everything
    assert run.stdout == ""


def test_sidecar_not_listening_fails_fast(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = DriverRunner(tmp_path, None, scripted_model)
    started = time.monotonic()
    run = runner.run("say hello", COPILOT_SDK_URI=f"127.0.0.1:{port}", timeout=30)
    elapsed = time.monotonic() - started

    assert run.exit_code == 1
    (error,) = run.entries("error")
    assert error["errorKind"] == "sidecar_unreachable"
    assert f"127.0.0.1:{port}" in str(error["message"])
    # From the driver's own clock: no retry loop between the attempt and the verdict.
    connecting = run.entries("connection.start")[0]
    assert (_timestamp(error) - _timestamp(connecting)).total_seconds() < 2
    assert elapsed < 10  # and the whole process did not hang


def test_send_timeout_exits_124_after_cleanup(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.script = SLOW_SCRIPT
    run = driver.run("be SLOW", COPILOT_SDK_SEND_TIMEOUT_MS="1500", timeout=60)

    assert run.exit_code == 124, run.stderr
    (error,) = run.entries("error")
    assert error["errorKind"] == "send_timeout"
    assert "1500 ms" in str(error["message"])
    events = _assert_events_file_is_valid(run)
    types = [event["type"] for event in events]
    # Cleanup ran: the turn was aborted and the session shut down, and the
    # events file holds what happened up to the end.
    assert "user.message" in types
    # ... and how it ended: aborted, the turn closed, the session shut down.
    assert types.index("abort") < types.index("assistant.turn_end")
    assert types[-1] == "session.shutdown"
    assert run.result()["exitCode"] == 124
    assert run.stdout == ""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_mid_turn_cleans_up_and_exits_128_plus_signal(
    driver: DriverRunner, scripted_model: ScriptedModelServer, signum: signal.Signals
) -> None:
    scripted_model.script = SLOW_SCRIPT
    env = driver.environment("be SLOW")
    process = subprocess.Popen(
        list(driver.command), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not scripted_model.chat_requests():  # the turn is in flight
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the turn never reached the model"
            time.sleep(0.05)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    run = driver.outcome(process.returncode, stdout, stderr, env)

    assert run.exit_code == 128 + signum
    (error,) = run.entries("error")
    assert error["errorKind"] == "interrupted"
    assert signal.Signals(signum).name in str(error["message"])
    types = [event["type"] for event in _assert_events_file_is_valid(run)]
    assert "user.message" in types
    assert "abort" in types
    assert run.result()["exitCode"] == 128 + signum


def test_platform_tokens_never_appear_anywhere(
    driver: DriverRunner,
    scripted_model: ScriptedModelServer,
    copilot_sidecar: TestSidecar,
    tmp_path: Path,
) -> None:
    """T-CSD-008 end to end: canary platform tokens change nothing and leak nowhere."""
    canaries = {
        "GITHUB_TOKEN": "ghs_canaryGITHUBTOKEN0000000000000000",
        "GH_TOKEN": "gho_canaryGHTOKEN00000000000000000000",
        "COPILOT_GITHUB_TOKEN": "github_pat_canaryCOPILOT000000000000",
    }
    scripted_model.script = TOOL_SCRIPT
    prompt = "please RUNTOOL now"
    run = driver.run(prompt, env=driver.environment(prompt, **canaries))

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Done: the tool said e2e-marker\n"
    model_traffic = json.dumps(
        [{"headers": r.headers, "body": r.body} for r in scripted_model.requests]
    )
    sidecar_log = (tmp_path / "sidecar.log").read_text()
    for where, text in {
        "driver output": run.everything_written(),
        "model traffic": model_traffic,
        "sidecar log": sidecar_log,
    }.items():
        for name, canary in canaries.items():
            assert canary not in text, f"{name} leaked into the {where}"
    secrets = {"connection token": copilot_sidecar.token, "provider key": TEST_PROVIDER_KEY}
    for name, secret in secrets.items():
        assert secret not in run.everything_written(), f"the {name} leaked"


def test_text_log_format_prints_prefixed_lines(driver: DriverRunner) -> None:
    run = driver.run("say hello", COPILOT_DRIVER_LOG_FORMAT="text")

    assert run.exit_code == 0, run.stderr
    lines = run.stderr.splitlines()
    assert lines
    assert all(line.startswith("[copilot-sdk-driver] ") for line in lines)
    assert any(line.startswith("[copilot-sdk-driver] INFO session.completed: ") for line in lines)
    assert any("hasOutput=true" in line for line in lines)
