"""The `codex` agent kind (see `adapter.py`)."""

from copilot_driver.adapters.codex.adapter import CodexAdapter
from copilot_driver.adapters.codex.options import CodexOptions
from copilot_driver.adapters.codex.session import CodexSession
from copilot_driver.adapters.core.spec import AdapterSpec

SPEC = AdapterSpec.of(CodexAdapter)

__all__ = ["SPEC", "CodexAdapter", "CodexOptions", "CodexSession"]
