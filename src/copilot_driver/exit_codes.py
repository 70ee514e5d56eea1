"""Every exit status the package's commands document, in one place.

The driver, the harness and the adapters' command line share the codes their
meanings share (0, 1, 2, 124 and 128+N); the README's tables list them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1
    """Runtime failure: sidecar unreachable, token rejected, session error, a failed turn."""
    CONFIG = 2
    """Configuration or usage error, reported before anything is started."""
    TOOL_DENIALS = 3
    """The driver's tool-denials guard stopped the session (GH_AW_MAX_TOOL_DENIALS)."""
    SIDECAR_START_FAILED = 4
    """The harness could not start the Copilot CLI sidecar."""
    SIDECAR_DIED = 5
    """The harness's sidecar died while the driver was running."""
    TOOL_CALL_BUDGET = 6
    """The model kept calling tools past the tool contract's budget (maxToolCalls) and the
    driver stopped the session (a call past the budget is otherwise only denied)."""
    SEND_TIMEOUT = 124
    """No completion within the time allowed (the `timeout(1)` convention)."""


class AdapterExitCode(IntEnum):
    """`python -m copilot_driver.adapters run`: the shared codes plus its own 3."""

    OK = ExitCode.OK
    TURN_FAILED = ExitCode.FAILURE
    USAGE = ExitCode.CONFIG
    START_FAILED = 3
    """The agent could not be started (missing command, failed preflight)."""
    TIMEOUT = ExitCode.SEND_TIMEOUT


def for_signal(signum: int) -> int:
    """128 + N: the shell's convention for a run ended by signal N."""
    return 128 + signum


def from_returncode(returncode: int) -> int:
    """A child's status as a shell reports it: `subprocess`'s -N (killed by N) is 128 + N."""
    return for_signal(-returncode) if returncode < 0 else returncode
