"""Strict reading of an adapter's option block from WORKFLOW.md.

A block forwarded unchecked turns a typo (`max_autopilot_continue: 5`) into
a setting that silently does nothing, which a CI user only finds out from a
bill. Here every block is read into a frozen dataclass: unknown keys and
wrong types are errors that name the field.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Self, TypeVar

from copilot_driver.errors import CopilotDriverError

T = TypeVar("T")

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OptionsError(CopilotDriverError, ValueError):
    """Every problem found in option blocks, each one sentence; `str()` joins them
    with "; ", and a command line can print them one a line."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


def problems_of(error: ValueError) -> list[str]:
    """The problems an error reports: an `OptionsError`'s list, else its message."""
    return list(error.problems) if isinstance(error, OptionsError) else [str(error)]


def raise_problems(problems: Iterable[str]) -> None:
    """For a dataclass's `__post_init__`: every range problem at once, or nothing."""
    found = list(problems)
    if found:
        raise OptionsError(found)


def is_variable_name(name: str) -> bool:
    """A name a POSIX shell accepts for an environment variable."""
    return _VARIABLE_NAME.fullmatch(name) is not None


class OptionBlock:
    """Base of an adapter's options: a frozen dataclass read from its `block`."""

    block: ClassVar[str]
    """The WORKFLOW.md block (and the prefix of every error about it)."""

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> Self:
        return options_from_mapping(cls, raw, block=cls.block)


def options_from_mapping(cls: type[T], raw: Mapping[str, Any] | None, *, block: str) -> T:
    """Build dataclass `cls` from `raw`; `OptionsError` lists every bad field at once."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise OptionsError([f"{block}: expected a mapping of options, got {_type_name(raw)}"])
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    problems = [
        f"{block}.{key}: unknown field (known: {', '.join(sorted(fields))})"
        for key in raw
        if key not in fields
    ]
    values: dict[str, Any] = {}
    for name in fields & set(raw):
        value = raw[name]
        expected = hints[name]
        if not _matches(value, expected):
            problems.append(
                f"{block}.{name}: expected {_describe(expected)}, got {_type_name(value)} "
                f"{value!r}"[:300]
            )
        else:
            values[name] = tuple(value) if isinstance(value, list) else value
    mistyped = len(problems) > len(set(raw) - fields)
    if mistyped:  # the range checks would see a default in place of the mistyped value
        raise OptionsError(sorted(problems))
    try:
        built = cls(**values)
    except ValueError as exc:
        problems = sorted(problems) + [f"{block}: {problem}" for problem in problems_of(exc)]
        raise OptionsError(problems) from None
    if problems:
        raise OptionsError(sorted(problems))
    return built


def _matches(value: Any, expected: Any) -> bool:
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(expected))
    if expected is type(None):
        return value is None
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is str:
        return isinstance(value, str)
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if origin is tuple:
        (item, _ellipsis) = typing.get_args(expected)
        return isinstance(value, list | tuple) and all(_matches(v, item) for v in value)
    if origin is typing.Literal:
        return value in typing.get_args(expected)
    if origin is dict or expected is dict:
        return isinstance(value, Mapping)
    return isinstance(value, expected)


def _describe(expected: Any) -> str:
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(expected))
    if expected is type(None):
        return "null"
    if origin is tuple:
        return f"a list of {_describe(typing.get_args(expected)[0])}"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(expected))
    if origin is dict:
        return "a mapping"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return names.get(expected, str(expected))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}.get(
        type(value), type(value).__name__
    )
