"""Where a session's agent runs, checked before anything is spawned.

`validate_workspace` is the workspace check every adapter runs;
`place_agent` adds, for an agent that is a command, the binary on the
agent environment's PATH, or with SSH hosts the local `ssh` and the
session's host (round robin).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import AdapterConfig
from copilot_driver.adapters.core.ssh import find_ssh
from copilot_driver.vocabulary import AdapterErrorKind


def validate_workspace(workspace: str | Path, *, remote: bool = False) -> Path:
    """An absolute path to an existing directory (remote: absolute only, as it
    lives on the SSH host and cannot be checked from here)."""
    text = str(workspace)
    if not text.strip():
        raise AgentError(AdapterErrorKind.INVALID_WORKSPACE_CWD, "the workspace path is empty")
    if "\x00" in text:
        raise AgentError(
            AdapterErrorKind.INVALID_WORKSPACE_CWD, "the workspace path contains a NUL byte"
        )
    path = Path(text)
    if not path.is_absolute():
        raise AgentError(
            AdapterErrorKind.INVALID_WORKSPACE_CWD,
            f"the workspace path must be absolute, got {text!r}",
        )
    if remote:
        return path
    if not path.exists():
        raise AgentError(
            AdapterErrorKind.INVALID_WORKSPACE_CWD, f"the workspace {text!r} does not exist"
        )
    if not path.is_dir():
        raise AgentError(
            AdapterErrorKind.INVALID_WORKSPACE_CWD, f"the workspace {text!r} is not a directory"
        )
    return path


@dataclass(frozen=True)
class Placement:
    workspace: Path
    environment: dict[str, str]
    """The agent's environment (a fresh copy)."""
    binary: str
    """The agent binary found on PATH, or the local `ssh` when `ssh_host` is set."""
    ssh_host: str | None = None


def place_agent(
    config: AdapterConfig, workspace: str | Path, command: str, *, agent: str, package: str
) -> Placement:
    """The checked workspace and the binary to run; `agent_not_found` naming
    `agent` and the `package` that installs it when `command` is not on PATH."""
    ssh = config.ssh
    path = validate_workspace(workspace, remote=ssh is not None)
    env = config.agent_environment()
    if ssh is not None:
        ssh_binary = find_ssh(env)
        return Placement(path, env, ssh_binary, ssh.pick_host())
    binary = shutil.which(command, path=env.get("PATH"))
    if binary is None:
        raise AgentError(
            AdapterErrorKind.AGENT_NOT_FOUND,
            f"the {agent} {command!r} was not found on PATH "
            f"(install {package}, or set agent.command to its path)",
        )
    return Placement(path, env, binary)
