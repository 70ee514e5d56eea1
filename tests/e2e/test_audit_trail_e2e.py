"""The audit trail names the policy in force, and masking never mangles it: the real
driver, the real Copilot CLI sidecar and the scripted model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar, ToolCall
from copilot_driver.testing.environment import start_test_sidecar
from copilot_driver.testing.fixtures import DriverRunner

pytestmark = pytest.mark.e2e

MARKER = "audit-trail-marker"
TOUCH_SCRIPT = Script(
    rules=(
        Rule(
            "TOUCH",
            (
                Reply(
                    tool_calls=(
                        ToolCall("bash", {"command": f"touch {MARKER}", "description": "touch"}),
                    )
                ),
                Reply(text="Done."),
            ),
        ),
    )
)
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _policy_record(events: list[dict[str, object]]) -> dict[str, object]:
    first = events[0]
    assert first["type"] == "policy.in_force", [event["type"] for event in events[:3]]
    data = first["data"]
    assert isinstance(data, dict)
    return data


def test_a_scoped_policy_is_named_in_the_events_file_and_result(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.script = TOUCH_SCRIPT
    rules = {"allowedTools": ["read", "shell(git log:*)"], "deniedTools": ["shell(rm:*)"]}
    run = driver.run("please TOUCH", GH_AW_COPILOT_SDK_PERMISSIONS=json.dumps(rules))

    assert run.exit_code == 0, run.stderr
    assert not (driver.tmp_path / "workspace" / MARKER).exists()  # denied: never ran
    policy = _policy_record(run.events())
    assert policy == run.result()["policy"]
    assert policy["mode"] == "scoped"
    assert policy["source"] == "GH_AW_COPILOT_SDK_PERMISSIONS"
    assert policy["allowedTools"] == ["read", "shell(git log:*)"]
    assert policy["deniedTools"] == ["shell(rm:*)"]
    assert "2 rules: read, shell(git log:*)" in str(policy["summary"])


def test_no_policy_is_named_as_every_tool_approved(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    # A misspelt policy variable: the driver approves everything, and says so three ways.
    scripted_model.script = TOUCH_SCRIPT
    run = driver.run(
        "please TOUCH",
        GH_AW_COPILOT_SDK_PERMISSION='{"allowedTools": ["read"]}',
    )

    assert run.exit_code == 0, run.stderr
    assert (driver.tmp_path / "workspace" / MARKER).exists()  # approved: it ran
    (warning,) = run.entries("config.unknown_variable")
    assert warning["level"] == "warning"
    assert warning["message"] == (
        "GH_AW_COPILOT_SDK_PERMISSION is not a variable copilot-driver reads; did you mean "
        "GH_AW_COPILOT_SDK_PERMISSIONS?"
    )
    policy = _policy_record(run.events())
    assert policy == run.result()["policy"]
    assert policy["mode"] == "unrestricted"
    assert policy["source"] is None
    assert "every tool request is approved" in str(policy["summary"])


def test_a_star_rule_is_named_at_start_and_grants_nothing(
    driver: DriverRunner, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.script = TOUCH_SCRIPT
    run = driver.run("please TOUCH", GH_AW_COPILOT_SDK_PERMISSIONS='{"allowedTools": ["*"]}')

    assert run.exit_code == 0, run.stderr
    assert not (driver.tmp_path / "workspace" / MARKER).exists()
    (problem,) = run.entries("permissions.unusable_rule")
    assert problem["rule"] == "*"
    assert "`*` is no wildcard" in str(problem["message"])
    assert run.entries("permission.denied")


@pytest.fixture
def sidecar_with_token_1(
    tmp_path: Path, copilot_cli: Path, copilot_cache_home: Path, scripted_model: ScriptedModelServer
) -> Iterator[TestSidecar]:
    sidecar = start_test_sidecar(
        tmp_path / "short",
        model_base_url=scripted_model.base_url,
        binary=copilot_cli,
        cache_home=copilot_cache_home,
        token="1",
    )
    try:
        yield sidecar
    finally:
        sidecar.stop()


def test_short_secrets_leave_addresses_times_and_words_whole(
    tmp_path: Path, sidecar_with_token_1: TestSidecar, scripted_model: ScriptedModelServer
) -> None:
    # A connection token `1` and a local model server's key `none`: both work, the
    # driver says at start how they are masked, and nothing else is turned into `***`.
    runner = DriverRunner(tmp_path, sidecar_with_token_1, scripted_model)
    run = runner.run("say hello", COPILOT_PROVIDER_API_KEY="none")

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "Hello from the scripted model.\n"
    notices = run.entries("secrets.short")
    assert [notice["variable"] for notice in notices] == [
        "COPILOT_CONNECTION_TOKEN",
        "COPILOT_PROVIDER_API_KEY",
    ]
    assert "masked only where a whole value is exactly it" in str(notices[0]["message"])
    # Only a whole value equal to a short secret is masked: here the log's
    # `permissionSource` "none" (no policy variable), which is the provider key's value.
    masked = [
        (entry["event"], key)
        for entry in run.log_entries
        for key, value in entry.items()
        if "***" in str(value)
    ]
    assert masked == [("permissions.config", "permissionSource")], masked
    (start,) = run.entries("connection.start")
    assert start["sdkUri"] == sidecar_with_token_1.uri.removeprefix("http://")
    assert all(ISO_TIME.match(str(entry["timestamp"])) for entry in run.log_entries)
    (permissions,) = run.entries("permissions.config")
    assert str(permissions["message"]).startswith("tool permissions: none (unrestricted)")
    events = run.events()
    assert all(ISO_TIME.match(str(event["timestamp"])) for event in events)
    assert "***" not in run.events_file.read_text(encoding="utf-8")
    # The model server was really sent the key `none`.
    assert any(
        request.headers.get("authorization") == "Bearer none"
        for request in scripted_model.chat_requests()
    )


def test_a_key_with_a_slash_in_the_base_urls_userinfo_is_never_written(
    driver: DriverRunner,
) -> None:
    # A URL parser sees no userinfo in `https://u:ab+c/d==@host/v1` (the `/` ends it);
    # the driver masks everything before the last `@` all the same.
    key = "ab+c/d=="
    run = driver.run(
        "say hello",
        COPILOT_PROVIDER_BASE_URL=f"https://user:{key}@127.0.0.1:9/v1",
        COPILOT_DRIVER_LOG_FORMAT="text",
        timeout=60,
    )

    assert run.exit_code != 0
    assert key not in run.everything_written()
    assert "provider=https://***@127.0.0.1:9/v1" in run.stderr
