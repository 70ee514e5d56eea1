"""The driver command under test, read and checked before any test runs.

A command that cannot start would fail every requirement with the same
traceback and earn a "not conforming" verdict it did not deserve: the kit
refuses it at start instead, as a usage error naming the fix.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

INTERPRETER = re.compile(r"(python|node|bash|sh|dash|ruby|perl|bun)[0-9.]*")
"""Programs whose first argument that is not an option may be the script they run."""
SCRIPT = re.compile(r".*(/.*|\.(py|js|cjs|mjs|ts|sh|rb|pl))")
"""What such an argument looks like when it names a file (not an option's value)."""
EXAMPLE = '--driver "node /path/driver.cjs"'


def driver_command_from(option: str | None) -> list[str]:
    """The command: `--driver`, else COMPLIANCE_DRIVER, else this package's driver.
    ValueError (naming the fix) when it cannot be read or cannot start."""
    source = "--driver" if option else "COMPLIANCE_DRIVER"
    text = option or os.environ.get("COMPLIANCE_DRIVER")
    if not text:
        return [sys.executable, "-m", "copilot_driver"]
    try:
        command = shlex.split(text)
    except ValueError as error:
        raise ValueError(
            f"{source} {text!r} cannot be read as a command ({error}); quote it as a shell "
            f"would, e.g. {EXAMPLE}"
        ) from None
    problem = command_problem(command)
    if problem is not None:
        raise ValueError(f"{source} {text!r}: {problem}")
    return command


def command_problem(command: list[str]) -> str | None:
    """Why `command` cannot start, with the fix; None when it can."""
    if not command:
        return f"the command is empty; give the driver's command, e.g. {EXAMPLE}"
    program = command[0]
    if "/" in program:
        problem = _file_problem(Path(program), executable=True)
        if problem is not None:
            return f"{problem}; give the driver's command, e.g. {EXAMPLE}"
    elif shutil.which(program) is None:
        return f"`{program}` is not on PATH; give its full path, or install it"
    script = _script_of(command)
    if script is not None:
        problem = _file_problem(Path(script), executable=False)
        if problem is not None:
            return f"{problem}; give the path of the driver's script"
    return None


def _script_of(command: list[str]) -> str | None:
    """The script an interpreter is given to run, if the command names one."""
    if not INTERPRETER.fullmatch(Path(command[0]).name):
        return None
    for argument in command[1:]:
        if argument in ("-m", "-c", "-e", "--eval", "-p", "--print"):
            return None  # a module or inline code, not a file
        if not argument.startswith("-"):
            return argument if SCRIPT.fullmatch(argument) else None
    return None


def _file_problem(path: Path, *, executable: bool) -> str | None:
    if not path.exists():
        return f"{path} does not exist"
    if not path.is_file():
        return f"{path} is not a file"
    if executable and not os.access(path, os.X_OK):
        return f"{path} is not executable (`chmod +x {path}`, or run it with its interpreter)"
    if not os.access(path, os.R_OK):
        return f"{path} is not readable"
    return None
