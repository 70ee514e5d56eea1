"""The `sandbox`, `allowed-domains` and `pass-env` inputs -> the harness's command-line
arguments. Pure.

Every value is checked to be a host or a variable name, so none holds a line
break (action.yml reads the arguments one per line), and the sandbox mode is
always given: a mistyped value never turns the sandbox off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from copilot_driver.action_inputs.names import (
    ALLOWED_DOMAINS,
    INPUT_VARIABLES,
    PASS_ENV,
    SANDBOX,
    SHOWN_CHARS,
    InputError,
)
from copilot_driver.action_inputs.yaml_list import parse_rule_list

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
    shown = json.dumps(raw.strip()[:SHOWN_CHARS], ensure_ascii=False)
    raise InputError(
        f"{SANDBOX} must be true or false, not {shown}: true (the default) runs the agent's "
        "tools in the OS sandbox, false runs them without one"
    )


def read_host(entry: str) -> str:
    """A host or host:port for `--allow-domain`; raises InputError naming the fix."""
    shown = json.dumps(entry[:SHOWN_CHARS], ensure_ascii=False)
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
    shown = json.dumps(entry[:SHOWN_CHARS], ensure_ascii=False)
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
