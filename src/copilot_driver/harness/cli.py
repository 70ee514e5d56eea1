"""`copilot-driver-harness [OPTIONS] [PROMPT_FILE] [-- DRIVER [ARG ...]]`.

The options are read whole before anything is checked: a value that cannot be used
is a problem the preflight says together with every other one (one error line each,
exit 2), never the first alone. The synopsis (`--help`'s usage, the README's and
docs/harness.md's) is made from the parser itself (`synopsis`), so it lists exactly
what the command accepts.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from copilot_driver import __version__
from copilot_driver.command_line import CommandParser, refuse
from copilot_driver.env import (
    GITHUB_ACTIONS,
    MODEL,
    PROMPT,
    PROVIDER_API_KEY,
    PROVIDER_BASE_URL,
    SESSION_STATE_BASE_DIR,
)
from copilot_driver.env_commands import (
    COPILOT_CLI_PATH,
    COPILOT_GITHUB_TOKEN,
    GH_TOKEN,
    GITHUB_TOKEN,
    HARNESS_TIMEOUT_MINUTES,
)
from copilot_driver.harness.environment import driver_command as own_driver_command
from copilot_driver.harness.retry import RetryPolicy
from copilot_driver.harness.run import Harness, HarnessOptions
from copilot_driver.harness.sandbox import SandboxSettings
from copilot_driver.harness.sandbox.egress_rules import EgressRuleError, parse_rule

PROG = "copilot-driver-harness"
DRIVER_SYNOPSIS = "[-- DRIVER [ARG ...]]"
EXAMPLE = f"COPILOT_MODEL=gpt-5-mini COPILOT_GITHUB_TOKEN=$(gh auth token) {PROG} prompt.md"
SANDBOX_MODES = ("workspace", "off")
_T = TypeVar("_T")

DESCRIPTION = """\
Start the Copilot CLI sidecar with a fresh connection token, run the driver in
an environment without GitHub credentials, and clean up. The driver defaults
to this package's (`python -m copilot_driver`); give another after `--`.

A failure that is transient (the model provider answered 5xx or 429, or its
connection was reset) and happened before any tool ran is tried again with a
fresh session: --retries times at most, after 5 s, 10 s, 20 s ... (--retry-delay
doubling, at most 60 s), never past GH_AW_TIMEOUT_MINUTES.

stdout carries only the answer. Under GitHub Actions (GITHUB_ACTIONS=true) the
harness also writes the step outputs to $GITHUB_OUTPUT (answer, exit-code,
error-kind, session-id, events-file, denials, premium-requests, policy-mode,
policy), the report to $GITHUB_STEP_SUMMARY, and an ::error annotation naming
the fix for any failure. Its last lines name the tool policy the driver enforced.

The sidecar, and so every tool the model runs, runs in an OS sandbox
(bubblewrap) unless --sandbox off: the workspace (GITHUB_WORKSPACE, else the
current directory) is writable except .git/config and .git/hooks; the rest of
the file system is read-only, /tmp is private, credential stores under $HOME
are hidden; no network but an egress proxy that allows the model endpoint
and the --allow-domain hosts; no secret of this environment reaches a tool
unless --pass-env names it. Where the sandbox cannot be set up, the harness
exits 2 naming the fix; it never falls back silently.

Before anything starts, every problem it can find (options, the Copilot CLI, the
credential, the prompt file, the model, the policy variables, what the sandbox
needs) is said at once, one `[copilot-driver-harness] error: ...` line each with
its fix, and it exits 2 with nothing started.

exit status: the driver's; 2 usage or configuration error, no Copilot CLI or no
credential found, a classic token, the sandbox cannot be set up, the driver
command cannot start; 4 the sidecar could not start; 5 the sidecar died while
the driver was running.
"""

_MAIN_VARIABLES = (
    (MODEL.name, "the model, e.g. gpt-5-mini"),
    (
        COPILOT_GITHUB_TOKEN.name,
        f"the Copilot CLI's GitHub token (or {GH_TOKEN.name}, "
        f"{GITHUB_TOKEN.name}): a fine-grained personal access token with the "
        '"Copilot Requests" permission, or `gh auth token`; only the sidecar sees it',
    ),
    (
        PROVIDER_BASE_URL.name,
        f"a bring-your-own-model provider instead (its key: {PROVIDER_API_KEY.name})",
    ),
    (COPILOT_CLI_PATH.name, COPILOT_CLI_PATH.summary),
    (SESSION_STATE_BASE_DIR.name, "the folder of the events file and the sidecar's log"),
    (HARNESS_TIMEOUT_MINUTES.name, HARNESS_TIMEOUT_MINUTES.summary),
    (f"{GITHUB_ACTIONS.name}=true", "write the step outputs, the step summary and annotations"),
)


def _epilog() -> str:
    rows = []
    for name, text in _MAIN_VARIABLES:
        lines = textwrap.wrap(text, 50)
        first = f"  {name:<27}{lines[0]}" if len(name) < 27 else f"  {name}\n{' ' * 29}{lines[0]}"
        rows.append("\n".join([first, *(" " * 29 + line for line in lines[1:])]))
    return (
        f"the prompt: PROMPT_FILE, else the file {PROMPT.name} names.\n\n"
        "the main variables (`python -m copilot_driver --help` lists all the driver reads):\n"
        + "\n".join(rows)
        + f"""

examples:
  {PROG} prompt.md
  {PROMPT.name}=prompt.md {PROG} --sandbox off
  {PROG} prompt.md -- python3 .github/drivers/copilot-driver.py
"""
    )


def build_parser() -> CommandParser:
    """The command line as argparse reads it. Values are kept as given: `read_options`
    checks them all, so no bad value hides another."""
    parser = CommandParser(
        prog=PROG,
        command=PROG,
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        metavar="PROMPT_FILE",
        help=f"the prompt file (default: the one {PROMPT.name} names)",
    )
    parser.add_argument("--copilot", metavar="PATH", help="the Copilot CLI binary")
    parser.add_argument("--port", metavar="PORT", help="sidecar port on 127.0.0.1 (default: any)")
    parser.add_argument(
        "--ready-timeout",
        metavar="SECONDS",
        help="how long the sidecar may take to listen (default 60)",
    )
    parser.add_argument(
        "--retries",
        metavar="N",
        help="fresh tries after a transient failure (default 2; 0: never retry)",
    )
    parser.add_argument(
        "--retry-delay",
        metavar="SECONDS",
        help="the wait before the first retry, doubled for each next one (default 5)",
    )
    parser.add_argument(
        "--sandbox",
        metavar="|".join(SANDBOX_MODES),
        help="contain the sidecar and its tools in an OS sandbox (default: workspace)",
    )
    parser.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="HOST",
        help="a host the tools may reach through the egress proxy: HOST (and its "
        "subdomains, ports 80 and 443) or HOST:PORT; repeatable",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this variable of the environment on to the sidecar and its tools; "
        "repeatable (without it no secret reaches a tool)",
    )
    parser.add_argument(
        "--version", action="version", version=f"copilot-driver-harness {__version__}"
    )
    parser.usage = synopsis(parser, margin=len("usage: ")) + f"\n       e.g. {EXAMPLE}"
    return parser


def synopsis_items(parser: argparse.ArgumentParser) -> list[str]:
    """Each thing the command line takes, as the synopsis writes it: the options in
    their order (a repeatable one with `...`), PROMPT_FILE, then the driver command."""
    items = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if not action.option_strings:
            items.append(f"[{action.metavar}]")
            continue
        repeat = " ..." if isinstance(action, argparse._AppendAction) else ""
        items.append(f"[{action.option_strings[-1]} {action.metavar}{repeat}]")
    positionals = [item for item in items if not item.startswith("[-")]
    options = [item for item in items if item.startswith("[-")]
    return [*options, *positionals, DRIVER_SYNOPSIS]


def synopsis(parser: argparse.ArgumentParser, *, margin: int = 0, width: int = 88) -> str:
    """The usage lines: the run's synopsis, each [item] whole, wrapped under the
    command's name, then the two options that run nothing. `margin`: the columns
    before the first line's name (`usage: ` in --help), which the others keep free."""
    indent = " " * (margin + len(PROG) + 1)
    lines = [PROG]
    for item in synopsis_items(parser):
        first = len(lines) == 1
        if len(lines[-1]) + 1 + len(item) + (margin if first else 0) > width:
            lines.append(indent + item)
        else:
            lines[-1] += " " + item
    return "\n".join([*lines, f"{' ' * margin}{PROG} --help | --version"])


@dataclass
class Options:
    """The command line read and checked: each value, or its default where the given
    value is a problem (said in `problems`, the run never starts with it)."""

    prompt: str | None = None
    copilot: str | None = None
    port: int | None = None
    ready_timeout: float = 60.0
    retries: int = RetryPolicy().tries - 1
    retry_delay: float = RetryPolicy().first_delay_s
    sandbox: str = "workspace"
    allow_domains: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    problems: list[str] = field(default_factory=list)


def read_options(parsed: argparse.Namespace, unknown: list[str]) -> Options:
    """Every option checked, every problem kept, each with its fix."""
    options = Options(prompt=parsed.prompt, copilot=parsed.copilot)
    problems = options.problems
    for extra in unknown:
        if extra.startswith("-"):
            problems.append(f"unknown option {extra}: `{PROG} --help` lists the options")
        else:
            problems.append(
                f"unexpected argument {extra!r}: give one PROMPT_FILE at most, and a driver "
                f"command after `--` (`{PROG} prompt.md -- python3 driver.py`)"
            )
    _read_numbers(parsed, options)
    if parsed.sandbox is not None:
        if parsed.sandbox in SANDBOX_MODES:
            options.sandbox = parsed.sandbox
        else:
            problems.append(
                f"--sandbox {parsed.sandbox!r} is not a sandbox mode: give --sandbox workspace "
                "(the default: tools run in the OS sandbox) or --sandbox off (without one)"
            )
    domains = []
    for text in parsed.allow_domain:
        try:
            parse_rule(text)
            domains.append(text)
        except EgressRuleError as error:
            problems.append(f"--allow-domain {error}")
    options.allow_domains = tuple(domains)
    names = []
    for name in parsed.pass_env:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            names.append(name)
        else:
            problems.append(
                f"--pass-env {name!r} is not an environment variable name: give the name "
                "alone (letters, digits and _, not starting with a digit), e.g. "
                "--pass-env NPM_TOKEN"
            )
    options.pass_env = tuple(dict.fromkeys(names))
    return options


def _read_numbers(parsed: argparse.Namespace, options: Options) -> None:
    problems = options.problems
    if parsed.port is not None:
        options.port = _read(parsed.port, "--port", _port, problems, None)
    if parsed.ready_timeout is not None:
        options.ready_timeout = _read(
            parsed.ready_timeout, "--ready-timeout", _seconds, problems, options.ready_timeout
        )
    if parsed.retries is not None:
        options.retries = _read(parsed.retries, "--retries", _retries, problems, options.retries)
    if parsed.retry_delay is not None:
        options.retry_delay = _read(
            parsed.retry_delay, "--retry-delay", _seconds, problems, options.retry_delay
        )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    driver_command = own_driver_command(sys.executable)
    own_driver = True
    if "--" in args:
        own_driver = False
        split = args.index("--")
        args, driver_command = args[:split], args[split + 1 :]
        if not driver_command:
            return refuse(
                PROG,
                "no driver command after `--`: give one "
                f"(`{PROG} prompt.md -- python3 driver.py`), or leave `--` out to run "
                "this package's driver",
            )
    parser = build_parser()
    try:
        parsed, unknown = parser.parse_known_args(args)
    except SystemExit as exit_request:  # --help, --version (0) or a usage error (2)
        return 2 if exit_request.code else 0
    options = read_options(parsed, unknown)
    harness = Harness(
        HarnessOptions(
            options.copilot,
            options.port,
            options.ready_timeout,
            driver_command,
            overlap_start=own_driver,
            retry=RetryPolicy(tries=options.retries + 1, first_delay_s=options.retry_delay),
            sandbox=SandboxSettings(
                enabled=options.sandbox == "workspace",
                allow_domains=options.allow_domains,
                pass_env=options.pass_env,
            ),
            prompt_file=options.prompt,
            usage_problems=tuple(options.problems),
        ),
        with_prompt(os.environ, options.prompt),
    )
    return harness.run()


def with_prompt(env: Mapping[str, str], prompt: str | None) -> Mapping[str, str]:
    """The environment the run sees: PROMPT_FILE, when given, is its GH_AW_PROMPT (made
    absolute, so a driver in another folder finds it too; the preflight checks it)."""
    if prompt is None:
        return env
    return {**env, PROMPT.name: os.path.abspath(prompt)}


def _read(
    text: str, option: str, read: Callable[[str], _T], problems: list[str], default: _T
) -> _T:
    """`read(text)`, or `default` with the problem said."""
    try:
        return read(text)
    except ValueError as error:
        problems.append(f"{option} {error}")
        return default


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or not int(text) <= 65535:
        raise ValueError(f"{text!r} is not a port number: give 0-65535 (0: any free port)")
    return int(text)


def _retries(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 2) or int(text) > 10:
        raise ValueError(f"{text!r} is not a number of retries: give 0-10 (0: never retry)")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 < value <= 3600:
        raise ValueError(f"{text!r} is not a number of seconds: give more than 0, at most 3600")
    return value
