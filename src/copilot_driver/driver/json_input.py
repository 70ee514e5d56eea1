"""JSON given in an environment variable, read into an object or a problem in words."""

from __future__ import annotations

import json
from typing import Any

from copilot_driver.permissions.config import JsonInputError, json_syntax_problem, load_json


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
