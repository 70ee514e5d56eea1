"""Where the allowlist comes from (spec 5.1), resolved before anything runs.

Two inputs, in order of precedence:

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
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from copilot_driver import env as contract

EXPLICIT_VARIABLE = contract.PERMISSIONS.name
SERVER_ARGS_VARIABLE = contract.SERVER_ARGS.name
_EXPLICIT_KEYS = frozenset({"allowAllTools", "allowedTools", "deniedTools"})
POLICY_VALUE_FLAGS = ("--allow-tool", "--deny-tool")
"""The policy's flags that take the next argument as their value, whatever it looks like."""
_SERVER_ARGS_EXAMPLE = '["--allow-tool","shell(git:*)","--allow-tool","write"]'
EXPLICIT_EXAMPLE = (
    '{"allowAllTools": false, "allowedTools": ["read", "shell(git status:*)"], '
    '"deniedTools": ["shell(rm:*)"]}'
)
"""A valid GH_AW_COPILOT_SDK_PERMISSIONS, shown when the given one cannot be read."""
_EXPECTING_A_KEY = "Expecting property name enclosed in double quotes"
_JSON_PROBLEMS = {
    "Expecting value": "expected a value",
    _EXPECTING_A_KEY: "expected a key in double quotes",
    "Expecting ',' delimiter": "expected `,` or a closing bracket",
    "Expecting ':' delimiter": "expected `:` after the key",
    "Unterminated string starting at": "a string starts here and is never closed",
    "Extra data": "expected nothing more after the value",
    "Invalid control character at": "a raw tab or line break inside a string (write \\t or \\n)",
    "Invalid \\escape": "an invalid backslash escape",
}
"""The json module's messages, said in plain words."""

Mode = Literal["allow-all", "unrestricted", "scoped"]


class JsonInputError(ValueError):
    """JSON that parses but cannot be taken as written; the message says what, phrased to
    follow the variable's name ("has the key ... twice")."""


def load_json(raw: str) -> Any:
    """`json.loads` for the JSON a user gives in a variable: a key given twice and a number
    of more digits than Python reads are JsonInputError (the json module would keep the
    last key, or fail with advice about `sys.set_int_max_str_digits`)."""
    return json.loads(raw, object_pairs_hook=_unique_keys, parse_int=_bounded_int)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise JsonInputError(
                f"has the key {_quoted(key)} twice in one object: keep one (the json module "
                "would silently keep the last)"
            )
        value[key] = item
    return value


def _bounded_int(digits: str) -> int:
    limit = sys.get_int_max_str_digits() or 4300
    if len(digits.lstrip("-")) > limit:
        raise JsonInputError(
            f"holds a number of {len(digits.lstrip('-'))} digits (at most {limit} are read): "
            "write a shorter number"
        )
    return int(digits)


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


def resolve_permissions(env: Mapping[str, str]) -> PermissionConfig:
    """The effective configuration; raises ValueError for an unreadable input.

    The server arguments are read even when the explicit variable wins: a
    broken input is reported, never ignored, and their deny rules still apply
    (the sidecar was given them too).
    """
    from_args = parse_server_args(env.get(SERVER_ARGS_VARIABLE))
    explicit = env.get(EXPLICIT_VARIABLE)
    if explicit is not None and explicit.strip():
        config = parse_explicit(explicit)
        if from_args is not None and from_args.denied_tools:
            denied = config.denied_tools + from_args.denied_tools
            return replace(config, denied_tools=tuple(dict.fromkeys(denied)))
        return config
    return from_args or PermissionConfig()


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
            f"{EXPLICIT_VARIABLE} is {_json_type(value)}, not a JSON object; a valid value "
            f"looks like {EXPLICIT_EXAMPLE}"
        )
    unknown = sorted(_quoted(key) for key in value if key not in _EXPLICIT_KEYS)
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
        allow_all, lists["allowedTools"], EXPLICIT_VARIABLE, lists["deniedTools"]
    )


class ServerArgsError(ValueError):
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
        raise ServerArgsError(_problem(f"is {_json_type(args)}, not a JSON array of strings"))
    for index, arg in enumerate(args, start=1):
        if not isinstance(arg, str):
            raise ServerArgsError(
                _problem(f"is not a JSON array of strings: element {index} is {_json_type(arg)}")
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
        return PermissionConfig(True, (), SERVER_ARGS_VARIABLE, denied)
    allow_values = _flag_values(args, "--allow-tool")
    if not allow_values and not denied:
        return None
    return PermissionConfig(False, _normalise(allow_values), SERVER_ARGS_VARIABLE, denied)


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


def json_syntax_problem(raw: str, error: json.JSONDecodeError) -> str:
    """Where `raw` stops being JSON, what is there, and the usual mistake when it is one:
    "line 1 column 9: expected a value, found `]`; it has a trailing comma before `]`..."."""
    error = _at_the_closing_bracket(raw, error)
    what = _JSON_PROBLEMS.get(error.msg, error.msg.removesuffix(" at"))
    found = _found_at(raw, error.pos)
    mistake = _json_mistake(raw, error)
    said = f"line {error.lineno} column {error.colno}: {what}, found {found}"
    return f"{said}; {mistake}" if mistake else said


def _at_the_closing_bracket(raw: str, error: json.JSONDecodeError) -> json.JSONDecodeError:
    """A trailing comma, said the same on every Python: 3.13's json reports "Illegal
    trailing comma" at the comma, earlier releases what they expected at the bracket."""
    if not error.msg.startswith("Illegal trailing comma"):
        return error
    after_comma = raw.find(",", error.pos) + 1
    bracket = after_comma + len(raw[after_comma:]) - len(raw[after_comma:].lstrip())
    expected = "Expecting value" if error.msg.endswith("array") else _EXPECTING_A_KEY
    return json.JSONDecodeError(expected, raw, bracket)


def _found_at(raw: str, pos: int) -> str:
    """The character at `pos`, in words when it is not visible (never more than one:
    the text may hold a secret pasted by mistake)."""
    if pos >= len(raw):
        return "the end of the text"
    char = raw[pos]
    names = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", " ": "a space"}
    if char in names:
        return names[char]
    return f"`{char}`" if char.isprintable() and char != "`" else repr(char)


def _json_mistake(raw: str, error: json.JSONDecodeError) -> str:
    """The usual mistake behind a JSON error at `error.pos`, or ""."""
    pos = error.pos
    here = raw[pos] if pos < len(raw) else ""
    before = raw[:pos].rstrip()[-1:]
    after = raw[pos + 1 :].lstrip()[:1]
    if here == "'":
        return "JSON strings take double quotes, not single quotes"
    if (before == "," and here in ("]", "}")) or (here == "," and after in ("]", "}")):
        closing = here if here in ("]", "}") else after
        return f"it has a trailing comma before `{closing}`: remove that comma"
    if here and error.msg == _EXPECTING_A_KEY and here.isalpha():
        return 'keys take double quotes, e.g. {"key": ...}'
    if not here:
        return "the text ends early: close every bracket and string"
    return ""


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string"


def _normalise(tools: list[Any]) -> tuple[str, ...]:
    return tuple(tool.strip() for tool in tools if isinstance(tool, str) and tool.strip())


def _quoted(key: str) -> str:
    """A key as JSON, on one line and bounded (it is echoed in an error)."""
    text = json.dumps(key)
    return text if len(text) <= 40 else text[:36] + '..."'
