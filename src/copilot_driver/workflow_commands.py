"""GitHub Actions workflow commands and step outputs: the text formats, pure.

Workflow commands (`::error title=T::message`, `::group::`, `::add-mask::`)
are lines the runner reads from a step's output. This project writes them on
stderr only: stdout carries the answer, so `answer=$(copilot-driver-harness)`
captures nothing else. Step outputs go to the file `$GITHUB_OUTPUT` names,
one `name<<DELIMITER` block each, so any value (several lines, `=` signs)
arrives whole.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from copilot_driver.inert_text import visible_controls


def escape_data(text: str) -> str:
    """A message: `%`, CR and LF are the runner's escapes; other control characters
    are shown (`inert_text.visible_controls`), as the runner prints the message."""
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible_controls(escaped)


def escape_property(text: str) -> str:
    """A property value (`title=`): also `:` and `,`, which end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, title: str, message: str) -> str:
    """`::error title=...::message` (level `error`, `warning` or `notice`), one line."""
    return f"::{level} title={escape_property(title)}::{escape_data(message)}\n"


def group_start(title: str) -> str:
    return f"::group::{escape_data(title)}\n"


GROUP_END = "::endgroup::\n"


def add_mask(value: str) -> str:
    return f"::add-mask::{value}\n"


def outputs_block(outputs: Mapping[str, str]) -> str:
    """The `$GITHUB_OUTPUT` text for `outputs`: heredoc form, a fresh delimiter each."""
    blocks = []
    for name, value in outputs.items():
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        while delimiter in value:  # a value cannot end its own block
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(blocks)
