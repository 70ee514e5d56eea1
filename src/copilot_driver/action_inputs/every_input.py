"""Every input of the action read at once (`github_action inputs`): the step outputs
the later steps take, or every problem, each with its fix, before anything is
installed or started.

Each reader runs whatever another one found, so one run of the action names every
input to change, never the first alone. The outputs are given only when no input
has a problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from copilot_driver.action_inputs.harness_args import (
    read_env_names,
    read_hosts,
    read_sandbox,
    sandbox_arguments,
)
from copilot_driver.action_inputs.names import (
    ALLOWED_DOMAINS,
    INPUT_VARIABLES,
    PASS_ENV,
    SANDBOX,
    InputError,
)
from copilot_driver.action_inputs.policy import policy_from_environment
from copilot_driver.action_inputs.prompt import prompt_path
from copilot_driver.action_inputs.settings import (
    check_copilot_version,
    check_credential,
    check_max_tool_denials,
    check_model,
    check_timeout_minutes,
    check_tool_contract,
    check_working_directory,
)

_T = TypeVar("_T")


@dataclass
class EveryInput:
    """The outputs (`file`, `permissions`, `sandbox`, `harness-args`), or the problems."""

    outputs: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def attempt(self, read: Callable[[], _T]) -> _T | None:
        """`read()`, or None with its problem kept."""
        try:
            return read()
        except InputError as error:
            self.problems.append(str(error))
        except OSError as error:
            self.problems.append(f"{error.filename}: {error.strerror}")
        return None


def read_every_input(env: Mapping[str, str], directory: Path, workspace: Path) -> EveryInput:
    """Every input read: an inline prompt is written into `directory`; paths are
    relative to `workspace`."""
    found = EveryInput()
    prompt = found.attempt(lambda: prompt_path(env, directory, workspace))
    permissions = found.attempt(lambda: policy_from_environment(env))
    sandbox = found.attempt(lambda: read_sandbox(env.get(INPUT_VARIABLES[SANDBOX], "")))
    hosts = found.attempt(lambda: read_hosts(env.get(INPUT_VARIABLES[ALLOWED_DOMAINS], "")))
    names = found.attempt(lambda: read_env_names(env.get(INPUT_VARIABLES[PASS_ENV], "")))
    found.attempt(lambda: check_model(env))
    found.attempt(lambda: check_copilot_version(env))
    found.attempt(lambda: check_timeout_minutes(env))
    found.attempt(lambda: check_max_tool_denials(env))
    found.attempt(lambda: check_working_directory(env, workspace))
    found.attempt(lambda: check_tool_contract(env))
    found.attempt(lambda: check_credential(env, sandboxed=sandbox is not False))
    if found.problems or prompt is None or permissions is None or sandbox is None:
        return found
    arguments = sandbox_arguments(sandbox, hosts or [], names or [])
    found.outputs = {
        "file": str(prompt),
        "permissions": permissions,
        "sandbox": json.dumps(sandbox),
        "harness-args": "\n".join(arguments),
    }
    return found
