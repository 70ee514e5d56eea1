"""Test support for drivers and policies: a scripted model and a real sidecar.

Public and documented (docs/testing.md): users test their own permission
policies with it. Never imported by the driver's runtime code paths.

    from copilot_driver.testing import ScriptedModelServer, Script, Rule, Reply, ToolCall
    from copilot_driver.testing import start_test_sidecar, driver_environment

pytest users can load the fixtures with
`pytest_plugins = ["copilot_driver.testing.fixtures"]`.
"""

from copilot_driver.testing.environment import (
    TestSidecar,
    driver_environment,
    harness_environment,
    prompt_mode_environment,
    sidecar_environment,
    start_test_sidecar,
)
from copilot_driver.testing.github_api import FakeGitHubCopilot, start_subscription_sidecar
from copilot_driver.testing.model_server import RecordedRequest, ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

__all__ = [
    "FakeGitHubCopilot",
    "RecordedRequest",
    "Reply",
    "Rule",
    "Script",
    "ScriptedModelServer",
    "TestSidecar",
    "ToolCall",
    "driver_environment",
    "harness_environment",
    "prompt_mode_environment",
    "sidecar_environment",
    "start_subscription_sidecar",
    "start_test_sidecar",
]
