"""Before anything starts: the driver's inputs the harness can check, so that every
problem of a run is said at once, before a sidecar, a sandbox or a proxy exists.
Pure but for reading the prompt file.

The harness never imports the driver (it runs it as a process), so these are the
driver's rules again, kept to what the driver certainly refuses: the prompt file
(`GH_AW_PROMPT`, or the harness's PROMPT_FILE), the model (`COPILOT_MODEL`), the
policy variables (read by the one reader both share, `permissions.inputs`) and the
workspace (`GITHUB_WORKSPACE`). The driver checks them once more, and the rest (its
provider, its soft settings) itself. A test keeps the prompt's rules equal to the
driver's reader.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.env import MODEL, PERMISSIONS, PROMPT, SERVER_ARGS, TOOL_CONFIG, WORKSPACE
from copilot_driver.formatting import escape_line_breaks, shorten
from copilot_driver.permissions.inputs import resolve_policy

PATH_CHARS = 300
"""How much of a path a problem echoes."""
_PROG = "copilot-driver-harness"


def prompt_problem(env: Mapping[str, str], given: str | None, cwd: Path) -> str | None:
    """What stops the prompt file from being read, with the fix; None when it can be.
    `given`: the harness's PROMPT_FILE argument, which stands for GH_AW_PROMPT."""
    if given is not None:
        named, fix = f"the prompt file {_shown(given)}", "give the path of the prompt file"
        path = Path(given)
    else:
        raw = env.get(PROMPT.name)
        if raw is None or not raw.strip():
            state = "is not set" if raw is None else "is set but blank"
            return (
                f"no prompt: {PROMPT.name} {state}; give the prompt file as PROMPT_FILE "
                f"(`{_PROG} prompt.md`), or set {PROMPT.name} to its path"
            )
        named = f"{PROMPT.name} names {_shown(raw)}, which"
        fix = f"set {PROMPT.name} to the path of the prompt file, or give it as PROMPT_FILE"
        path = Path(raw)
    where = "" if path.is_absolute() else f" (tried {_shown(str(cwd / path))})"
    try:
        info = path.stat()
    except FileNotFoundError:
        home = " (only a shell expands `~`, in an unquoted word)" if str(path)[:1] == "~" else ""
        return f"{named} does not exist{where}{home}: {fix}"
    except OSError as error:
        return f"{named} cannot be read{where}: {error.strerror}: {fix}"
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        return f"{named} is {kind}{where}: {fix}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return f"{named} cannot be read{where}: {error.strerror}: {fix}"
    return _content_problem(named, data)


def _content_problem(named: str, data: bytes) -> str | None:
    """The driver's rules for the file's content: UTF-8 text, no NUL, not blank."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        at = error.start
        return f"{named} is not valid UTF-8 (invalid byte at offset {at}): save it as UTF-8"
    nul = data.find(b"\x00")
    if nul >= 0:
        return f"{named} is not text (a NUL byte at offset {nul}): give the prompt file"
    if not text.strip():
        said = "is empty" if not text else "holds only white space"
        return f"{named} {said}: write the task into it"
    return None


def model_problem(env: Mapping[str, str]) -> str | None:
    """COPILOT_MODEL unset or blank, as the driver says it."""
    raw = env.get(MODEL.name)
    if raw is not None and raw.strip():
        return None
    state = "is not set" if raw is None else "is set but blank"
    return f"{MODEL.name} {state}: {MODEL.when_missing}"


def policy_problems(env: Mapping[str, str]) -> list[str]:
    """Each policy variable the driver cannot read (a policy that cannot be read is
    never widened to allow-all: the driver refuses to start)."""
    resolved = resolve_policy(
        permissions=env.get(PERMISSIONS.name),
        server_args=env.get(SERVER_ARGS.name),
        tool_config=env.get(TOOL_CONFIG.name),
    )
    return list(resolved.problems)


def workspace_problem(env: Mapping[str, str], cwd: Path) -> str | None:
    """GITHUB_WORKSPACE that is not a folder: the driver works there, and the sandbox
    makes it the one writable folder."""
    given = env.get(WORKSPACE.name, "").strip()
    if not given:
        return None
    try:
        usable = (cwd / given).resolve().is_dir()
    except OSError:  # a name too long, a loop of links
        usable = False
    if usable:
        return None
    return (
        f"{WORKSPACE.name} is not a directory: {_shown(given)}: set it to the checkout the "
        "agent works in, or unset it (the current directory is then the workspace)"
    )


def _shown(path: str) -> str:
    return shorten(escape_line_breaks(path), PATH_CHARS)
