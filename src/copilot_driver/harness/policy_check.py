"""Before the run: will the driver approve every tool request? Pure.

The driver keeps the specification's behaviour: with no tool policy at all it
approves every request and says so in one `permissions.config` line. The
harness is where a person starts a run, so it says it out loud first (and as
a warning annotation under GitHub Actions), together with any variable that
looks like a misspelt one the driver reads (`GH_AW_COPILOT_SDK_PERMISSION`;
`near_misses`, which the driver shares): the usual reason a policy someone
wrote is not there.
"""

from __future__ import annotations

from collections.abc import Mapping

from copilot_driver.env import PERMISSIONS, TOOL_CONFIG, value_of
from copilot_driver.near_misses import misspelt_variables
from copilot_driver.permissions.inputs import POLICY_VARIABLES, resolve_permissions

__all__ = ["NO_POLICY_TITLE", "misspelt_variables", "unrestricted_policy"]

NO_POLICY_TITLE = "No tool policy: every tool request is approved"


def unrestricted_policy(env: Mapping[str, str]) -> str | None:
    """The warning when the driver will approve every tool request; None otherwise (a
    policy is set, or an input is broken, which the driver reports itself)."""
    if value_of(env, TOOL_CONFIG) is not None:
        return None
    try:
        config = resolve_permissions(env)
    except ValueError:
        return None
    if config.mode != "unrestricted" or config.denied_tools:
        return None
    names = ", ".join(variable.name for variable in POLICY_VARIABLES)
    return (
        f"no tool policy ({names}: none sets an allow rule), so the driver approves every "
        "tool request the model makes, inside the sandbox; allow only what the task needs, "
        f'e.g. {PERMISSIONS.name}=\'{{"allowedTools": ["read", "shell(git log:*)"]}}\''
    )
