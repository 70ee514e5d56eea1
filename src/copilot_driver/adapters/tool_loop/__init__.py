"""The `tool-loop` agent kind: an agentic tool-calling loop over any
OpenAI-compatible chat-completions endpoint (see `adapter.py`).

    tool-loop:
      base_url: http://127.0.0.1:8080/v1
      model: gpt-4o
      api_key_env: OPENAI_API_KEY

The model gets four tools (`read_file`, `write_file`, `edit_file`,
`list_directory`) confined to the workspace; the loop runs until it answers
without a tool call, or `max_rounds` model calls.
"""

from copilot_driver.adapters.core.spec import AdapterSpec
from copilot_driver.adapters.tool_loop.adapter import ToolLoopAdapter, ToolLoopSession
from copilot_driver.adapters.tool_loop.options import ToolLoopOptions

SPEC = AdapterSpec.of(ToolLoopAdapter)

__all__ = ["SPEC", "ToolLoopAdapter", "ToolLoopOptions", "ToolLoopSession"]
