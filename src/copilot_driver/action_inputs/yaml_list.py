"""A YAML block list input (`allowed-tools`, `denied-tools`, `allowed-domains`,
`pass-env`) -> its items, in order. Pure.

The lists are read without PyYAML (the core install has none), as a strict
subset of YAML that PyYAML reads the same way: one `- rule` item per line at
one indentation, blank lines and `#` comments, plain scalars, single-quoted
scalars (`''` is a quote) and double-quoted scalars without backslashes.
Anything else (flow lists, nested items, mappings, continuation lines,
anchors, tags, escapes, tabs, control characters) is refused, never guessed.

An unquoted item that YAML would read as something else (`- *.pypi.org`, an
alias) is to be quoted only when the quoted item is one the input takes: the
input's own check says first what is wrong with it otherwise, so no advice
leads to another refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from copilot_driver.action_inputs.names import SHOWN_CHARS, InputError, example, item_noun

_PLAIN_NEVER_FIRST = frozenset(",[]{}#&*!|>'\"%@`")
"""Characters that cannot start a plain scalar (YAML indicators)."""
_PLAIN_FIRST_IF_FOLLOWED = frozenset("-?:")
"""Indicators that start a plain scalar only when a non-space follows them."""


ItemCheck = Callable[[str], object]
"""An input's own check of one item (raises InputError naming the fix)."""


@dataclass(frozen=True)
class _Line:
    input_name: str
    number: int
    text: str
    check: ItemCheck | None = None

    @property
    def noun(self) -> str:
        """What one item of this input is: a rule, a host, a variable name."""
        return item_noun(self.input_name)

    def error(self, what: str) -> InputError:
        shown = self.text if len(self.text) <= SHOWN_CHARS else self.text[:SHOWN_CHARS] + "..."
        return InputError(
            f"{self.input_name}, line {self.number} ({json.dumps(shown, ensure_ascii=False)}): "
            f"{what}; {example(self.input_name)}"
        )


def parse_rule_list(text: str, input_name: str, check: ItemCheck | None = None) -> tuple[str, ...]:
    """The items of a YAML block list, in order; raises InputError for anything else.

    Blank or comment-only text is the empty list. Every list input is read here:
    the tool rules, `allowed-domains` and `pass-env`. `check`: the input's check of
    an item, run on an item that would need quotes before advising them.
    """
    rules: list[str] = []
    indent: int | None = None
    first_item = 0
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, raw in enumerate(lines, start=1):
        line = _Line(input_name, number, raw, check)
        _check_characters(line)
        body = raw.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if body != "-" and not body.startswith("- "):
            raise line.error(_not_an_item(line.noun, body))
        here = len(raw) - len(body)
        if indent is None:
            indent, first_item = here, number
        elif here != indent:
            raise line.error(
                f"indented {here} spaces where line {first_item} is indented {indent}: "
                "nested or misaligned items are not read"
            )
        rules.append(_item_value(line, body[1:].lstrip(" ")))
    return tuple(rules)


def _check_characters(line: _Line) -> None:
    for char in line.text:
        if char == "\t":
            raise line.error("a tab: indent and separate with spaces")
        if not _printable(char):
            raise line.error(f"a control or non-printable character (U+{ord(char):04X})")


def _printable(char: str) -> bool:
    """What YAML allows in a line, less what it could read as a line break."""
    code = ord(char)
    return (
        0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    ) and char not in "\u2028\u2029"


def _not_an_item(noun: str, body: str) -> str:
    if body.startswith("["):
        return f"a flow list (`[a, b]`) is not read: put each {noun} on its own line"
    if body.startswith("-"):
        return "an item needs a space after its `-`"
    if _is_mapping(body.split(" #", 1)[0].rstrip(" ")):
        return f"a mapping (`key: value`) is not a list of {noun}s"
    return f"not a list item: each {noun} goes on its own line after `- `"


def _item_value(line: _Line, value: str) -> str:
    if not value or value.startswith("#"):
        raise line.error(f"an empty item: write the {line.noun} after `- `")
    if value[0] == "'":
        rule, end = _single_quoted(line, value)
    elif value[0] == '"':
        rule, end = _double_quoted(line, value)
    else:
        return _plain(line, value)
    rest = value[end:]
    if rest.strip(" ") and not (rest.startswith(" ") and rest.lstrip(" ").startswith("#")):
        raise line.error("text after the closing quote (a comment needs a space before `#`)")
    if not rule.strip():
        raise line.error(f"an empty {line.noun}")
    return rule


def _single_quoted(line: _Line, value: str) -> tuple[str, int]:
    """The scalar and the index just after its closing quote; `''` inside is one quote."""
    parts: list[str] = []
    index = 1
    while True:
        end = value.find("'", index)
        if end < 0:
            raise line.error(f"an unclosed quote: a quoted {line.noun} must end on its line")
        parts.append(value[index:end])
        if not value.startswith("''", end):
            return "".join(parts), end + 1
        parts.append("'")
        index = end + 2


def _double_quoted(line: _Line, value: str) -> tuple[str, int]:
    end = value.find('"', 1)
    inside = value[1:] if end < 0 else value[1:end]
    if "\\" in inside:
        raise line.error(
            "a backslash in double quotes (an escape) is not read: "
            "use single quotes, where `\\` is a plain character"
        )
    if end < 0:
        raise line.error(f"an unclosed quote: a quoted {line.noun} must end on its line")
    return inside, end + 1


def _plain(line: _Line, value: str) -> str:
    rule = value.split(" #", 1)[0].rstrip(" ")
    first, second = rule[0], rule[1:2]
    if first in _PLAIN_FIRST_IF_FOLLOWED and second in ("", " "):
        raise line.error(f"a nested item (`- {first} ...`) is not read")
    if first in _PLAIN_NEVER_FIRST:
        _check_before_quoting(line, rule)
        raise line.error(
            f"a {line.noun} cannot start with `{first}` unquoted: quote it, "
            f"e.g. `- {_quoted(rule)}`"
        )
    if _is_mapping(rule):
        _check_before_quoting(line, rule)
        raise line.error(
            f"`: ` makes this a mapping, not a {line.noun}: quote it, e.g. `- {_quoted(rule)}`"
        )
    return rule


def _check_before_quoting(line: _Line, item: str) -> None:
    """The input's own refusal of `item`, when quoting it would not make it valid."""
    if line.check is not None:
        line.check(item)


def _quoted(rule: str) -> str:
    return "'" + rule.replace("'", "''") + "'"


def _is_mapping(text: str) -> bool:
    return ": " in text or text.endswith(":")
