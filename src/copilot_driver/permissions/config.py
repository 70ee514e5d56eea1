"""The permission policy (`PermissionConfig`) and the two variables that can state it
(spec 5.1), each read on its own; `permissions.inputs` says which one wins:

- `GH_AW_COPILOT_SDK_PERMISSIONS`: an explicit JSON object
  `{"allowAllTools": bool, "allowedTools": [str, ...], "deniedTools": [str, ...]}`.
  When set it must be valid: a policy the user wrote never silently widens
  to "allow all", so invalid JSON, a wrong type or an unknown key is a
  configuration error.
- `GH_AW_COPILOT_SDK_SERVER_ARGS`: the sidecar's CLI arguments as a JSON
  array of strings (the interoperable input): `--allow-all-tools` anywhere
  means allow all; each `--allow-tool VALUE` (or `--allow-tool=VALUE`) adds
  VALUE in order, and each `--deny-tool VALUE` a deny rule. Unset or blank,
  or no allow or deny flags: no configuration. Set but not a JSON array of
  strings: a configuration error (`ServerArgsError`), never "no
  configuration", which would approve everything. The harness reads the
  same value with the same parser (`read_server_args`), so the sidecar and
  the driver can never disagree about it.

Entries are trimmed; a blank entry (`"--allow-tool", ""`, `"--allow-tool="`,
`"allowedTools": [" "]`) is a configuration error: dropped, it would leave
an empty list, which approves everything. So is a key given twice in any
JSON input (`{"allowAllTools": false, "allowAllTools": true}`: the json
module keeps the last), and a number of more digits than Python reads.
No configuration, allow-all, or an empty list all mean: approve every
request (the SDK's approve-all behaviour, spec 5.2 "defer to the SDK default
policy"), except what a deny rule matches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from copilot_driver.env import PERMISSIONS, SERVER_ARGS
from copilot_driver.errors import CopilotDriverError
from copilot_driver.json_input import (
    JsonInputError,
    json_syntax_problem,
    json_type,
    load_json,
    quoted_key,
)
from copilot_driver.vocabulary import PolicyInForce

EXPLICIT_VARIABLE = PERMISSIONS.name
SERVER_ARGS_VARIABLE = SERVER_ARGS.name
_EXPLICIT_KEYS = frozenset({"allowAllTools", "allowedTools", "deniedTools"})
POLICY_VALUE_FLAGS = ("--allow-tool", "--deny-tool")
"""The policy's flags that take the next argument as their value, whatever it looks like."""
_SERVER_ARGS_EXAMPLE = '["--allow-tool","shell(git:*)","--allow-tool","write"]'
EXPLICIT_EXAMPLE = (
    '{"allowAllTools": false, "allowedTools": ["read", "shell(git status:*)"], '
    '"deniedTools": ["shell(rm:*)"]}'
)
"""A valid GH_AW_COPILOT_SDK_PERMISSIONS, shown when the given one cannot be read."""

Mode = Literal["allow-all", "unrestricted", "scoped"]


@dataclass(frozen=True)
class PermissionConfig:
    allow_all: bool = False
    allowed_tools: tuple[str, ...] = ()
    source: str = "none"
    """The variable it came from, or "none"."""
    denied_tools: tuple[str, ...] = ()
    """`--deny-tool` rules: they win over every allow rule, in every mode."""
    workflow_kind: bool = False
    """The `workflow` request kind may be granted (by a `workflow` rule): only a tool
    contract with `dynamicWorkflows` turns it on; otherwise it is an unknown kind."""

    @property
    def mode(self) -> Mode:
        if self.allow_all:
            return "allow-all"
        if not self.allowed_tools:
            return "unrestricted"
        return "scoped"

    def in_force(self) -> PolicyInForce:
        """The policy as the audit trail names it (result.json, the events file)."""
        return PolicyInForce(
            mode=self.mode,
            source=None if self.source == "none" else self.source,
            allowed_tools=self.allowed_tools,
            denied_tools=self.denied_tools,
            summary=self.describe(),
        )

    def describe(self) -> str:
        """The configuration in words, for the start-up log."""
        origin = f" (from {self.source})" if self.source != "none" else ""
        deny = ""
        if self.denied_tools:
            count = len(self.denied_tools)
            deny = f"; {count} deny rule{'s' if count != 1 else ''}: {', '.join(self.denied_tools)}"
        every = "every tool request is approved" + (" except what they deny" if deny else "")
        if self.mode == "allow-all":
            return f"allow-all: {every}{deny}{origin}"
        if self.mode == "unrestricted":
            why = "no allow rules" if self.source != "none" else "no permission configuration"
            if self.source != "none" and not self.denied_tools:
                why = "an empty allowlist"
            return f"none (unrestricted): {why}, {every}{deny}{origin}"
        count = len(self.allowed_tools)
        rules = ", ".join(self.allowed_tools)
        return f"{count} rule{'s' if count != 1 else ''}: {rules}{deny}{origin}"


def parse_explicit(raw: str) -> PermissionConfig:
    try:
        value = load_json(raw)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{EXPLICIT_VARIABLE} is not valid JSON: {json_syntax_problem(raw, error)}; "
            f"a valid value looks like {EXPLICIT_EXAMPLE}"
        ) from None
    except JsonInputError as error:
        raise ValueError(
            f"{EXPLICIT_VARIABLE} {error}; a valid value looks like {EXPLICIT_EXAMPLE}"
        ) from None
    except RecursionError:
        raise ValueError(
            f"{EXPLICIT_VARIABLE} is nested too deeply; a valid value looks like {EXPLICIT_EXAMPLE}"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(
            f"{EXPLICIT_VARIABLE} is {json_type(value)}, not a JSON object; a valid value "
            f"looks like {EXPLICIT_EXAMPLE}"
        )
    unknown = sorted(quoted_key(key) for key in value if key not in _EXPLICIT_KEYS)
    if unknown:
        shown = ", ".join(unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise ValueError(
            f"{EXPLICIT_VARIABLE} has unknown key(s) {shown}: only allowAllTools, "
            "allowedTools and deniedTools are understood"
        )
    allow_all = value.get("allowAllTools", False)
    if not isinstance(allow_all, bool):
        raise ValueError(f"{EXPLICIT_VARIABLE}: allowAllTools must be true or false")
    lists = {}
    for key in ("allowedTools", "deniedTools"):
        tools = value.get(key, [])
        if not isinstance(tools, list) or not all(isinstance(tool, str) for tool in tools):
            raise ValueError(f"{EXPLICIT_VARIABLE}: {key} must be an array of strings")
        if any(not tool.strip() for tool in tools):
            raise ValueError(
                f"{EXPLICIT_VARIABLE}: {key} holds a blank rule, which names no tool: remove "
                'it, or write the rule, e.g. "shell(git:*)"'
            )
        lists[key] = _normalise(tools)
    return PermissionConfig(
        allow_all=allow_all,
        allowed_tools=lists["allowedTools"],
        source=EXPLICIT_VARIABLE,
        denied_tools=lists["deniedTools"],
    )


class ServerArgsError(CopilotDriverError, ValueError):
    """GH_AW_COPILOT_SDK_SERVER_ARGS is set but unreadable; the message names the fix."""


def read_server_args(raw: str | None) -> list[str] | None:
    """The sidecar's arguments, or None when unset or blank. Shared by the harness and
    the driver. Raises ServerArgsError for anything but a JSON array of strings in
    which each value flag has its value."""
    if raw is None or not raw.strip():
        return None
    try:
        args = load_json(raw)
    except json.JSONDecodeError as error:
        raise ServerArgsError(_not_json(raw, error)) from None
    except JsonInputError as error:
        raise ServerArgsError(_problem(str(error))) from None
    except RecursionError:
        raise ServerArgsError(_problem("is nested too deeply")) from None
    if not isinstance(args, list):
        raise ServerArgsError(_problem(f"is {json_type(args)}, not a JSON array of strings"))
    for index, arg in enumerate(args, start=1):
        if not isinstance(arg, str):
            raise ServerArgsError(
                _problem(f"is not a JSON array of strings: element {index} is {json_type(arg)}")
            )
    _check_policy_values(args)
    return list(args)


def _check_policy_values(args: list[str]) -> None:
    """Each policy flag has a rule after it: not missing, not a flag, not blank."""
    for index, arg in enumerate(args):
        if arg not in POLICY_VALUE_FLAGS:
            continue
        if index + 1 == len(args):
            raise ServerArgsError(
                f"{SERVER_ARGS_VARIABLE} ends with {arg}, which needs a value: "
                f'add the rule after it, e.g. "{arg}", "shell(git:*)"'
            )
        if args[index + 1].startswith("--"):
            # The sidecar would take the flag as the rule: refused, never guessed.
            raise ServerArgsError(
                f"{SERVER_ARGS_VARIABLE}: {arg} is followed by {args[index + 1][:40]!r}, "
                f'a flag, not a rule: put the rule after it, e.g. "{arg}", "shell(git:*)"'
            )
    for flag in POLICY_VALUE_FLAGS:
        if any(not value.strip() for value in _flag_values(args, flag)):
            raise ServerArgsError(
                f"{SERVER_ARGS_VARIABLE} gives {flag} a blank rule, which names no tool: "
                f'remove it, or write the rule after it, e.g. "{flag}", "shell(git:*)"'
            )


def parse_server_args(raw: str | None) -> PermissionConfig | None:
    """The allow and deny flags of the sidecar's arguments, or None for "no configuration".

    Raises ServerArgsError for a set but unreadable value (`read_server_args`).
    """
    args = read_server_args(raw)
    if args is None:
        return None
    denied = _normalise(_flag_values(args, "--deny-tool"))
    if "--allow-all-tools" in args:
        return PermissionConfig(allow_all=True, source=SERVER_ARGS_VARIABLE, denied_tools=denied)
    allow_values = _flag_values(args, "--allow-tool")
    if not allow_values and not denied:
        return None
    return PermissionConfig(
        allowed_tools=_normalise(allow_values), source=SERVER_ARGS_VARIABLE, denied_tools=denied
    )


def _flag_values(args: list[str], flag: str) -> list[str]:
    """The values of `flag VALUE` and `flag=VALUE`, in order."""
    values = []
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            values.append(args[index + 1])
        elif arg.startswith(flag + "="):
            values.append(arg.removeprefix(flag + "="))
    return values


def _problem(what: str) -> str:
    return (
        f"{SERVER_ARGS_VARIABLE} {what}; write the sidecar's arguments as a JSON array "
        f"of strings, e.g. {_SERVER_ARGS_EXAMPLE}"
    )


def _not_json(raw: str, error: json.JSONDecodeError) -> str:
    return _problem(f"is not valid JSON: {json_syntax_problem(raw, error)}")


def _normalise(tools: list[Any]) -> tuple[str, ...]:
    return tuple(tool.strip() for tool in tools if isinstance(tool, str) and tool.strip())
