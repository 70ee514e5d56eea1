"""JSON given in an environment variable, read into an object or a problem in words."""

from __future__ import annotations

import json
from typing import Any


def json_object(raw: str, keys: str) -> dict[str, Any]:
    """`raw` as a JSON object. Raises ValueError with what is wrong, phrased to follow
    the variable's name: "is not valid JSON (...)", "must be a JSON object with KEYS"."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"is not valid JSON ({error.msg} at character {error.pos})") from None
    except RecursionError:
        raise ValueError("is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object with {keys}")
    return value
