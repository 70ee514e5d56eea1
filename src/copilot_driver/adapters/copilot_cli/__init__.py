"""The `copilot-cli` agent kind (see `adapter.py`)."""

from copilot_driver.adapters.copilot_cli.adapter import KIND, CopilotCliAdapter, CopilotCliSession
from copilot_driver.adapters.copilot_cli.options import (
    BLOCK,
    DEFAULT_COMMAND,
    CopilotCliOptions,
    build_args,
)
from copilot_driver.adapters.core.registry import AdapterSpec, register_adapter

register_adapter(
    AdapterSpec(
        kind=KIND,
        factory=CopilotCliAdapter,
        requires_command=True,
        default_command=DEFAULT_COMMAND,
        options_block=BLOCK,
        validate_options=CopilotCliOptions.from_mapping,
    )
)

__all__ = ["CopilotCliAdapter", "CopilotCliOptions", "CopilotCliSession", "build_args"]
