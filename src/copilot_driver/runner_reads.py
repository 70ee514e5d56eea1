"""Whether the GitHub Actions runner may read what is written to a stream.

Under Actions the runner reads a step's stdout and stderr for workflow
commands; a stream redirected to a regular file (`>> "$GITHUB_STEP_SUMMARY"`,
`> answer.txt`) reaches no runner, so text written there needs no
stop-commands wrapping (`inert_text.inert`). A pipe may be the runner's or a
command substitution's (`answer=$(...)`): both count as read.
"""

from __future__ import annotations

import io
import os
import stat
from typing import IO


def runner_may_read(stream: IO[str], *, in_actions: bool) -> bool:
    """`in_actions` (GITHUB_ACTIONS=true), unless `stream` is a regular file."""
    if not in_actions:
        return False
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return True  # not a file descriptor (a test's buffer): assume the runner's
    return not stat.S_ISREG(mode)
