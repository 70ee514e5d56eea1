"""The `allowed-tools`, `denied-tools` and `allow-all` inputs -> the driver's explicit
permission policy (the JSON value of `GH_AW_COPILOT_SDK_PERMISSIONS`). Pure.

Failing closed: the driver approves every request under an empty allowlist,
so an empty `allowed-tools` is refused unless `allow-all: true` says so; and
the driver's own reader must read the policy as written, never wider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from copilot_driver.action_inputs.names import (
    ALLOW_ALL,
    ALLOWED_TOOLS,
    DENIED_TOOLS,
    INPUT_VARIABLES,
    SHOWN_CHARS,
    InputError,
    example,
)
from copilot_driver.action_inputs.yaml_list import ItemCheck, parse_rule_list
from copilot_driver.permissions.advice import rule_problems
from copilot_driver.permissions.config import parse_explicit


def read_boolean(raw: str, input_name: str) -> bool:
    """`true` or `false` (any case, blank means false); anything else is refused."""
    value = raw.strip().lower()
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    shown = json.dumps(raw.strip()[:SHOWN_CHARS], ensure_ascii=False)
    raise InputError(f"{input_name} must be true or false, not {shown}")


def _matching_rule(input_name: str) -> ItemCheck:
    """The check of an item the list reader would have quoted (`- *`): quoting is advised
    only for a rule that can match a request; else what is wrong, and the rule meant."""

    def check(rule: str) -> None:
        if rule == "*" and input_name == ALLOWED_TOOLS:
            raise InputError(
                f'{ALLOWED_TOOLS}: "*" is no wildcard, it matches no request: list the tools '
                f"the task needs, or leave {ALLOWED_TOOLS} empty and set `{ALLOW_ALL}: true` to "
                "approve every request"
            )
        found = [problem for problem in rule_problems([rule], input_name) if not problem.literal]
        if not found:
            return
        meant = f"; write `- {found[0].suggestion}`" if found[0].suggestion else ""
        shown = json.dumps(rule[:SHOWN_CHARS], ensure_ascii=False)
        raise InputError(f"{input_name}: {shown} matches no request: {found[0].reason}{meant}")

    return check


def build_policy(allowed_text: str, denied_text: str, allow_all_text: str) -> dict[str, object]:
    """The explicit policy object the driver reads from GH_AW_COPILOT_SDK_PERMISSIONS."""
    allow_all = read_boolean(allow_all_text, ALLOW_ALL)
    allowed = parse_rule_list(allowed_text, ALLOWED_TOOLS, _matching_rule(ALLOWED_TOOLS))
    denied = parse_rule_list(denied_text, DENIED_TOOLS, _matching_rule(DENIED_TOOLS))
    if allow_all and allowed:
        raise InputError(
            f"{ALLOW_ALL} is true and {ALLOWED_TOOLS} lists {len(allowed)} rule(s): "
            f"approve every request ({ALLOW_ALL}: true) or only the listed tools, not both"
        )
    if not allow_all and not allowed:
        raise InputError(
            f"{ALLOWED_TOOLS} is empty, which would let the agent use every tool: list the "
            f"tools it may use, or set {ALLOW_ALL}: true to approve every request "
            f"({DENIED_TOOLS} still applies).\n{example(ALLOWED_TOOLS)}"
        )
    policy: dict[str, object] = {
        "allowAllTools": allow_all,
        "allowedTools": list(allowed),
        "deniedTools": list(denied),
    }
    # The driver's own reader must see the same policy: never wider than written.
    config = parse_explicit(json.dumps(policy))
    if config.mode != ("allow-all" if allow_all else "scoped"):
        raise InputError(f"{ALLOWED_TOOLS} reads as {config.describe()}; refusing to run")
    return policy


def policy_from_environment(env: Mapping[str, str]) -> str:
    """The JSON value of GH_AW_COPILOT_SDK_PERMISSIONS for the action's inputs."""
    policy = build_policy(
        env.get(INPUT_VARIABLES[ALLOWED_TOOLS], ""),
        env.get(INPUT_VARIABLES[DENIED_TOOLS], ""),
        env.get(INPUT_VARIABLES[ALLOW_ALL], ""),
    )
    return json.dumps(policy)
