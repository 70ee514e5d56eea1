"""Reading an agent's settings from a WORKFLOW.md front matter.

    ---
    agent:
      kind: copilot-cli
      max_turns: 5
    copilot-cli:
      model: gpt-4.1
    worker:
      ssh_hosts: [build-1, build-2]
    ---
    (the prompt template follows; it is not read here)

The blocks read here (`agent`, `worker`, and the chosen adapter's own
block) are strict: an unknown or mistyped field is an error naming it.
Other top-level blocks belong to other parts of an orchestrator and are
left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from copilot_driver.adapters.core.options import (
    OptionsError,
    options_from_mapping,
    problems_of,
    raise_problems,
)
from copilot_driver.adapters.core.registry import adapter_kinds, adapter_spec
from copilot_driver.adapters.core.runner import (
    DEFAULT_MAX_TURNS,
    DEFAULT_STALL_TIMEOUT_MS,
    DEFAULT_TURN_TIMEOUT_MS,
    RunnerLimits,
)
from copilot_driver.adapters.core.session import DEFAULT_READ_TIMEOUT_MS, AdapterConfig
from copilot_driver.adapters.core.spec import AdapterSpec
from copilot_driver.adapters.core.ssh import HostKeyChecking, SshSettings


class WorkflowError(OptionsError):
    """The WORKFLOW.md cannot be used; each problem says where and why."""

    def __init__(self, *problems: str) -> None:
        super().__init__(problems)


@dataclass(frozen=True)
class AgentBlock:
    """The `agent` block: the process settings and the orchestration limits."""

    kind: str | None = None
    command: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    max_sessions: int = 0
    max_concurrent_agents: int = 10
    turn_timeout_ms: int = DEFAULT_TURN_TIMEOUT_MS
    read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS
    stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS
    max_retry_backoff_ms: int = 300_000

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be 1 or more"
            for name in ("max_turns", "max_concurrent_agents", "turn_timeout_ms", "read_timeout_ms")
            if getattr(self, name) < 1
        ]
        problems += [
            f"{name} must be 0 or more"
            for name in ("max_sessions", "max_retry_backoff_ms")
            if getattr(self, name) < 0
        ]
        if self.command is not None and not self.command.strip():
            problems.append("command must not be empty")
        raise_problems(problems)


@dataclass(frozen=True)
class WorkerBlock:
    ssh_hosts: tuple[str, ...] = ()
    ssh_strict_host_key_checking: HostKeyChecking = "accept-new"

    def __post_init__(self) -> None:
        raise_problems(
            f"ssh_hosts: {host!r} is not a host name"
            for host in self.ssh_hosts
            if not host.isprintable() or not host.strip() or host.startswith("-") or " " in host
        )


@dataclass(frozen=True)
class Workflow:
    kind: str
    agent: AgentBlock
    worker: WorkerBlock
    options: Mapping[str, Any]
    """The adapter's own block, already validated by the adapter."""
    source: str = "WORKFLOW.md"
    """Where the settings were read (the file, or `--kind`), for messages."""

    @property
    def limits(self) -> RunnerLimits:
        return RunnerLimits(
            max_turns=self.agent.max_turns,
            turn_timeout_ms=self.agent.turn_timeout_ms,
            stall_timeout_ms=self.agent.stall_timeout_ms,
        )

    def adapter_config(self, environment: Mapping[str, str] | None = None) -> AdapterConfig:
        ssh = None
        if self.worker.ssh_hosts:
            ssh = SshSettings(self.worker.ssh_hosts, self.worker.ssh_strict_host_key_checking)
        return AdapterConfig(
            command=self.agent.command,
            options=self.options,
            ssh=ssh,
            read_timeout_ms=self.agent.read_timeout_ms,
            environment=environment,
        )


def front_matter(text: str, *, source: str = "WORKFLOW.md") -> dict[str, Any]:
    """The YAML mapping between the leading `---` lines (empty when there is none)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        raise WorkflowError(
            f"{source}: the front matter starting at line 1 has no closing ---"
        ) from None
    import yaml  # the adapters' extra: imported where it is used (see adapters/_extra.py)

    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise WorkflowError(f"{source}: the front matter is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WorkflowError(f"{source}: the front matter must be a mapping of blocks")
    return data


def parse_workflow(
    data: Mapping[str, Any], *, kind: str | None = None, source: str = "WORKFLOW.md"
) -> Workflow:
    """Validate the blocks this kind reads; `kind` (e.g. from --kind) must agree with
    agent.kind. A `WorkflowError` lists every problem of every block at once."""
    problems: list[str] = []
    agent = _block(AgentBlock, data, "agent", problems)
    worker = _block(WorkerBlock, data, "worker", problems)
    declared = agent.kind if agent is not None else _declared_kind(data)
    spec = None
    if kind and declared and kind != declared:
        problems.append(f"agent.kind is {declared!r} but {kind!r} was asked for")
    elif not (kind or declared):
        problems.append(
            f"agent.kind: no agent kind given (set agent.kind, or pass --kind: "
            f"{', '.join(adapter_kinds())})"
        )
    else:
        try:
            spec = adapter_spec(kind or declared or "")
        except ValueError as exc:
            problems.append(str(exc))
    options: Mapping[str, Any] = {}
    if spec is not None:
        options = _adapter_block(spec, data, problems)
        if worker is not None and worker.ssh_hosts and not spec.supports_ssh:
            problems.append(
                f"worker.ssh_hosts: the {spec.kind} agent runs in this process on local "
                "files, never on an SSH host; remove worker.ssh_hosts"
            )
    if problems or agent is None or worker is None or spec is None:
        raise WorkflowError(*(f"{source}: {problem}" for problem in problems))
    return Workflow(spec.kind, agent, worker, options, source)


BlockT = TypeVar("BlockT")


def _block(
    cls: type[BlockT], data: Mapping[str, Any], name: str, problems: list[str]
) -> BlockT | None:
    try:
        return options_from_mapping(cls, data.get(name), block=name)
    except ValueError as exc:
        problems += problems_of(exc)
        return None


def _declared_kind(data: Mapping[str, Any]) -> str | None:
    """agent.kind of a block that has other problems, when it is a string."""
    block = data.get("agent")
    kind = block.get("kind") if isinstance(block, Mapping) else None
    return kind if isinstance(kind, str) and kind else None


def _adapter_block(
    spec: AdapterSpec, data: Mapping[str, Any], problems: list[str]
) -> Mapping[str, Any]:
    options = data.get(spec.options_block) if spec.options_block else None
    if options is None:
        options = {}
    if spec.validate_options is not None:
        try:
            spec.validate_options(options)
        except ValueError as exc:
            problems += problems_of(exc)
    return options if isinstance(options, Mapping) else {}


def read_front_matter(path: str | Path) -> dict[str, Any]:
    """The front matter of the WORKFLOW.md at `path`, not yet validated."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowError(f"{path}: cannot read the workflow file: {exc}") from None
    return front_matter(text, source=str(path))


def load_workflow(path: str | Path, *, kind: str | None = None) -> Workflow:
    return parse_workflow(read_front_matter(path), kind=kind, source=str(path))
