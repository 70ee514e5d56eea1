"""Variables that look like a misspelt one the driver reads. Pure.

A misspelt policy variable (`GH_AW_COPILOT_SDK_PERMISSION`) is the usual reason a
policy someone wrote is not in force: the driver then sees no policy and approves
every request. Both the driver (at start) and the harness (before the run) name
each near miss with the variable meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from copilot_driver.env import DRIVER_VARIABLES

_NEAR_MISS_CUTOFF = 0.85
OTHER_READERS_VARIABLES = frozenset({"GH_AW_MAX_TOOL_CALLS"})
"""Variables close to one of ours that another program reads (gh-aw's pi engine's
tool-call cap): set on purpose, never a misspelling."""


def near_misses(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """`(set, meant)` for each variable in `env` that is not one the driver reads but
    a near miss of one (`GH_AW_COPILOT_SDK_PERMISSION` for `..._PERMISSIONS`). Only
    names are looked at, never values."""
    known = [variable.name for variable in DRIVER_VARIABLES]
    found = []
    for name in sorted(env):
        if name in known or name in OTHER_READERS_VARIABLES:
            continue
        if not name.upper().startswith(("GH_AW_", "COPILOT_")):
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
