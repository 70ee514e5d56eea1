"""How every command of the package says that it cannot run: one line on stderr,
`[COMMAND] error: WHAT IS WRONG; THE FIX`, and exit status 2 (`ExitCode.CONFIG`).

The driver's own line (`[copilot-sdk-driver] error: ...`) is gh-aw's driver's; the
others follow it, so a reader (and `logs.py`, which reads a driver's refusal back)
finds one form whichever command refused. Usage errors that argparse finds take the
same form through `CommandParser`.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, NoReturn

from copilot_driver.exit_codes import ExitCode
from copilot_driver.inert_text import inert_log

USAGE_EXIT = ExitCode.CONFIG


def error_line(command: str, message: str) -> str:
    """`[command] error: message`, on one line, inert for a terminal and the runner."""
    return inert_log(f"[{command}] error: {' '.join(message.split())}")


def refuse(command: str, message: str, stream: IO[str] | None = None) -> int:
    """Write the error line and return the usage status (2), for `return refuse(...)`."""
    (stream or sys.stderr).write(error_line(command, message) + "\n")
    return USAGE_EXIT


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are the package's one error line, pointing
    at `--help`, with exit status 2."""

    def __init__(self, *args: object, command: str | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.command = command or self.prog

    def error(self, message: str) -> NoReturn:
        self.exit(
            USAGE_EXIT,
            error_line(self.command, f"{message} (`{self.prog} --help` lists the options)") + "\n",
        )
