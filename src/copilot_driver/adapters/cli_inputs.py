"""What `python -m copilot_driver.adapters run` is given, read and checked at once.

Every problem that can be found without starting anything is found here, before
the agent starts, and all of them together: the arguments, the prompt, the
WORKFLOW.md and what its options name (an `mcp_config` file, say), the
workspace and the agent's binary. A problem the agent would report only once
started would cost a spawned process and a failed turn.

Usage problems (the arguments, the prompt, the WORKFLOW.md) make exit status 2;
a workspace that is not there or a binary that is not on PATH is the documented
"the session could not start", 4, when it is the only kind of problem found.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.registry import (
    adapter_kinds,
    adapter_spec,
    get_adapter,
    preflight,
)
from copilot_driver.adapters.core.session import Adapter, AdapterConfig
from copilot_driver.adapters.core.turn import TurnAdapter
from copilot_driver.adapters.core.workflow import (
    Workflow,
    WorkflowError,
    parse_workflow,
    read_front_matter,
)
from copilot_driver.adapters.core.workspace import validate_workspace
from copilot_driver.exit_codes import AdapterExitCode

KIND_SOURCE = "--kind"
"""The source of the settings when no --workflow is given."""
RESUME_FIX = "give the session_id an earlier run printed on its events, or leave --resume out"


@dataclass(frozen=True)
class Inputs:
    """Everything a run needs, checked."""

    workflow: Workflow
    adapter: Adapter
    workspace: Path
    """Absolute: a relative --workspace is resolved against the current directory."""
    prompts: list[str]
    resume: str | None


@dataclass
class Problems:
    usage: list[str] = field(default_factory=list)
    """Wrong arguments, prompt or WORKFLOW.md."""
    start: list[str] = field(default_factory=list)
    """What stops the session and is found without starting it: the workspace, the binary."""

    def __bool__(self) -> bool:
        return bool(self.usage or self.start)

    @property
    def exit_code(self) -> AdapterExitCode:
        return AdapterExitCode.USAGE if self.usage else AdapterExitCode.START_FAILED

    def lines(self) -> list[str]:
        return [*self.usage, *self.start]


def read_inputs(args: argparse.Namespace, cwd: Path) -> Inputs | Problems:
    """The checked inputs, or every problem found."""
    problems = Problems()
    settings = _settings(args, problems.usage)
    workflow = settings.workflow
    prompts = _prompts(args, problems.usage)
    resume = _resume(args.resume, problems.usage)
    workspace = _workspace(args.workspace, cwd, settings.remote, problems)
    adapter = _adapter(settings, args.kind)
    if isinstance(adapter, TurnAdapter):
        local = None if settings.remote is not False else workspace
        found = adapter.option_problems(local)
        problems.usage += [f"{settings.source}: {problem}" for problem in found]
    if workflow is not None:
        try:
            preflight(workflow.kind, workflow.adapter_config())
        except AgentError as exc:
            problems.start.append(f"the session could not start: {exc}")
        limit = workflow.agent.max_turns
        if len(prompts) > limit:
            where = "the default" if settings.source == KIND_SOURCE else settings.source
            problems.usage.append(
                f"{len(prompts)} prompts, one turn each, but agent.max_turns is {limit} "
                f"({where}); give at most {limit} --prompt, or raise agent.max_turns"
            )
    if problems or workflow is None or adapter is None or workspace is None:
        return problems
    return Inputs(workflow, adapter, workspace, prompts, resume)


@dataclass(frozen=True)
class _Settings:
    """The agent's settings as far as they could be read."""

    workflow: Workflow | None
    """None when the settings have a problem."""
    data: Mapping[str, Any] | None
    """The front matter (None: unreadable), `{}` without a --workflow."""
    source: str
    remote: bool | None
    """Whether the agent runs on an SSH host; None: cannot tell."""


def _settings(args: argparse.Namespace, problems: list[str]) -> _Settings:
    if args.workflow is None:
        if not args.kind:
            problems.append(
                f"no agent kind: give --kind ({', '.join(adapter_kinds())}) "
                "or a --workflow whose agent block sets kind"
            )
            return _Settings(None, None, KIND_SOURCE, remote=False)
        data: Mapping[str, Any] = {}
        source = KIND_SOURCE
    else:
        source = args.workflow
        tilde = _tilde(source, "--workflow")
        if tilde:
            problems.append(tilde)
            return _Settings(None, None, source, remote=None)
        try:
            data = read_front_matter(source)
        except WorkflowError as exc:
            problems += exc.problems
            return _Settings(None, None, source, remote=None)
    try:
        workflow = parse_workflow(data, kind=args.kind, source=source)
    except WorkflowError as exc:
        problems += exc.problems
        return _Settings(None, data, source, _names_ssh_hosts(data))
    return _Settings(workflow, data, source, remote=bool(workflow.worker.ssh_hosts))


def _adapter(settings: _Settings, kind: str | None) -> Adapter | None:
    """The workflow's adapter; when only other blocks are wrong, one built from its
    own block alone, so that what its options name is checked all the same."""
    if settings.workflow is not None:
        return get_adapter(settings.workflow.kind, settings.workflow.adapter_config())
    if settings.data is None:
        return None
    agent = settings.data.get("agent")
    declared = agent.get("kind") if isinstance(agent, Mapping) else None
    chosen = kind or declared
    try:
        spec = adapter_spec(chosen) if isinstance(chosen, str) else None
        if spec is None or spec.options_block is None:
            return None
        options = settings.data.get(spec.options_block) or {}
        return spec.factory(AdapterConfig(options=options))
    except (ValueError, TypeError, AgentError):
        return None  # already reported with the workflow's problems


def _names_ssh_hosts(data: Mapping[str, Any]) -> bool | None:
    """Whether a workflow that has problems asks for SSH hosts (None: cannot tell)."""
    worker = data.get("worker")
    if worker is None:
        return False
    if not isinstance(worker, Mapping):
        return None
    hosts = worker.get("ssh_hosts")
    if hosts is None:
        return False
    return bool(hosts) if isinstance(hosts, list) else None


def _prompts(args: argparse.Namespace, problems: list[str]) -> list[str]:
    if args.prompt_file is None:
        given = [(prompt, f"--prompt number {n}") for n, prompt in enumerate(args.prompt, 1)]
        if len(given) == 1:
            given = [(args.prompt[0], "--prompt")]
        fix = "give it the task to do"
    else:
        path = args.prompt_file
        tilde = _tilde(path, "--prompt-file")
        if tilde:
            problems.append(tilde)
            return []
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            problems.append(f"{path}: the prompt file is not UTF-8 text; save it as UTF-8")
            return []
        except OSError as exc:
            problems.append(
                f"{path}: cannot read the prompt file ({exc.strerror or exc}); "
                "give --prompt-file a readable file, or the prompt itself with --prompt"
            )
            return []
        given = [(text, f"the prompt file {path}")]
        fix = "write the task into it"
    for text, where in given:
        if not text.strip():
            problems.append(f"the prompt is empty ({where}); {fix}")
        elif "\x00" in text:
            problems.append(
                f"the prompt contains a NUL byte, which no agent command line can carry "
                f"({where}); remove it"
            )
    return [text for text, _ in given]


def _resume(value: str | None, problems: list[str]) -> str | None:
    if value is None:
        return None
    if not value.strip():
        problems.append(f"--resume is empty; {RESUME_FIX}")
    elif value.startswith("-") or any(ch.isspace() or not ch.isprintable() for ch in value):
        problems.append(f"--resume {value!r} is not a session id; {RESUME_FIX}")
    return value


def _workspace(text: str, cwd: Path, remote: bool | None, problems: Problems) -> Path | None:
    """The workspace, absolute and checked; None with its problem recorded (or, when
    the workflow cannot tell where the agent runs, unchecked)."""
    if not text.strip():
        problems.usage.append(
            "--workspace is empty; give the directory the agent works in "
            '(--workspace "$PWD" for the current one)'
        )
        return None
    tilde = _tilde(text, "--workspace")
    if tilde:
        problems.usage.append(tilde)
        return None
    path = Path(text)
    if remote is None:
        return None
    if not path.is_absolute():
        if remote:
            problems.usage.append(
                f"--workspace {text!r} is relative, but with worker.ssh_hosts the workspace "
                "is on the SSH host; give its absolute path there"
            )
            return None
        path = cwd / path
    try:
        return validate_workspace(path, remote=remote)
    except AgentError as exc:
        problems.start.append(
            f"the session could not start: {exc}; give --workspace an existing directory"
        )
        return None


def _tilde(value: str | Path, option: str) -> str | None:
    """A path starting with `~` that the shell left as it is (after `=`, or quoted)."""
    text = str(value)
    if not text.startswith("~") or Path(text).exists():
        return None
    return (
        f"{option} {text!r} starts with ~, which the shell expands only at the start of "
        f"an unquoted word (not after `=`); write {option} {text} or use $HOME"
    )
