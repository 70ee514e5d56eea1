"""JSON given in an environment variable: read strictly, and a problem said in words.

Shared by every part that reads a JSON variable (the permission inputs, the tool
contract, the provider catalog), so each says a syntax error, a key given twice
or an oversized number the same way, phrased to follow the variable's name.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from copilot_driver.errors import CopilotDriverError

_EXPECTING_A_KEY = "Expecting property name enclosed in double quotes"
_JSON_PROBLEMS = {
    "Expecting value": "expected a value",
    _EXPECTING_A_KEY: "expected a key in double quotes",
    "Expecting ',' delimiter": "expected `,` or a closing bracket",
    "Expecting ':' delimiter": "expected `:` after the key",
    "Unterminated string starting at": "a string starts here and is never closed",
    "Extra data": "expected nothing more after the value",
    "Invalid control character at": "a raw tab or line break inside a string (write \\t or \\n)",
    "Invalid \\escape": "an invalid backslash escape",
}
"""The json module's messages, said in plain words."""


class JsonInputError(CopilotDriverError, ValueError):
    """JSON that parses but cannot be taken as written; the message says what, phrased to
    follow the variable's name ("has the key ... twice")."""


def load_json(raw: str) -> Any:
    """`json.loads` for the JSON a user gives in a variable: a key given twice and a number
    of more digits than Python reads are JsonInputError (the json module would keep the
    last key, or fail with advice about `sys.set_int_max_str_digits`)."""
    return json.loads(raw, object_pairs_hook=_unique_keys, parse_int=_bounded_int)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise JsonInputError(
                f"has the key {quoted_key(key)} twice in one object: keep one (the json module "
                "would silently keep the last)"
            )
        value[key] = item
    return value


def _bounded_int(digits: str) -> int:
    limit = sys.get_int_max_str_digits() or 4300
    if len(digits.lstrip("-")) > limit:
        raise JsonInputError(
            f"holds a number of {len(digits.lstrip('-'))} digits (at most {limit} are read): "
            "write a shorter number"
        )
    return int(digits)


def json_syntax_problem(raw: str, error: json.JSONDecodeError) -> str:
    """Where `raw` stops being JSON, what is there, and the usual mistake when it is one:
    "line 1 column 9: expected a value, found `]`; it has a trailing comma before `]`..."."""
    error = _at_the_closing_bracket(raw, error)
    what = _JSON_PROBLEMS.get(error.msg, error.msg.removesuffix(" at"))
    found = _found_at(raw, error.pos)
    mistake = _json_mistake(raw, error)
    said = f"line {error.lineno} column {error.colno}: {what}, found {found}"
    return f"{said}; {mistake}" if mistake else said


def _at_the_closing_bracket(raw: str, error: json.JSONDecodeError) -> json.JSONDecodeError:
    """A trailing comma, said the same on every Python: 3.13's json reports "Illegal
    trailing comma" at the comma, earlier releases what they expected at the bracket."""
    if not error.msg.startswith("Illegal trailing comma"):
        return error
    after_comma = raw.find(",", error.pos) + 1
    bracket = after_comma + len(raw[after_comma:]) - len(raw[after_comma:].lstrip())
    expected = "Expecting value" if error.msg.endswith("array") else _EXPECTING_A_KEY
    return json.JSONDecodeError(expected, raw, bracket)


def _found_at(raw: str, pos: int) -> str:
    """The character at `pos`, in words when it is not visible (never more than one:
    the text may hold a secret pasted by mistake)."""
    if pos >= len(raw):
        return "the end of the text"
    char = raw[pos]
    names = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", " ": "a space"}
    if char in names:
        return names[char]
    return f"`{char}`" if char.isprintable() and char != "`" else repr(char)


def _json_mistake(raw: str, error: json.JSONDecodeError) -> str:
    """The usual mistake behind a JSON error at `error.pos`, or ""."""
    pos = error.pos
    here = raw[pos] if pos < len(raw) else ""
    before = raw[:pos].rstrip()[-1:]
    after = raw[pos + 1 :].lstrip()[:1]
    if here == "'":
        return "JSON strings take double quotes, not single quotes"
    if (before == "," and here in ("]", "}")) or (here == "," and after in ("]", "}")):
        closing = here if here in ("]", "}") else after
        return f"it has a trailing comma before `{closing}`: remove that comma"
    if here and error.msg == _EXPECTING_A_KEY and here.isalpha():
        return 'keys take double quotes, e.g. {"key": ...}'
    if not here:
        return "the text ends early: close every bracket and string"
    return ""


def json_type(value: object) -> str:
    """What a JSON value is, in words (`an object`, `a number`, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string"


def quoted_key(key: str) -> str:
    """A key as JSON, on one line and bounded (it is echoed in an error)."""
    text = json.dumps(key)
    return text if len(text) <= 40 else text[:36] + '..."'


def json_object(raw: str, keys: str, example: str) -> dict[str, Any]:
    """`raw` as a JSON object. Raises ValueError with what is wrong (for a syntax error,
    where and what was found) and a valid `example`, phrased to follow the variable's
    name: "is not valid JSON: line 1 column 9: ...", "must be a JSON object with KEYS"."""
    shown = f"a valid value looks like {example}"
    try:
        value = load_json(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"is not valid JSON: {json_syntax_problem(raw, error)}; {shown}") from None
    except JsonInputError as error:
        raise ValueError(f"{error}; {shown}") from None
    except RecursionError:
        raise ValueError(f"is nested too deeply; {shown}") from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object with {keys}; {shown}")
    return value
