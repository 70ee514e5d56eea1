"""`copilot-driver-harness [OPTIONS] [PROMPT_FILE] [-- DRIVER [ARG ...]]`."""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from copilot_driver import __version__
from copilot_driver.env import (
    COPILOT_CLI_PATH,
    COPILOT_GITHUB_TOKEN,
    GH_TOKEN,
    GITHUB_ACTIONS,
    GITHUB_TOKEN,
    HARNESS_TIMEOUT_MINUTES,
    MODEL,
    PROMPT,
    PROVIDER_API_KEY,
    PROVIDER_BASE_URL,
    SESSION_STATE_BASE_DIR,
)
from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.environment import driver_command as own_driver_command
from copilot_driver.harness.retry import RetryPolicy
from copilot_driver.harness.run import Harness, HarnessOptions
from copilot_driver.harness.sandbox import SandboxSettings

PROG = "copilot-driver-harness"
USAGE = f"""\
{PROG} [OPTIONS] [PROMPT_FILE] [-- DRIVER [ARG ...]]
       e.g. COPILOT_MODEL=gpt-4.1 COPILOT_GITHUB_TOKEN=$(gh auth token) {PROG} prompt.md"""

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
error-kind, session-id, events-file, denials, premium-requests), the report to
$GITHUB_STEP_SUMMARY, and an ::error annotation naming the fix for any failure.

The sidecar, and so every tool the model runs, runs in an OS sandbox
(bubblewrap) unless --sandbox off: the workspace (GITHUB_WORKSPACE, else the
current directory) is writable except .git/config and .git/hooks; the rest of
the file system is read-only, /tmp is private, credential stores under $HOME
are hidden; no network but an egress proxy that allows the model endpoint
and the --allow-domain hosts; no secret of this environment reaches a tool
unless --pass-env names it. Where the sandbox cannot be set up, the harness
exits 2 naming the fix; it never falls back silently.

exit status: the driver's; 2 usage error, no Copilot CLI or no credential
found, the sandbox cannot be set up; 4 the sidecar could not start; 5 the
sidecar died while the driver was running.
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    driver_command = own_driver_command(sys.executable)
    own_driver = True
    if "--" in args:
        own_driver = False
        split = args.index("--")
        args, driver_command = args[:split], args[split + 1 :]
        if not driver_command:
            sys.stderr.write("[copilot-driver-harness] error: no driver command after `--`\n")
            return ExitCode.CONFIG
    parser = _OneLineErrors(
        prog=PROG,
        usage=USAGE,
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
    parser.add_argument("--port", type=_port, help="sidecar port on 127.0.0.1 (default: any)")
    parser.add_argument(
        "--ready-timeout",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long the sidecar may take to listen (default 60)",
    )
    parser.add_argument(
        "--retries",
        type=_retries,
        default=RetryPolicy().tries - 1,
        metavar="N",
        help="fresh tries after a transient failure (default 2; 0: never retry)",
    )
    parser.add_argument(
        "--retry-delay",
        type=_seconds,
        default=RetryPolicy().first_delay_s,
        metavar="SECONDS",
        help="the wait before the first retry, doubled for each next one (default 5)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("workspace", "off"),
        default="workspace",
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
        type=_variable_name,
        help="pass this variable of the environment on to the sidecar and its tools; "
        "repeatable (without it no secret reaches a tool)",
    )
    parser.add_argument(
        "--version", action="version", version=f"copilot-driver-harness {__version__}"
    )
    try:
        options = parser.parse_args(args)
    except SystemExit as exit_request:  # --help (0) or a usage error (2)
        return ExitCode.CONFIG if exit_request.code else 0
    try:
        env = _with_prompt(os.environ, options.prompt)
    except ValueError as error:
        sys.stderr.write(f"{PROG}: error: {error}\n")
        return ExitCode.CONFIG
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
                allow_domains=tuple(options.allow_domain),
                pass_env=tuple(dict.fromkeys(options.pass_env)),
            ),
        ),
        env,
    )
    return harness.run()


def _with_prompt(env: Mapping[str, str], prompt: str | None) -> Mapping[str, str]:
    """The environment the run sees: PROMPT_FILE, when given, is its GH_AW_PROMPT (made
    absolute, so a driver in another folder finds it too)."""
    if prompt is None:
        return env
    path = Path(prompt)
    if not path.is_file():
        where = f" (tried {path.absolute()})" if not path.is_absolute() else ""
        what = "is not a file" if path.exists() else "does not exist"
        raise ValueError(f"the prompt file {prompt} {what}{where}")
    return {**env, PROMPT.name: str(path.absolute())}


class _OneLineErrors(argparse.ArgumentParser):
    """A usage error is one line that says what is wrong and where the options are."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            message += (
                f": give one PROMPT_FILE at most, and a driver command after `--` "
                f"(`{self.prog} prompt.md -- python3 driver.py`)"
            )
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")


def _variable_name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an environment variable name")
    return text


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or not int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def _retries(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 2) or int(text) > 10:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of retries (0-10)")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0-3600]")
    return value
