"""Adapters by kind, and the preflight that runs before any session.

Adapter modules register themselves on import; `get_adapter` imports the
built-in ones lazily, so asking for one kind never loads the others.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from copilot_driver.adapters.core.errors import AgentError, ErrorKind
from copilot_driver.adapters.core.session import Adapter, AdapterConfig
from copilot_driver.adapters.core.ssh import find_ssh


@dataclass(frozen=True)
class AdapterSpec:
    kind: str
    factory: Callable[[AdapterConfig], Adapter]
    requires_command: bool
    default_command: str | None = None
    options_block: str | None = None
    """The WORKFLOW.md block holding this adapter's own options, if any."""
    validate_options: Callable[[Mapping[str, Any]], object] | None = None
    """Raises ValueError naming the bad field; used by the workflow loader."""


_BUILT_IN = {
    "copilot-cli": "copilot_driver.adapters.copilot_cli",
    "copilot-transcript": "copilot_driver.adapters.copilot_transcript",
    "codex": "copilot_driver.adapters.codex",
    "tool-loop": "copilot_driver.adapters.tool_loop",
}
_REGISTRY: dict[str, AdapterSpec] = {}


def register_adapter(spec: AdapterSpec) -> None:
    _REGISTRY[spec.kind] = spec


def adapter_kinds() -> list[str]:
    return sorted(set(_BUILT_IN) | set(_REGISTRY))


def adapter_spec(kind: str) -> AdapterSpec:
    if kind not in _REGISTRY and kind in _BUILT_IN:
        importlib.import_module(_BUILT_IN[kind])
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise ValueError(
            f"unknown agent kind {kind!r}; known kinds: {', '.join(adapter_kinds())}"
        ) from None


def get_adapter(kind: str, config: AdapterConfig | None = None) -> Adapter:
    spec = adapter_spec(kind)
    return spec.factory(config or AdapterConfig())


def preflight(kind: str, config: AdapterConfig | None = None) -> None:
    """Fail fast, before any session, when the agent binary cannot be found.

    In SSH mode the agent runs remotely, so the local `ssh` is what must exist.
    """
    spec = adapter_spec(kind)
    if not spec.requires_command:
        return
    config = config or AdapterConfig()
    env = config.agent_environment()
    if config.ssh is not None:
        find_ssh(env)
        return
    command = (config.command or spec.default_command or "").split(" ", 1)[0]
    if not command or shutil.which(command, path=env.get("PATH")) is None:
        raise AgentError(
            ErrorKind.AGENT_NOT_FOUND,
            f"{kind}: agent command {command!r} not found on PATH (set agent.command to its path)",
        )
