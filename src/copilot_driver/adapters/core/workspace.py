"""The workspace check every adapter runs before a session starts."""

from __future__ import annotations

from pathlib import Path

from copilot_driver.adapters.core.errors import AgentError, ErrorKind


def validate_workspace(workspace: str | Path, *, remote: bool = False) -> Path:
    """An absolute path to an existing directory (remote: absolute only, as it
    lives on the SSH host and cannot be checked from here)."""
    text = str(workspace)
    if not text.strip():
        raise AgentError(ErrorKind.INVALID_WORKSPACE_CWD, "the workspace path is empty")
    if "\x00" in text:
        raise AgentError(ErrorKind.INVALID_WORKSPACE_CWD, "the workspace path contains a NUL byte")
    path = Path(text)
    if not path.is_absolute():
        raise AgentError(
            ErrorKind.INVALID_WORKSPACE_CWD, f"the workspace path must be absolute, got {text!r}"
        )
    if remote:
        return path
    if not path.exists():
        raise AgentError(ErrorKind.INVALID_WORKSPACE_CWD, f"the workspace {text!r} does not exist")
    if not path.is_dir():
        raise AgentError(
            ErrorKind.INVALID_WORKSPACE_CWD, f"the workspace {text!r} is not a directory"
        )
    return path
