"""A stand-in for the GitHub Actions runner: a composite action's `run:` steps, run for real.

    runner = FakeRunner(root, action_path=ROOT, env=base_env)
    run = runner.run(ACTION, {"prompt": "...", "model": "gpt-4.1"}, uses={"cli-cache": hit})

Each `run:` step is executed in order with real bash, the way the runner runs
`shell: bash` (`bash --noprofile --norc -eo pipefail FILE`, in the
workspace), with the runner's files: a fresh `$GITHUB_OUTPUT` per step whose
entries become `steps.<id>.outputs`, `$GITHUB_ENV` and `$GITHUB_PATH`
applied to the steps after it, and `$GITHUB_STEP_SUMMARY`. A step's `env:`
and `with:` values are evaluated from the inputs (defaults applied), the
runner, github and steps contexts. Only property lookups such as
`${{ steps.x.outputs.y }}` are evaluated: anything else raises, so the action
stays within what this runner can check. `uses:` steps are not run: a test
may stand in for one by its id (returning its outputs). As on the runner, the
first failing step skips every later `run:` step.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_PROPERTY = re.compile(r"[a-z_]+(?:\.[A-Za-z0-9_-]+)+")
STEP_TIMEOUT_S = 240

UsesStandIn = Callable[[Mapping[str, str]], Mapping[str, str]]
"""Stands in for a `uses:` step: its evaluated `with:` values -> its outputs."""


def load_action(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def unescape_command_value(text: str) -> str:
    """A workflow command's property or message as the runner reads it back."""
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def read_file_commands(text: str) -> dict[str, str]:
    """A `$GITHUB_OUTPUT` or `$GITHUB_ENV` file as the runner reads it: `name=value`
    lines and `name<<DELIMITER` blocks; a later value for a name wins."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index)  # ValueError: an unterminated block
            values[name] = "\n".join(lines[index:end])
            index = end + 1
        else:
            name, separator, value = line.partition("=")
            if not separator:
                raise ValueError(f"not a file command: {line!r}")
            values[name] = value
    return values


@dataclass
class StepRun:
    id: str
    name: str
    returncode: int | None
    """None: a `uses:` step (not run)."""
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    env: dict[str, str] = field(default_factory=dict)
    """The environment the step ran with."""


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    """The action's outputs, evaluated after the last step."""

    def step(self, step_id: str) -> StepRun:
        (found,) = [step for step in self.steps if step.id == step_id]
        return found

    def ran(self, step_id: str) -> bool:
        return any(step.id == step_id and step.returncode is not None for step in self.steps)

    @property
    def failed(self) -> StepRun | None:
        return next((step for step in self.steps if step.returncode not in (None, 0)), None)


class FakeRunner:
    """One job's runner: a workspace, a temp folder, a tool cache and the job's files."""

    def __init__(
        self,
        root: Path,
        *,
        action_path: Path,
        env: Mapping[str, str],
    ) -> None:
        self.workspace = root / "workspace"
        self.temp = root / "runner-temp"
        self.tool_cache = root / "tool-cache"
        for folder in (self.workspace, self.temp, self.tool_cache):
            folder.mkdir(parents=True, exist_ok=True)
        self.files = root / "runner-files"
        self.files.mkdir(exist_ok=True)
        self.summary = self.files / "step-summary.md"
        self.env_file = self.files / "env"
        self.path_file = self.files / "path"
        for path in (self.summary, self.env_file, self.path_file):
            path.touch()
        self.action_path = action_path
        self.job_env = {
            **env,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_JOB": "agent",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_ENV": str(self.env_file),
            "GITHUB_PATH": str(self.path_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.temp),
            "RUNNER_TOOL_CACHE": str(self.tool_cache),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
        }
        self._outputs = 0

    def contexts(self, action: Mapping[str, Any], inputs: Mapping[str, str]) -> dict[str, str]:
        declared = action.get("inputs") or {}
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs the action does not declare: {sorted(unknown)}"
        values = {
            f"inputs.{name}": inputs.get(name, str(spec.get("default", "")))
            for name, spec in declared.items()
        }
        values.update(
            {
                "runner.temp": str(self.temp),
                "runner.tool_cache": str(self.tool_cache),
                "runner.os": self.job_env["RUNNER_OS"],
                "runner.arch": self.job_env["RUNNER_ARCH"],
                "github.action_path": str(self.action_path),
                "github.workspace": str(self.workspace),
                "github.job": self.job_env["GITHUB_JOB"],
            }
        )
        return values

    def run(
        self,
        action: Mapping[str, Any],
        inputs: Mapping[str, str],
        *,
        uses: Mapping[str, UsesStandIn] | None = None,
        only: Collection[str] | None = None,
        steps: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ActionRun:
        """Run the action's steps in order (only the ids in `only`, when given), with
        `steps` as outputs of steps that are not run."""
        context = self.contexts(action, inputs)
        for step_id, outputs in (steps or {}).items():
            context.update({f"steps.{step_id}.outputs.{k}": v for k, v in outputs.items()})
        runs: list[StepRun] = []
        failed = False
        for index, step in enumerate(action["runs"]["steps"]):
            step_id = str(step.get("id", f"step-{index}"))
            if only is not None and step_id not in only:
                continue
            if "uses" in step:
                stand_in = (uses or {}).get(step_id)
                with_values = {
                    k: evaluate(str(v), context) for k, v in step.get("with", {}).items()
                }
                outputs = dict(stand_in(with_values)) if stand_in and not failed else {}
                result = StepRun(step_id, str(step.get("name", "")), None, outputs=outputs)
            elif failed:
                continue
            else:
                result = self._run_step(step_id, step, context)
                failed = result.returncode != 0
            context.update({f"steps.{step_id}.outputs.{k}": v for k, v in result.outputs.items()})
            runs.append(result)
        outputs = {
            name: evaluate(str(spec["value"]), context)
            for name, spec in (action.get("outputs") or {}).items()
        }
        return ActionRun(runs, outputs)

    def _run_step(self, step_id: str, step: Mapping[str, Any], context: dict[str, str]) -> StepRun:
        assert step.get("shell") == "bash", f"step {step_id} must say `shell: bash`"
        assert "if" not in step, "this runner does not evaluate `if:` on run steps"
        env = {**self.job_env, **read_file_commands(self.env_file.read_text())}
        added_path = [line for line in self.path_file.read_text().splitlines() if line]
        if added_path:
            env["PATH"] = os.pathsep.join([*reversed(added_path), env.get("PATH", "")])
        env.update({k: evaluate(str(v), context) for k, v in (step.get("env") or {}).items()})
        self._outputs += 1
        output_file = self.files / f"output-{self._outputs}-{step_id}"
        output_file.touch()
        env["GITHUB_OUTPUT"] = str(output_file)
        script = self.files / f"script-{self._outputs}-{step_id}.sh"
        script.write_text(str(step["run"]), encoding="utf-8")
        started = time.monotonic()
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
            check=False,
        )
        return StepRun(
            step_id,
            str(step.get("name", "")),
            completed.returncode,
            completed.stdout,
            completed.stderr,
            read_file_commands(output_file.read_text(encoding="utf-8")),
            time.monotonic() - started,
            env,
        )


def evaluate(template: str, context: Mapping[str, str]) -> str:
    """`template` with each `${{ property }}` replaced; a missing step output is empty,
    as on the runner; any other expression raises."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if not _PROPERTY.fullmatch(expression):
            raise ValueError(f"expression not supported by the fake runner: {expression!r}")
        if expression in context:
            return context[expression]
        if expression.startswith("steps."):
            return ""
        raise KeyError(f"unknown context value {expression!r}")

    return EXPRESSION.sub(value, template)
