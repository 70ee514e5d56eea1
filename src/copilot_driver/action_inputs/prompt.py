"""The `prompt` or `prompt-file` input -> the path of the prompt file the harness reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from copilot_driver.action_inputs.names import (
    INPUT_VARIABLES,
    PROMPT,
    PROMPT_FILE,
    PROMPT_FILE_NAME,
    InputError,
)


def prompt_path(env: Mapping[str, str], directory: Path, cwd: Path) -> Path:
    """The prompt file: `prompt-file` (relative to `cwd`), or `prompt` written into
    `directory`. Exactly one of the two must be set."""
    text = env.get(INPUT_VARIABLES[PROMPT], "")
    named = env.get(INPUT_VARIABLES[PROMPT_FILE], "").strip()
    if bool(text.strip()) == bool(named):
        which = "both are set" if named else "neither is set"
        raise InputError(
            f"set exactly one of the inputs {PROMPT} (the prompt text) and {PROMPT_FILE} "
            f"(the path of a prompt file): {which}"
        )
    if named:
        path = cwd / named
        if not path.is_file():
            raise InputError(f"{PROMPT_FILE} {named}: no such file (read from {cwd})")
        return path.absolute()
    target = directory / PROMPT_FILE_NAME
    target.write_text(text, encoding="utf-8")
    return target
