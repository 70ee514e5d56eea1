"""GitHub Actions workflow commands and step outputs (`workflow_commands`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver import workflow_commands as wc
from copilot_driver.inert_text import visible_controls
from helpers.actions_runner import read_file_commands, unescape_command_value


@given(st.dictionaries(st.from_regex(r"[a-z][a-z-]{0,15}", fullmatch=True), st.text()))
def test_any_value_arrives_whole(outputs: dict[str, str]) -> None:
    # The runner splits lines on \n; a value's own \r stays in it.
    assert read_file_commands(wc.outputs_block(outputs)) == outputs


def test_a_value_holding_a_delimiter_like_line_cannot_end_its_block() -> None:
    sneaky = "line\nghadelimiter_x\nanswer<<EOF"
    assert read_file_commands(wc.outputs_block({"answer": sneaky})) == {"answer": sneaky}


@given(st.text(), st.text())
def test_an_annotation_is_one_line_whatever_its_text(title: str, message: str) -> None:
    line = wc.annotation("error", title, message)
    assert line.endswith("\n")
    assert "\n" not in line[:-1]
    assert "\r" not in line
    match = re.fullmatch(r"::error title=([^:,]*)::(.*)\n", line, re.DOTALL)
    assert match is not None
    # Line breaks arrive whole; every other control character is shown, not acted on.
    assert unescape_command_value(match[1]) == shown(title)
    assert unescape_command_value(match[2]) == shown(message)
    assert not re.search(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]", line[:-1])


def shown(text: str) -> str:
    return "\r".join(visible_controls(part) for part in text.split("\r"))
