"""The prompt: `GH_AW_PROMPT` names a file, read whole before anything connects.

A refusal names what is wrong with the file and the fix: a path that does not
exist says why it was not found (a `~` nobody expanded, a relative path resolved
elsewhere), a FIFO or a device given by mistake fails at once instead of blocking.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from copilot_driver.driver.quoting import PATH_CHARS, Quote, shorten
from copilot_driver.env import PROMPT
from copilot_driver.errors import CopilotDriverError


class PromptError(CopilotDriverError):
    """The prompt file cannot be used; the message says why and what to do."""


def read_prompt(path: Path, *, quote: Quote = shorten) -> str:
    """Read the prompt: a readable, non-empty, UTF-8 regular file without NUL bytes.

    The file type is checked before opening, so a FIFO or a device given by
    mistake fails at once instead of blocking the driver.
    """
    shown = quote(str(path), PATH_CHARS)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise PromptError(_missing_prompt(path, quote)) from None
    except OSError as error:
        raise PromptError(f"{PROMPT.name} file cannot be read: {shown}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise PromptError(f"{PROMPT.name} is {kind}: {shown}: point it at the prompt file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise PromptError(f"{PROMPT.name} file cannot be read: {shown}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PromptError(
            f"{PROMPT.name} file is not valid UTF-8: {shown}: "
            f"invalid byte at offset {error.start}; save the prompt as UTF-8"
        ) from None
    text = text.removeprefix("\ufeff")
    nul = data.find(b"\x00")
    if nul >= 0:  # a binary file given by mistake; the runtime would take it as text
        raise PromptError(
            f"{PROMPT.name} file is not text: {shown}: it holds a NUL byte at offset {nul}; "
            "point it at the prompt file"
        )
    if not text.strip():
        raise PromptError(f"{PROMPT.name} file is empty: {shown}: write the task into it")
    return text


def _missing_prompt(path: Path, quote: Quote) -> str:
    """Why the prompt file was not found, and the fix: a `~` nobody expanded, or a
    relative path resolved against another directory than the user thought."""
    text = str(path)
    said = f"{PROMPT.name} file does not exist: {quote(text, PATH_CHARS)}"
    if text.startswith("~"):
        return f"{said}: {_unexpanded_home(text, quote)}"
    if path.is_absolute():
        return f"{said}: point it at the prompt file"
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        return f"{said}: it is relative, and the driver's working directory is gone"
    return (
        f"{said}: a relative path is resolved against the driver's working directory "
        f"{quote(cwd, PATH_CHARS)} (tried {quote(os.path.join(cwd, text), PATH_CHARS)}): "
        "give an absolute path, or start the driver in the directory it is relative to"
    )


def _unexpanded_home(text: str, quote: Quote) -> str:
    """The fix for a path starting with `~`: only a shell expands it, and not in quotes."""
    said = "`~` is not expanded in environment variables (only an unquoted shell word expands it)"
    if text == "~" or text.startswith("~/"):
        fix = f"write {quote('$HOME' + text[1:], PATH_CHARS)} instead"
    else:
        fix = "write the full path instead"
    try:
        expanded = os.path.expanduser(text)
    except (KeyError, RuntimeError):  # no home directory to expand to
        expanded = text
    if expanded != text and os.path.exists(expanded):
        fix += f" (the file is there: {quote(expanded, PATH_CHARS)})"
    return f"{said}: {fix}"
