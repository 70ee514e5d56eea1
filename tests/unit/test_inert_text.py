"""Run text made inert for a terminal and for the Actions runner (`inert_text`).

The oracle for the runner is `helpers.runner_commands`, a port of the runner's
own parsing (with and without its culture-sensitive matching)."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.inert_text import (
    holds_workflow_command,
    inert,
    inert_line,
    inert_log,
    unwrapped,
    visible_controls,
)
from helpers.runner_commands import commands_run

ATTACK = (
    "::error::x\n  ::add-mask::y\n::stop-commands::z\n\t::set-output name=a::b\n"
    "text ##[error]c\n\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://x\x1b\\link"
    "\x1b]8;;\x1b\\ \x9b2J done\r"
)
_FRAGMENTS = (
    "::", "##[", "]", "error", "add-mask", "stop-commands", "set-output name=a", " ", "\t",
    "\u3000", "\u200b", "\u00ad", "\n", "\r", "\r\n", "\x0b", "\x1b", "\x1b[31m", "\x07",
    "\x7f", "\x85", "\x9b", "\u2028", ":", "#", "[", "x", "\\",
)  # fmt: skip
attacks = st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join)
"""Text made of the pieces commands and control sequences are made of."""
texts = st.one_of(st.text(), attacks)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_SPELLED = re.compile(r"[\u2400-\u241f]|\\u00([79][0-9a-f]|8[0-9a-f])")


def restored(shown: str) -> str:
    """The text `visible_controls` was given (when it held no control pictures and no
    `\\u00..` spelling of its own)."""

    def control(match: re.Match[str]) -> str:
        spelled = match.group(0)
        return chr(ord(spelled) - 0x2400) if len(spelled) == 1 else chr(int(spelled[2:], 16))

    return _SPELLED.sub(control, shown)


def test_controls_become_pictures_or_escapes_and_tabs_and_newlines_stay() -> None:
    assert (
        visible_controls("a\tb\r\nc\x1b[31m\x07\x7f\x9b\rd")
        == "a\tb\r\nc\u241b[31m\u2407\\u007f\\u009b\u240dd"
    )


def test_outside_actions_only_the_controls_change() -> None:
    shown = inert(ATTACK, in_actions=False)
    assert shown == visible_controls(ATTACK)
    assert shown.startswith("::error::x\n")


def test_under_actions_the_runner_acts_on_none_of_it() -> None:
    # The oracle sees them raw; the stop in it would silence the rest of the step.
    assert commands_run(ATTACK) == [("error", "x"), ("add-mask", "y")]
    assert len(commands_run(ATTACK.replace("::stop-commands::z", ""))) == 4
    shown = inert(ATTACK, in_actions=True)
    assert commands_run(shown) == []
    lines = shown.splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert token is not None
    assert lines[-1] == f"::{token.group(1)}::"
    assert unwrapped(shown) == visible_controls(ATTACK) + "\n"


def test_each_answer_gets_a_fresh_token() -> None:
    assert inert("::error::x", in_actions=True) != inert("::error::x", in_actions=True)


def test_plain_text_is_never_wrapped() -> None:
    assert inert("all done\n", in_actions=True) == "all done\n"
    assert not holds_workflow_command("a :: b\nc#[d\n#\u200b#[error]")


@given(texts)
def test_no_control_survives_and_the_runner_acts_on_nothing(text: str) -> None:
    shown = inert(text, in_actions=True)
    assert not _CONTROL.search(shown)
    assert commands_run(shown) == []
    assert commands_run(shown, culture=True) == []


@given(texts)
def test_only_text_the_runner_would_read_is_wrapped(text: str) -> None:
    shown = inert(text, in_actions=True)
    plain = visible_controls(text)
    if unwrapped(shown) == shown:
        assert shown == plain
        assert commands_run(plain) == []
        assert commands_run(plain, culture=True) == []
    else:
        assert holds_workflow_command(plain)
        assert unwrapped(shown).rstrip("\n") == plain.rstrip("\n")


@given(texts.filter(lambda text: not _SPELLED.search(text)))
def test_the_visible_text_is_otherwise_the_same(text: str) -> None:
    assert restored(inert(text, in_actions=False)) == text
    assert restored(unwrapped(inert(text, in_actions=True))).rstrip("\n") == text.rstrip("\n")


@given(texts.filter(lambda line: not holds_workflow_command(line.lstrip()[:2] or "x")))
def test_a_quoted_line_starts_no_command(line: str) -> None:
    """Lines whose writer did not start them with `::` (a log line's prefix, `{`)."""
    shown = inert_line(line)
    assert not _CONTROL.search(shown)
    assert commands_run(shown) == []
    assert commands_run(shown, culture=True) == []
    assert inert_line(shown) == shown


@given(st.dictionaries(st.text(max_size=5), st.one_of(texts, st.integers())))
def test_a_json_line_keeps_its_value(record: dict[str, object]) -> None:
    line = json.dumps(record, ensure_ascii=False)
    shown = inert_line(line)
    assert json.loads(shown) == record
    assert commands_run(shown) == []
    assert commands_run(shown, culture=True) == []


def test_the_oracle_reads_what_the_runner_reads() -> None:
    assert commands_run("  ::error title=t::m\r::add-mask::s\r\nx ##[warning]w") == [
        ("error", "m"),
        ("add-mask", "s"),
        ("warning", "w"),
    ]
    assert commands_run("::error:\u200b:x") == []
    assert commands_run("::error:\u200b:x", culture=True) == [("error", ":x")]
    assert commands_run("::stop-commands::T\n::error::x\n::t::\n::error::y") == [("error", "y")]


@given(texts)
def test_a_log_record_of_several_lines_starts_no_command(text: str) -> None:
    shown = inert_log(text)
    assert not _CONTROL.search(shown)
    assert commands_run(shown) == []
    assert commands_run(shown, culture=True) == []
    assert inert_log(shown) == shown


def test_a_log_record_keeps_its_lines() -> None:
    assert inert_log("failed:\n  ::error::x\n##[warning]y") == (
        "failed:\n  \\::error::x\n##\\u005bwarning]y"
    )
