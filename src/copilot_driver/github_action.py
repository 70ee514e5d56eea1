"""`python -m copilot_driver.github_action`: the composite GitHub Action's helper.

    python -m copilot_driver.github_action policy [--github-output NAME]
    python -m copilot_driver.github_action sandbox [--github-output NAME]
    python -m copilot_driver.github_action harness-args [--github-output NAME]
    python -m copilot_driver.github_action prompt --dir DIR [--github-output NAME]

`policy` turns the `allowed-tools` and `denied-tools` inputs, each a YAML
block list of rules, into the driver's explicit permission policy (the JSON
value of `GH_AW_COPILOT_SDK_PERMISSIONS`). `sandbox` reads the `sandbox`
input (`true` or `false`). `harness-args` turns `sandbox`, `allowed-domains`
and `pass-env` into the harness's command-line arguments, one per line.
`prompt` turns `prompt` or `prompt-file` into the path of a prompt file. Each
prints its value, or with `--github-output NAME` appends it to the file
`$GITHUB_OUTPUT` names. Any input it cannot read exits 2 with one message
naming the input. The readers are in action_inputs/.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from copilot_driver import __version__
from copilot_driver.action_inputs.harness_args import (
    harness_arguments_from_environment,
    read_sandbox,
)
from copilot_driver.action_inputs.names import INPUT_VARIABLES, SANDBOX, InputError
from copilot_driver.action_inputs.policy import policy_from_environment
from copilot_driver.action_inputs.prompt import prompt_path
from copilot_driver.env import PERMISSIONS, in_github_actions
from copilot_driver.exit_codes import ExitCode
from copilot_driver.workflow_commands import annotation, outputs_block

PREFIX = "[copilot-driver-action]"


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
