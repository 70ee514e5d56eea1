"""Agent adapters: drive agent CLIs as subprocesses and normalise what they emit.

    adapter = get_adapter("copilot-cli")
    session = await adapter.start_session("/abs/workspace")
    result = await adapter.run_turn(session, "fix the tests", on_event=print)
    await adapter.stop_session(session)

`TurnRunner` adds the orchestration limits (turns, turn timeout, stall
detection) on top of any adapter; `load_workflow` reads them, with the
adapter's own options, from a WORKFLOW.md front matter.
"""

from copilot_driver.adapters.core.agent_events import AgentEvent, EventType, TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.registry import (
    adapter_kinds,
    adapter_spec,
    get_adapter,
    preflight,
    register_adapter,
)
from copilot_driver.adapters.core.runner import RunnerLimits, TurnRunner
from copilot_driver.adapters.core.session import (
    Adapter,
    AdapterConfig,
    EventCallback,
    ExitReason,
    Session,
    TurnResult,
)
from copilot_driver.adapters.core.spec import AdapterSpec
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.adapters.core.workflow import Workflow, load_workflow
from copilot_driver.vocabulary import AdapterErrorKind

__all__ = [
    "Adapter",
    "AdapterConfig",
    "AdapterErrorKind",
    "AdapterSpec",
    "AgentError",
    "AgentEvent",
    "EventCallback",
    "EventType",
    "ExitReason",
    "RunnerLimits",
    "Session",
    "SshSettings",
    "TokenUsage",
    "TurnResult",
    "TurnRunner",
    "Workflow",
    "adapter_kinds",
    "adapter_spec",
    "get_adapter",
    "load_workflow",
    "preflight",
    "register_adapter",
]
