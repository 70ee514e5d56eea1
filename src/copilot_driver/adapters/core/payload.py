"""Tolerant reads of JSON an agent sent: the wrong type reads as empty.

Agents change their payloads between versions; a parser that trusts a
field's type crashes on the first surprise and loses the turn. These
accessors never raise: a field of the wrong type is treated as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_int(value: Any) -> bool:
    """An integer, and not a boolean (JSON `true` is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_count(value: Any) -> int:
    """A positive integer, else 0 (token counts, sizes)."""
    return value if is_int(value) and value > 0 else 0


def as_int_or_none(value: Any) -> int | None:
    return value if is_int(value) else None
