"""Before the run: will the driver approve every tool request? Pure.

The driver keeps the specification's behaviour: with no tool policy at all it
approves every request and says so in one `permissions.config` line. The
harness is where a person starts a run, so it says it out loud first (and as
a warning annotation under GitHub Actions), together with any variable that
looks like a misspelt one the driver reads (`GH_AW_COPILOT_SDK_PERMISSION`):
the usual reason a policy someone wrote is not there.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from copilot_driver.env import DRIVER_VARIABLES, PERMISSIONS, TOOL_CONFIG, value_of
from copilot_driver.permissions.inputs import POLICY_VARIABLES, resolve_permissions

NO_POLICY_TITLE = "No tool policy: every tool request is approved"
_NEAR_MISS_CUTOFF = 0.85


def near_misses(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """`(set, meant)` for each variable in `env` that is not one the driver reads but
    a near miss of one (`GH_AW_COPILOT_SDK_PERMISSION` for `..._PERMISSIONS`)."""
    known = [variable.name for variable in DRIVER_VARIABLES]
    found = []
    for name in sorted(env):
        if name in known or not name.upper().startswith(("GH_AW_", "COPILOT_")):
            continue
        close = difflib.get_close_matches(name.upper(), known, n=1, cutoff=_NEAR_MISS_CUTOFF)
        if close:
            found.append((name, close[0]))
    return found


def misspelt_variables(env: Mapping[str, str]) -> list[str]:
    """One sentence per near miss of a variable the driver reads."""
    return [
        f"{name} is not a variable copilot-driver reads; did you mean {meant}?"
        for name, meant in near_misses(env)
    ]


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
