"""The `copilot-cli` agent kind (see `adapter.py`)."""

from copilot_driver.adapters.copilot_cli.adapter import CopilotCliAdapter, CopilotCliSession
from copilot_driver.adapters.copilot_cli.options import CopilotCliOptions, build_args
from copilot_driver.adapters.core.spec import AdapterSpec

SPEC = AdapterSpec.of(CopilotCliAdapter)

__all__ = ["SPEC", "CopilotCliAdapter", "CopilotCliOptions", "CopilotCliSession", "build_args"]
