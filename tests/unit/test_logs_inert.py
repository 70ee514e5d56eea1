"""The driver's log lines quote model and tool text inert (`logs`, `inert_text`)."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator

import pytest

from copilot_driver.logs import configure_logging, read_json_entry, read_text_entry
from copilot_driver.redaction import Redactor
from helpers.runner_commands import commands_run

QUOTED = "shell(rm '\x1b[2J' '##[error]x' \x9b1m\x7f)\n::error::y"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(autouse=True)
def _restore_loggers() -> Iterator[None]:
    logger = logging.getLogger("copilot_driver")
    handlers, level, propagate = logger.handlers[:], logger.level, logger.propagate
    yield
    logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


def _logged(fmt: str) -> str:
    stream = io.StringIO()
    log = configure_logging(fmt, "info", Redactor(()), stream=stream)  # type: ignore[arg-type]
    log.warning("permission.denied", f"denied: {QUOTED}", requestSummary=QUOTED)
    return stream.getvalue()


def test_a_json_line_is_inert_and_keeps_its_values() -> None:
    (line,) = _logged("json").splitlines()
    assert not _CONTROL.search(line)
    assert commands_run(line) == commands_run(line, culture=True) == []
    entry = read_json_entry(line)
    assert entry is not None
    assert entry["requestSummary"] == QUOTED
    assert entry["message"] == f"denied: {QUOTED}"


def test_a_text_line_is_inert_and_its_quoted_values_read_back() -> None:
    (line,) = _logged("text").splitlines()
    assert not _CONTROL.search(line)
    assert commands_run(line) == commands_run(line, culture=True) == []
    assert "\u241b[2J" in line
    entry = read_text_entry(line)
    assert entry is not None
    assert entry["requestSummary"] == QUOTED  # JSON-quoted: its escapes decode back
