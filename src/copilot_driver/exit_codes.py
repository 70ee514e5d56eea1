"""Every exit status the package's commands document, in one place: one meaning per code.

The driver, the harness and the adapters' command line use the same code for the same
meaning, and no code for two (`MEANINGS`); docs/exit-status.md and docs/adapters.md
list them, and a test checks their tables against `ExitCode` and `USED_BY`.
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
    START_FAILED = 4
    """The agent's runtime could not be started: the harness's Copilot CLI sidecar, an
    adapter's agent (the workspace, the binary, the credential)."""
    SIDECAR_DIED = 5
    """The harness's sidecar died while the driver was running."""
    TOOL_CALL_BUDGET = 6
    """The model kept calling tools past the tool contract's budget (maxToolCalls) and the
    driver stopped the session (a call past the budget is otherwise only denied)."""
    SEND_TIMEOUT = 124
    """No completion within the time allowed (the `timeout(1)` convention)."""


class AdapterExitCode(IntEnum):
    """`python -m copilot_driver.adapters run`: the codes of its meanings."""

    OK = ExitCode.OK
    TURN_FAILED = ExitCode.FAILURE
    USAGE = ExitCode.CONFIG
    START_FAILED = ExitCode.START_FAILED
    TIMEOUT = ExitCode.SEND_TIMEOUT


USED_BY: dict[str, frozenset[ExitCode]] = {
    "driver": frozenset(
        {
            ExitCode.OK,
            ExitCode.FAILURE,
            ExitCode.CONFIG,
            ExitCode.TOOL_DENIALS,
            ExitCode.TOOL_CALL_BUDGET,
            ExitCode.SEND_TIMEOUT,
        }
    ),
    "harness": frozenset({ExitCode.CONFIG, ExitCode.START_FAILED, ExitCode.SIDECAR_DIED}),
    "adapters": frozenset(ExitCode(code) for code in AdapterExitCode),
}
"""Which codes each command gives of its own (all of them also 128+N for a signal; the
harness also passes on the driver's)."""


def for_signal(signum: int) -> int:
    """128 + N: the shell's convention for a run ended by signal N."""
    return 128 + signum


def from_returncode(returncode: int) -> int:
    """A child's status as a shell reports it: `subprocess`'s -N (killed by N) is 128 + N."""
    return for_signal(-returncode) if returncode < 0 else returncode
