"""Variables that look like a misspelt one the driver reads."""

from __future__ import annotations

from copilot_driver.env import DRIVER_VARIABLES
from copilot_driver.near_misses import OTHER_READERS_VARIABLES, misspelt_variables, near_misses


def test_a_misspelt_policy_variable_names_the_one_meant() -> None:
    env = {"GH_AW_COPILOT_SDK_PERMISSION": "{}", "COPILOT_MODLE": "gpt-5", "PATH": "/bin"}
    assert near_misses(env) == [
        ("COPILOT_MODLE", "COPILOT_MODEL"),
        ("GH_AW_COPILOT_SDK_PERMISSION", "GH_AW_COPILOT_SDK_PERMISSIONS"),
    ]
    assert misspelt_variables(env)[1] == (
        "GH_AW_COPILOT_SDK_PERMISSION is not a variable copilot-driver reads; did you mean "
        "GH_AW_COPILOT_SDK_PERMISSIONS?"
    )


def test_the_driver_s_own_and_other_programs_variables_are_no_near_misses() -> None:
    env = {variable.name: "x" for variable in DRIVER_VARIABLES}
    env |= {name: "1" for name in OTHER_READERS_VARIABLES}
    env |= {"GH_AW_SAFE_OUTPUTS": "/tmp/x", "COPILOT_HOME": "/h", "MY_COPILOT_MODEL": "m"}
    assert near_misses(env) == []


def test_only_names_are_read() -> None:
    # A value that looks like a variable name changes nothing.
    assert near_misses({"UNRELATED": "GH_AW_COPILOT_SDK_PERMISSION"}) == []
