"""The `sandbox`, `allowed-domains` and `pass-env` inputs -> the harness's command-line
arguments. Pure.

Every value is checked to be a host or a variable name, so none holds a line
break (action.yml reads the arguments one per line), and the sandbox mode is
always given: a mistyped value never turns the sandbox off. A host is read by
the harness's own rule reader (`egress_rules.parse_rule`), so the action takes
exactly what `--allow-domain` takes, and a refusal names the same fix, written
as the input's list item (`- pypi.org`) instead of the option.
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
    """A host or host:port for `--allow-domain`, as written; raises InputError naming the
    fix as an item of the input."""
    # Imported here: only this reader needs the harness's package.
    from copilot_driver.harness.sandbox.egress_rules import EgressRuleError, parse_rule

    try:
        parse_rule(entry)
    except EgressRuleError as error:
        shown = json.dumps(entry[:SHOWN_CHARS], ensure_ascii=False)
        raise InputError(
            error.said(f"{ALLOWED_DOMAINS}: {shown}", lambda rule: f"`- {rule}`")
        ) from None
    return entry.strip()


def read_env_name(entry: str) -> str:
    """An environment variable name for `--pass-env`; raises InputError naming the fix."""
    if _ENV_NAME.fullmatch(entry):
        return entry
    shown = json.dumps(entry[:SHOWN_CHARS], ensure_ascii=False)
    raise InputError(
        f"{PASS_ENV}: {shown} is not an environment variable name: write the name alone "
        "(letters, digits and _, not starting with a digit), e.g. `- NPM_TOKEN`"
    )


def harness_arguments(sandbox_text: str, domains_text: str, pass_env_text: str) -> list[str]:
    """The harness's sandbox arguments for the `sandbox`, `allowed-domains` and `pass-env`
    inputs. The sandbox mode is always given, so the harness's default never decides it."""
    sandbox = read_sandbox(sandbox_text)
    hosts = read_hosts(domains_text)
    names = read_env_names(pass_env_text)
    return sandbox_arguments(sandbox, hosts, names)


def read_hosts(text: str) -> list[str]:
    """The `allowed-domains` list, each entry a host; raises InputError."""
    return [read_host(entry) for entry in parse_rule_list(text, ALLOWED_DOMAINS, read_host)]


def read_env_names(text: str) -> list[str]:
    """The `pass-env` list, each entry a variable name; raises InputError."""
    return [read_env_name(entry) for entry in parse_rule_list(text, PASS_ENV, read_env_name)]


def sandbox_arguments(sandbox: bool, hosts: list[str], names: list[str]) -> list[str]:
    """The harness's arguments, the sandbox mode always given."""
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
