"""What the registry knows of an agent kind; each adapter package exports its `SPEC`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from copilot_driver.adapters.core.session import Adapter, AdapterConfig
from copilot_driver.adapters.core.turn import TurnAdapter


@dataclass(frozen=True)
class AdapterSpec:
    kind: str
    factory: Callable[[AdapterConfig], Adapter]
    requires_command: bool
    """True when the kind runs an agent command (preflight looks for it)."""
    default_command: str | None = None
    options_block: str | None = None
    """The WORKFLOW.md block holding this adapter's own options, if any."""
    validate_options: Callable[[Mapping[str, Any]], object] | None = None
    """Raises ValueError naming the bad field; used by the workflow loader."""
    supports_ssh: bool = True
    """False for a kind whose agent cannot run on an SSH host (the workflow loader
    refuses `worker.ssh_hosts` for it)."""

    @classmethod
    def of(cls, adapter: type[TurnAdapter[Any, Any]]) -> AdapterSpec:
        """The spec of an adapter class: its kind, its option block, its default
        command (a kind with one requires a command)."""
        return cls(
            kind=adapter.kind,
            factory=adapter,
            requires_command=adapter.default_command is not None,
            default_command=adapter.default_command,
            options_block=adapter.options_type.block,
            validate_options=adapter.options_type.from_mapping,
            supports_ssh=adapter.supports_ssh,
        )
