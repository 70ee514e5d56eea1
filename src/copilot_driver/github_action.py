"""The composite GitHub Action's inputs (action.yml), read before anything starts.

    python -m copilot_driver.github_action policy [--github-output NAME]
    python -m copilot_driver.github_action sandbox [--github-output NAME]
    python -m copilot_driver.github_action harness-args [--github-output NAME]
    python -m copilot_driver.github_action prompt --dir DIR [--github-output NAME]

`policy` turns the `allowed-tools` and `denied-tools` inputs, each a YAML
block list of rules, into the driver's explicit permission policy (the JSON
value of `GH_AW_COPILOT_SDK_PERMISSIONS`). `sandbox` reads the `sandbox`
input (`true` or `false`). `harness-args` turns `sandbox`, `allowed-domains`
and `pass-env` into the harness's command-line arguments, one per line (every
value is checked to be a host or a variable name, so none holds a line
break). `prompt` turns `prompt` or `prompt-file` into the path of a prompt
file. Each prints its value, or with `--github-output NAME` appends it to the
file `$GITHUB_OUTPUT` names. Any input it cannot read exits 2 with one
message naming the input: the action stops before the Copilot CLI is
installed or a session exists.

The lists are read without PyYAML (the core install has none), as a strict
subset of YAML that PyYAML reads the same way: one `- rule` item per line at
one indentation, blank lines and `#` comments, plain scalars, single-quoted
scalars (`''` is a quote) and double-quoted scalars without backslashes.
Anything else (flow lists, nested items, mappings, continuation lines,
anchors, tags, escapes, tabs, control characters) is refused, never guessed.

Failing closed: the driver approves every request under an empty allowlist,
so an empty `allowed-tools` is refused unless `allow-all: true` says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from copilot_driver import __version__
from copilot_driver.env import PERMISSIONS, in_github_actions
from copilot_driver.exit_codes import ExitCode
from copilot_driver.permissions.config import parse_explicit
from copilot_driver.workflow_commands import annotation, outputs_block

PREFIX = "[copilot-driver-action]"

ALLOWED_TOOLS = "allowed-tools"
DENIED_TOOLS = "denied-tools"
ALLOW_ALL = "allow-all"
PROMPT = "prompt"
PROMPT_FILE = "prompt-file"
SANDBOX = "sandbox"
ALLOWED_DOMAINS = "allowed-domains"
PASS_ENV = "pass-env"  # noqa: S105 - an input's name, not a secret

INPUT_VARIABLES = {
    ALLOWED_TOOLS: "COPILOT_ACTION_ALLOWED_TOOLS",
    DENIED_TOOLS: "COPILOT_ACTION_DENIED_TOOLS",
    ALLOW_ALL: "COPILOT_ACTION_ALLOW_ALL",
    PROMPT: "COPILOT_ACTION_PROMPT",
    PROMPT_FILE: "COPILOT_ACTION_PROMPT_FILE",
    SANDBOX: "COPILOT_ACTION_SANDBOX",
    ALLOWED_DOMAINS: "COPILOT_ACTION_ALLOWED_DOMAINS",
    PASS_ENV: "COPILOT_ACTION_PASS_ENV",
}
"""The action input -> the environment variable action.yml passes it in."""

PROMPT_FILE_NAME = "prompt.md"
"""What an inline `prompt` is written to, in the folder `prompt --dir` names."""

_EXAMPLE_RULES = ("shell(git status:*)", "read")
_EXAMPLES = {
    ALLOWED_DOMAINS: ("host", ("pypi.org", "files.pythonhosted.org")),
    PASS_ENV: ("variable name", ("NPM_TOKEN",)),
}
"""What a list input other than the tool lists holds, and a valid value of it."""
_PLAIN_NEVER_FIRST = frozenset(",[]{}#&*!|>'\"%@`")
"""Characters that cannot start a plain scalar (YAML indicators)."""
_PLAIN_FIRST_IF_FOLLOWED = frozenset("-?:")
"""Indicators that start a plain scalar only when a non-space follows them."""
_SHOWN_CHARS = 60


class InputError(ValueError):
    """An action input that cannot be read; the message names the input and the fix."""


@dataclass(frozen=True)
class _Line:
    input_name: str
    number: int
    text: str

    @property
    def noun(self) -> str:
        """What one item of this input is: a rule, a host, a variable name."""
        return _noun(self.input_name)

    def error(self, what: str) -> InputError:
        shown = self.text if len(self.text) <= _SHOWN_CHARS else self.text[:_SHOWN_CHARS] + "..."
        return InputError(
            f"{self.input_name}, line {self.number} ({json.dumps(shown, ensure_ascii=False)}): "
            f"{what}\n{example(self.input_name)}"
        )


def _noun(input_name: str) -> str:
    return _EXAMPLES[input_name][0] if input_name in _EXAMPLES else "rule"


def example(input_name: str) -> str:
    """A valid value of a list input, as the workflow writes it."""
    entries = _EXAMPLES[input_name][1] if input_name in _EXAMPLES else _EXAMPLE_RULES
    items = "".join(f"\n    - {entry}" for entry in entries)
    return (
        f"Write one {_noun(input_name)} per line after `- `, for example:\n  {input_name}: |{items}"
    )


# -- the YAML block list ------------------------------------------------------------


def parse_rule_list(text: str, input_name: str) -> tuple[str, ...]:
    """The items of a YAML block list, in order; raises InputError for anything else.

    Blank or comment-only text is the empty list. Every list input is read here:
    the tool rules, `allowed-domains` and `pass-env`.
    """
    rules: list[str] = []
    indent: int | None = None
    first_item = 0
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, raw in enumerate(lines, start=1):
        line = _Line(input_name, number, raw)
        _check_characters(line)
        body = raw.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if body != "-" and not body.startswith("- "):
            raise line.error(_not_an_item(line.noun, body))
        here = len(raw) - len(body)
        if indent is None:
            indent, first_item = here, number
        elif here != indent:
            raise line.error(
                f"indented {here} spaces where line {first_item} is indented {indent}: "
                "nested or misaligned items are not read"
            )
        rules.append(_item_value(line, body[1:].lstrip(" ")))
    return tuple(rules)


def _check_characters(line: _Line) -> None:
    for char in line.text:
        if char == "\t":
            raise line.error("a tab: indent and separate with spaces")
        if not _printable(char):
            raise line.error(f"a control or non-printable character (U+{ord(char):04X})")


def _printable(char: str) -> bool:
    """What YAML allows in a line, less what it could read as a line break."""
    code = ord(char)
    return (
        0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    ) and char not in "\u2028\u2029"


def _not_an_item(noun: str, body: str) -> str:
    if body.startswith("["):
        return f"a flow list (`[a, b]`) is not read: put each {noun} on its own line"
    if body.startswith("-"):
        return "an item needs a space after its `-`"
    if _is_mapping(body.split(" #", 1)[0].rstrip(" ")):
        return f"a mapping (`key: value`) is not a list of {noun}s"
    return f"not a list item: each {noun} goes on its own line after `- `"


def _item_value(line: _Line, value: str) -> str:
    if not value or value.startswith("#"):
        raise line.error(f"an empty item: write the {line.noun} after `- `")
    if value[0] == "'":
        rule, end = _single_quoted(line, value)
    elif value[0] == '"':
        rule, end = _double_quoted(line, value)
    else:
        return _plain(line, value)
    rest = value[end:]
    if rest.strip(" ") and not (rest.startswith(" ") and rest.lstrip(" ").startswith("#")):
        raise line.error("text after the closing quote (a comment needs a space before `#`)")
    if not rule.strip():
        raise line.error(f"an empty {line.noun}")
    return rule


def _single_quoted(line: _Line, value: str) -> tuple[str, int]:
    """The scalar and the index just after its closing quote; `''` inside is one quote."""
    parts: list[str] = []
    index = 1
    while True:
        end = value.find("'", index)
        if end < 0:
            raise line.error(f"an unclosed quote: a quoted {line.noun} must end on its line")
        parts.append(value[index:end])
        if not value.startswith("''", end):
            return "".join(parts), end + 1
        parts.append("'")
        index = end + 2


def _double_quoted(line: _Line, value: str) -> tuple[str, int]:
    end = value.find('"', 1)
    inside = value[1:] if end < 0 else value[1:end]
    if "\\" in inside:
        raise line.error(
            "a backslash in double quotes (an escape) is not read: "
            "use single quotes, where `\\` is a plain character"
        )
    if end < 0:
        raise line.error(f"an unclosed quote: a quoted {line.noun} must end on its line")
    return inside, end + 1


def _plain(line: _Line, value: str) -> str:
    rule = value.split(" #", 1)[0].rstrip(" ")
    first, second = rule[0], rule[1:2]
    if first in _PLAIN_FIRST_IF_FOLLOWED and second in ("", " "):
        raise line.error(f"a nested item (`- {first} ...`) is not read")
    if first in _PLAIN_NEVER_FIRST:
        raise line.error(
            f"a {line.noun} cannot start with `{first}` unquoted: quote it, e.g. - {_quoted(rule)}"
        )
    if _is_mapping(rule):
        raise line.error(
            f"`: ` makes this a mapping, not a {line.noun}: quote it, e.g. - {_quoted(rule)}"
        )
    return rule


def _quoted(rule: str) -> str:
    return "'" + rule.replace("'", "''") + "'"


def _is_mapping(text: str) -> bool:
    return ": " in text or text.endswith(":")


# -- the policy ----------------------------------------------------------------------


def read_boolean(raw: str, input_name: str) -> bool:
    """`true` or `false` (any case, blank means false); anything else is refused."""
    value = raw.strip().lower()
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    shown = json.dumps(raw.strip()[:_SHOWN_CHARS], ensure_ascii=False)
    raise InputError(f"{input_name} must be true or false, not {shown}")


def build_policy(allowed_text: str, denied_text: str, allow_all_text: str) -> dict[str, object]:
    """The explicit policy object the driver reads from GH_AW_COPILOT_SDK_PERMISSIONS."""
    allow_all = read_boolean(allow_all_text, ALLOW_ALL)
    allowed = parse_rule_list(allowed_text, ALLOWED_TOOLS)
    denied = parse_rule_list(denied_text, DENIED_TOOLS)
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


# -- the sandbox and the harness's arguments -----------------------------------------

_HOST_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_HOST = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*")
_PORT = re.compile(r"[1-9][0-9]{0,4}")
_MAX_HOST_CHARS = 253
_MAX_PORT = 65535
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_sandbox(raw: str) -> bool:
    """`true` or `false` (any case); blank or anything else is refused, so that a
    mistyped value never turns the sandbox off."""
    value = raw.strip().lower()
    if value in ("true", "false"):
        return value == "true"
    shown = json.dumps(raw.strip()[:_SHOWN_CHARS], ensure_ascii=False)
    raise InputError(
        f"{SANDBOX} must be true or false, not {shown}: true (the default) runs the agent's "
        "tools in the OS sandbox, false runs them without one"
    )


def read_host(entry: str) -> str:
    """A host or host:port for `--allow-domain`; raises InputError naming the fix."""
    shown = json.dumps(entry[:_SHOWN_CHARS], ensure_ascii=False)
    problem = f"{ALLOWED_DOMAINS}: {shown} is not a host or host:port"
    if "://" in entry:
        raise InputError(f"{problem}: write the host without its scheme, e.g. - pypi.org")
    if "/" in entry:
        raise InputError(f"{problem}: write the host without a path, e.g. - pypi.org")
    if entry.startswith("*."):
        raise InputError(f"{problem}: a host already allows its subdomains, write - {entry[2:]}")
    host, colon, port = entry.partition(":")
    if not _HOST.fullmatch(host) or len(host) > _MAX_HOST_CHARS:
        raise InputError(
            f"{problem}: write a host name or IPv4 address (letters, digits, - and .), "
            "optionally :PORT, e.g. - pypi.org or - registry.example.com:8443"
        )
    if colon and not (_PORT.fullmatch(port) and int(port) <= _MAX_PORT):
        raise InputError(f"{problem}: the port must be a number from 1 to {_MAX_PORT}")
    return entry


def read_env_name(entry: str) -> str:
    """An environment variable name for `--pass-env`; raises InputError naming the fix."""
    if _ENV_NAME.fullmatch(entry):
        return entry
    shown = json.dumps(entry[:_SHOWN_CHARS], ensure_ascii=False)
    raise InputError(
        f"{PASS_ENV}: {shown} is not an environment variable name: write the name alone "
        "(letters, digits and _, not starting with a digit), e.g. - NPM_TOKEN"
    )


def harness_arguments(sandbox_text: str, domains_text: str, pass_env_text: str) -> list[str]:
    """The harness's sandbox arguments for the `sandbox`, `allowed-domains` and `pass-env`
    inputs. The sandbox mode is always given, so the harness's default never decides it."""
    sandbox = read_sandbox(sandbox_text)
    hosts = [read_host(entry) for entry in parse_rule_list(domains_text, ALLOWED_DOMAINS)]
    names = [read_env_name(entry) for entry in parse_rule_list(pass_env_text, PASS_ENV)]
    arguments = ["--sandbox", "workspace" if sandbox else "off"]
    for host in hosts:
        arguments += ["--allow-domain", host]
    for name in names:
        arguments += ["--pass-env", name]
    return arguments


def harness_arguments_from_environment(env: Mapping[str, str]) -> str:
    """The harness's arguments, one per line: action.yml reads them into a bash array
    line by line, so no argument may hold a line break (hosts and names cannot)."""
    arguments = harness_arguments(
        env.get(INPUT_VARIABLES[SANDBOX], ""),
        env.get(INPUT_VARIABLES[ALLOWED_DOMAINS], ""),
        env.get(INPUT_VARIABLES[PASS_ENV], ""),
    )
    if any("\n" in argument or "\r" in argument for argument in arguments):
        raise InputError("a harness argument holds a line break; refusing to run")
    return "\n".join(arguments)


# -- the prompt ----------------------------------------------------------------------


def prompt_path(env: Mapping[str, str], directory: Path, cwd: Path) -> Path:
    """The prompt file: `prompt-file` (relative to `cwd`), or `prompt` written into
    `directory`. Exactly one of the two must be set."""
    text = env.get(INPUT_VARIABLES[PROMPT], "")
    named = env.get(INPUT_VARIABLES[PROMPT_FILE], "").strip()
    if bool(text.strip()) == bool(named):
        which = "both are set" if named else "neither is set"
        raise InputError(
            f"set exactly one of the inputs {PROMPT} (the prompt text) and {PROMPT_FILE} "
            f"(the path of a prompt file): {which}"
        )
    if named:
        path = cwd / named
        if not path.is_file():
            raise InputError(f"{PROMPT_FILE} {named}: no such file (read from {cwd})")
        return path.absolute()
    target = directory / PROMPT_FILE_NAME
    target.write_text(text, encoding="utf-8")
    return target


# -- the step outputs and the command line -------------------------------------------


def _emit(value: str, output_name: str | None, env: Mapping[str, str]) -> None:
    if output_name is None:
        sys.stdout.write(value + "\n")
        return
    target = env.get("GITHUB_OUTPUT")
    if not target:
        raise InputError("--github-output needs GITHUB_OUTPUT (set by the Actions runner)")
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(outputs_block({output_name: value}))


def _report(message: str, env: Mapping[str, str]) -> None:
    sys.stderr.write(f"{PREFIX} error: {message}\n")
    if in_github_actions(env):
        sys.stderr.write(annotation("error", "copilot-driver action input", message))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.github_action",
        description="Read the copilot-driver GitHub Action's inputs (see docs/github-action.md).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    policy = commands.add_parser("policy", help=f"the JSON value of {PERMISSIONS.name}")
    sandbox = commands.add_parser("sandbox", help="the sandbox input: true or false")
    harness_args = commands.add_parser(
        "harness-args", help="the harness's sandbox arguments, one per line"
    )
    prompt = commands.add_parser("prompt", help="the path of the prompt file")
    prompt.add_argument("--dir", type=Path, required=True, help="where an inline prompt goes")
    for command in (policy, sandbox, harness_args, prompt):
        command.add_argument("--github-output", metavar="NAME", help="append to $GITHUB_OUTPUT")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = os.environ if env is None else env
    try:
        if args.command == "policy":
            value = policy_from_environment(env)
        elif args.command == "sandbox":
            value = str(read_sandbox(env.get(INPUT_VARIABLES[SANDBOX], ""))).lower()
        elif args.command == "harness-args":
            value = harness_arguments_from_environment(env)
        else:
            value = str(prompt_path(env, args.dir, Path.cwd()))
        _emit(value, args.github_output, env)
    except InputError as error:
        _report(str(error), env)
        return ExitCode.CONFIG
    except OSError as error:
        _report(f"{error.filename}: {error.strerror}", env)
        return ExitCode.CONFIG
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
