"""Rules that can never match anything are reported with the rule probably meant."""

from __future__ import annotations

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
        False, ("Read", "shell(env:*)", "shell()", "shell(ls)"), "test", denied_tools=("Write",)
    )
    problems = Policy(config).rule_problems
    assert [(p.rule, p.flag, p.suggestion) for p in problems] == [
        ("Read", "--allow-tool", "read"),
        ("shell(env:*)", "--allow-tool", None),
        ("shell()", "--allow-tool", "shell(NAME:*)"),
        ("Write", "--deny-tool", "write"),
    ]
    assert problems[1].reason.startswith("no name rule covers `env`")


def test_a_reported_rule_still_decides_as_written() -> None:
    """Advice changes no decision: `Read` is not `read`."""
    policy = Policy(PermissionConfig(False, ("Read",), "test"))
    decision = policy.decide({"kind": "read", "path": "/etc/hostname", "intention": "x"})
    assert decision.allowed is False
