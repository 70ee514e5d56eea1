"""The `codex` agent kind (see `adapter.py`)."""

from copilot_driver.adapters.codex.adapter import KIND, CodexAdapter, CodexSession
from copilot_driver.adapters.codex.options import BLOCK, DEFAULT_COMMAND, CodexOptions
from copilot_driver.adapters.core.registry import AdapterSpec, register_adapter

register_adapter(
    AdapterSpec(
        kind=KIND,
        factory=CodexAdapter,
        requires_command=True,
        default_command=DEFAULT_COMMAND,
        options_block=BLOCK,
        validate_options=CodexOptions.from_mapping,
    )
)

__all__ = ["CodexAdapter", "CodexOptions", "CodexSession"]
