"""`python -m copilot_driver.github_action`: the composite GitHub Action's helper.

    python -m copilot_driver.github_action inputs --dir DIR
    python -m copilot_driver.github_action policy [--github-output NAME]
    python -m copilot_driver.github_action sandbox [--github-output NAME]
    python -m copilot_driver.github_action harness-args [--github-output NAME]
    python -m copilot_driver.github_action prompt --dir DIR [--github-output NAME]

`inputs`, the step action.yml runs, reads every input at once and appends the
later steps' values to `$GITHUB_OUTPUT` (`file`, `permissions`, `sandbox`,
`harness-args`); an input it cannot use is said with every other one, one
`[copilot-driver-action] error: ...` line each (and an annotation under
Actions), exit 2, with nothing written. The others read one part each and
print its value, or with `--github-output NAME` append it: `policy` turns the
`allowed-tools` and `denied-tools` inputs, each a YAML block list of rules, into
the driver's explicit permission policy (the JSON value of
`GH_AW_COPILOT_SDK_PERMISSIONS`); `sandbox` reads the `sandbox` input (`true` or
`false`); `harness-args` turns `sandbox`, `allowed-domains` and `pass-env` into
the harness's command-line arguments, one per line; `prompt` turns `prompt` or
`prompt-file` into the path of a prompt file. The readers are in action_inputs/.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from copilot_driver import __version__
from copilot_driver.action_inputs.every_input import read_every_input
from copilot_driver.action_inputs.harness_args import (
    harness_arguments_from_environment,
    read_sandbox,
)
from copilot_driver.action_inputs.names import INPUT_VARIABLES, SANDBOX, InputError
from copilot_driver.action_inputs.policy import policy_from_environment
from copilot_driver.action_inputs.prompt import prompt_path
from copilot_driver.command_line import USAGE_EXIT, CommandParser, error_line
from copilot_driver.env import PERMISSIONS, in_github_actions
from copilot_driver.exit_codes import ExitCode
from copilot_driver.workflow_commands import annotation, outputs_block

COMMAND = "copilot-driver-action"
ANNOTATION_TITLE = "copilot-driver action input"


def _print_or_emit(value: str, output_name: str | None, env: Mapping[str, str]) -> None:
    """The value printed, or appended to $GITHUB_OUTPUT as `output_name`."""
    if output_name is None:
        sys.stdout.write(value + "\n")
    else:
        _emit({output_name: value}, env)


def _emit(outputs: Mapping[str, str], env: Mapping[str, str]) -> None:
    """Each value appended to $GITHUB_OUTPUT under its name."""
    target = env.get("GITHUB_OUTPUT")
    if not target:
        raise InputError(
            "--github-output needs GITHUB_OUTPUT (set by the Actions runner); "
            "without the runner, leave the option out to print the value"
        )
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(outputs_block(dict(outputs)))


def _report(problems: Sequence[str], env: Mapping[str, str]) -> int:
    """Each problem on its own error line (and annotation, under Actions): exit 2."""
    for message in problems:
        sys.stderr.write(error_line(COMMAND, message) + "\n")
        if in_github_actions(env):
            sys.stderr.write(annotation("error", ANNOTATION_TITLE, message))
    return USAGE_EXIT


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="python -m copilot_driver.github_action",
        command=COMMAND,
        description="Read the copilot-driver GitHub Action's inputs (see docs/github-action.md).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CommandParser)
    every = commands.add_parser(
        "inputs", command=COMMAND, help="every input at once, into $GITHUB_OUTPUT"
    )
    every.add_argument("--dir", type=Path, required=True, help="where an inline prompt goes")
    policy = commands.add_parser(
        "policy", command=COMMAND, help=f"the JSON value of {PERMISSIONS.name}"
    )
    sandbox = commands.add_parser(
        "sandbox", command=COMMAND, help="the sandbox input: true or false"
    )
    harness_args = commands.add_parser(
        "harness-args", command=COMMAND, help="the harness's sandbox arguments, one per line"
    )
    prompt = commands.add_parser("prompt", command=COMMAND, help="the path of the prompt file")
    prompt.add_argument("--dir", type=Path, required=True, help="where an inline prompt goes")
    for command in (policy, sandbox, harness_args, prompt):
        command.add_argument("--github-output", metavar="NAME", help="append to $GITHUB_OUTPUT")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = os.environ if env is None else env
    try:
        if args.command == "inputs":
            found = read_every_input(env, args.dir, Path.cwd())
            if found.problems:
                return _report(found.problems, env)
            _emit(found.outputs, env)
            return ExitCode.OK
        if args.command == "policy":
            value = policy_from_environment(env)
        elif args.command == "sandbox":
            value = str(read_sandbox(env.get(INPUT_VARIABLES[SANDBOX], ""))).lower()
        elif args.command == "harness-args":
            value = harness_arguments_from_environment(env)
        else:
            value = str(prompt_path(env, args.dir, Path.cwd()))
        _print_or_emit(value, args.github_output, env)
    except InputError as error:
        return _report([str(error)], env)
    except OSError as error:
        return _report([f"{error.filename}: {error.strerror}"], env)
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
