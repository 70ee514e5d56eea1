"""Rules that can never match anything are reported with the rule probably meant."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_driver.permissions.advice import RuleProblem, rule_problems
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Policy


@pytest.mark.parametrize(
    ("rule", "suggestion"),
    [
        ("bash(git:*)", "shell(git:*)"),
        ("Bash(git status)", "shell(git status)"),
        ("Shell(ls)", "shell(ls)"),
        ("Read", "read"),
        ("WRITE", "write"),
        ("Shell", "shell"),
        ("web-fetch", "web_fetch"),
        ("WebFetch", "web_fetch"),
        ("webfetch", "web_fetch"),
        ("url", "web_fetch"),
        ("view", "read"),
        ("edit", "write"),
        ("bash", "shell"),
        ("shell(git:*", "shell(git:*)"),
        ("fake(add", "fake(add)"),
    ],
)
def test_a_near_miss_names_the_rule_probably_meant(rule: str, suggestion: str) -> None:
    (problem,) = rule_problems([rule], "--allow-tool")
    assert problem.suggestion == suggestion
    assert problem.describe().startswith(f"the rule {rule} (--allow-tool) matches no request: ")
    assert problem.describe().endswith(f"; did you mean {suggestion}?")


@pytest.mark.parametrize(
    ("rule", "suggestion", "reason"),
    [
        ("*", None, "`*` is no wildcard"),
        ("**", None, "`*` is no wildcard"),
        ("*(*)", None, "`*` is no wildcard"),
        ("git*", None, "`*` is no wildcard"),
        ("github(*)", "github", "the server's name alone grants every tool"),
        ("read(*)", "read", "`read` takes no argument"),
        ("write(src/*)", "write", "`write` takes no argument"),
        ("url(https://example.com)", "web_fetch", "`web_fetch` takes no argument"),
    ],
)
def test_a_wildcard_or_argument_that_grants_nothing_is_named(
    rule: str, suggestion: str | None, reason: str
) -> None:
    (problem,) = rule_problems([rule], "allowedTools in GH_AW_COPILOT_SDK_PERMISSIONS")
    assert problem.suggestion == suggestion
    assert reason in problem.reason
    # The policy's decision is what it was: the rule grants none of the requests meant.
    policy = Policy(PermissionConfig(allowed_tools=(rule,), source="X"))
    for request in (
        {"kind": "read", "path": "/w/a"},
        {"kind": "write", "fileName": "/w/src/a"},
        {"kind": "url", "url": "https://example.com"},
        {"kind": "mcp", "serverName": "github", "toolName": "github-x", "toolTitle": "x"},
    ):
        assert not policy.decide(request).allowed


@pytest.mark.parametrize(
    "rule",
    [
        "read",
        "write",
        "shell",
        "web_fetch",
        "shell(git:*)",
        "github",
        "github(get_file_contents)",
        "lookup_weather",
        "fetch",  # an MCP server of that name is common
        "my-server(x.y)",
    ],
)
def test_rules_that_can_match_are_not_reported(rule: str) -> None:
    assert rule_problems([rule], "--allow-tool") == []


def test_unbalanced_parentheses_without_an_obvious_fix() -> None:
    (problem,) = rule_problems(["shell(git:*))"], "--deny-tool")
    assert problem == RuleProblem(
        "shell(git:*))", "--deny-tool", "its parentheses are unbalanced", None
    )
    assert "did you mean" not in problem.describe()


def test_the_policy_reports_allow_shell_and_deny_problems_in_order() -> None:
    config = PermissionConfig(
        False,
        ("Read", "shell(env:*)", "shell()", "shell(ls)", "shell(git*)", "shell(ls *)"),
        "GH_AW_COPILOT_SDK_SERVER_ARGS",
        denied_tools=("Write",),
    )
    problems = Policy(config).rule_problems
    assert [(p.rule, p.flag, p.suggestion) for p in problems] == [
        ("Read", "--allow-tool", "read"),
        ("shell(env:*)", "--allow-tool", None),
        ("shell()", "--allow-tool", "shell(NAME:*)"),
        ("shell(git*)", "--allow-tool", "shell(git:*)"),
        ("shell(ls *)", "--allow-tool", "shell(ls:*)"),
        ("Write", "--deny-tool", "write"),
    ]
    assert problems[1].reason.startswith("no name rule covers `env`")


@pytest.mark.parametrize(
    ("rule", "suggestion"),
    [
        ("shell(git log*)", "shell(git log:*)"),
        ("shell(git log *)", "shell(git log:*)"),
        ("shell(ls *)", "shell(ls:*)"),
        ("shell(ls -la *.txt)", None),
    ],
)
def test_an_exact_rule_with_a_glob_is_said_to_match_only_its_text(
    rule: str, suggestion: str | None
) -> None:
    (problem,) = Policy(PermissionConfig(False, (rule,), "none")).rule_problems
    assert problem.literal
    assert problem.suggestion == suggestion
    body = rule.removeprefix("shell(").removesuffix(")")
    assert f"matches only the line `{body}`" in problem.describe()
    assert "no wildcard" in problem.describe()


def test_a_quoted_glob_in_an_exact_rule_is_an_argument_not_a_warning() -> None:
    assert not Policy(PermissionConfig(False, ("shell(grep -n '*' notes)",), "none")).rule_problems


def test_rules_from_the_permissions_variable_are_named_by_where_they_were_written() -> None:
    config = PermissionConfig(False, ("shell(git*)",), "GH_AW_COPILOT_SDK_PERMISSIONS")
    (problem,) = Policy(config).rule_problems
    assert problem.flag == "allowedTools in GH_AW_COPILOT_SDK_PERMISSIONS"
    assert "--allow-tool" not in problem.describe()
    assert problem.describe().endswith("did you mean shell(git:*)?")


def test_a_reported_rule_still_decides_as_written() -> None:
    """Advice changes no decision: `Read` is not `read`."""
    policy = Policy(PermissionConfig(False, ("Read",), "test"))
    decision = policy.decide({"kind": "read", "path": "/etc/hostname", "intention": "x"})
    assert decision.allowed is False


def test_the_real_driver_says_so_at_start_naming_the_variable(tmp_path: Path) -> None:
    """The driver, run as a user runs it, warns before it connects (the sidecar here
    is a closed port, so the run then fails to connect: what matters is the start)."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": f"127.0.0.1:{port}",
        "COPILOT_CONNECTION_TOKEN": "0" * 64,
        "COPILOT_MODEL": "gpt-4.1",
        "GH_AW_SESSION_STATE_BASE_DIR": str(tmp_path / "state"),
        "GH_AW_COPILOT_SDK_PERMISSIONS": '{"allowedTools": ["shell(git*)", "shell(ls *)"]}',
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    run = subprocess.run(
        [sys.executable, "-m", "copilot_driver"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert (
        "the rule shell(git*) (allowedTools in GH_AW_COPILOT_SDK_PERMISSIONS) matches no "
        "request" in run.stderr
    )
    assert "did you mean shell(git:*)?" in run.stderr
    assert (
        "the rule shell(ls *) (allowedTools in GH_AW_COPILOT_SDK_PERMISSIONS) matches only "
        "the line `ls *`" in run.stderr
    )
    assert "did you mean shell(ls:*)?" in run.stderr
