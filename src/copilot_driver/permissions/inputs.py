"""Which permission input wins: the one policy the session runs under, resolved from
the three places a policy can come from, before anything runs.

In order of precedence:

1. gh-aw's tool contract (`GH_AW_COPILOT_SDK_TOOL_CONFIG`, `tool_contract`): the
   workflow's compiler owns it, so its allowlist is the policy;
2. `GH_AW_COPILOT_SDK_PERMISSIONS`, an explicit policy (`config.parse_explicit`);
3. the sidecar's `--allow-tool` flags (`GH_AW_COPILOT_SDK_SERVER_ARGS`,
   `config.parse_server_args`).

Deny rules from the two variables narrow whichever policy wins: the sidecar was
given them too. Every input is read even when another one wins, so a broken one is
reported, never ignored, and never widened to allow-all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from copilot_driver.env import PERMISSIONS, SERVER_ARGS, TOOL_CONFIG
from copilot_driver.permissions.config import (
    PermissionConfig,
    parse_explicit,
    parse_server_args,
)
from copilot_driver.permissions.tool_contract import (
    ToolContract,
    ToolContractError,
    parse_tool_contract,
)

POLICY_VARIABLES = (PERMISSIONS, SERVER_ARGS, TOOL_CONFIG)
"""Where a tool policy can come from; with none of them set, every request is approved."""


@dataclass(frozen=True)
class ResolvedPolicy:
    permissions: PermissionConfig
    tool_contract: ToolContract | None = None
    """gh-aw's tool contract, when one was given and is usable."""
    problems: tuple[str, ...] = ()
    """One line per input that cannot be read: the configuration cannot be used."""


def resolve_policy(
    *, permissions: str | None, server_args: str | None, tool_config: str | None
) -> ResolvedPolicy:
    """The policy from the raw values of the three inputs (None when unset)."""
    problems = []
    config = PermissionConfig()
    try:
        config = _explicit_over_server_args(permissions, server_args)
    except ValueError as error:
        problems.append(
            f"{error} (a permission policy that cannot be read is never widened to allow-all)"
        )
    try:
        tool_contract = parse_tool_contract(tool_config)
    except ToolContractError as error:
        return ResolvedPolicy(config, problems=(*problems, str(error)))
    if tool_contract is None:
        return ResolvedPolicy(config, problems=tuple(problems))
    scoped = PermissionConfig(
        allowed_tools=tool_contract.allowed_tools,
        source=TOOL_CONFIG.name,
        denied_tools=config.denied_tools,
        workflow_kind=tool_contract.can("dynamicWorkflows"),
    )
    return ResolvedPolicy(scoped, tool_contract, tuple(problems))


def resolve_permissions(env: Mapping[str, str]) -> PermissionConfig:
    """The policy of the two variables alone (the tool contract is not read); raises
    ValueError for an unreadable input."""
    return _explicit_over_server_args(env.get(PERMISSIONS.name), env.get(SERVER_ARGS.name))


def _explicit_over_server_args(explicit: str | None, server_args: str | None) -> PermissionConfig:
    """The explicit policy when it is set, else the server arguments' flags; the server
    arguments' deny rules apply either way."""
    from_args = parse_server_args(server_args)
    if explicit is not None and explicit.strip():
        config = parse_explicit(explicit)
        if from_args is not None and from_args.denied_tools:
            denied = config.denied_tools + from_args.denied_tools
            return replace(config, denied_tools=tuple(dict.fromkeys(denied)))
        return config
    return from_args or PermissionConfig()
