"""Child processes that never outlive the process that started them.

`die_with_parent` is a `preexec_fn`: on Linux it asks the kernel to SIGKILL
the child when its parent dies (PR_SET_PDEATHSIG), so even a harness killed
with SIGKILL leaves no sidecar or driver behind. The C function is looked up
before any fork, so the child runs one foreign call and nothing else.
"""

from __future__ import annotations

import ctypes
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _load_prctl()


def die_with_parent() -> None:
    """Runs in the child between fork and exec (see module docstring)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
