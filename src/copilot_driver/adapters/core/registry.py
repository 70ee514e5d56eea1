"""Adapters by kind, and the preflight that runs before any session.

`BUILT_IN` lists every built-in kind with the package whose `SPEC`
describes it; a package is imported the first time its kind is asked for,
so asking for one kind never loads the others. `register_adapter` adds a
kind from outside this package.
"""

from __future__ import annotations

import importlib
import shutil

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.session import Adapter, AdapterConfig
from copilot_driver.adapters.core.spec import AdapterSpec
from copilot_driver.adapters.core.ssh import find_ssh
from copilot_driver.vocabulary import AdapterErrorKind

BUILT_IN: dict[str, str] = {
    "copilot-cli": "copilot_driver.adapters.copilot_cli",
    "copilot-transcript": "copilot_driver.adapters.copilot_transcript",
    "codex": "copilot_driver.adapters.codex",
    "tool-loop": "copilot_driver.adapters.tool_loop",
}
_REGISTERED: dict[str, AdapterSpec] = {}


def register_adapter(spec: AdapterSpec) -> None:
    """Add (or replace) a kind; it takes precedence over a built-in one."""
    _REGISTERED[spec.kind] = spec


def adapter_kinds() -> list[str]:
    return sorted(set(BUILT_IN) | set(_REGISTERED))


def adapter_spec(kind: str) -> AdapterSpec:
    if kind in _REGISTERED:
        return _REGISTERED[kind]
    if kind not in BUILT_IN:
        raise ValueError(f"unknown agent kind {kind!r}; known kinds: {', '.join(adapter_kinds())}")
    spec = importlib.import_module(BUILT_IN[kind]).SPEC
    if not isinstance(spec, AdapterSpec) or spec.kind != kind:
        raise TypeError(f"{BUILT_IN[kind]}.SPEC is not the spec of {kind!r}: {spec!r}")
    return spec


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
            AdapterErrorKind.AGENT_NOT_FOUND,
            f"{kind}: agent command {command!r} not found on PATH (set agent.command to its path)",
        )
