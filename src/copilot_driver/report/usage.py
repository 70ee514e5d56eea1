"""What a session used and changed (`session.shutdown`), read tolerantly: a field
of the wrong type is a field that is missing.

The runtime's shutdown record carries the per-model token counts and request
counts, the premium requests the account was charged, the time spent waiting
on the model, and the files the agent changed. (How the driver ended,
`result.json`, is read by `vocabulary.read_result`.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MAX_COUNT = 2**63


@dataclass(frozen=True)
class ModelUsage:
    """One model's share of the session (`modelMetrics.<model>`)."""

    model: str
    requests: int | None = None
    cost: float | None = None
    """Premium requests charged for this model (`requests.cost`)."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class Usage:
    """The `session.shutdown` record's accounting."""

    models: tuple[ModelUsage, ...] = ()
    premium_requests: float | None = None
    """`accountingSnapshot.totalPremiumRequestCost`, else the sum of the models' costs."""
    api_duration_ms: float | None = None
    """Time spent waiting on the model (`totalApiDurationMs`)."""
    files_modified: tuple[str, ...] | None = None
    """None when the record does not say; `()` when it says no file changed."""
    lines_added: int | None = None
    lines_removed: int | None = None

    @property
    def requests(self) -> int | None:
        counted = [m.requests for m in self.models if m.requests is not None]
        return sum(counted) if counted else None


def usage_from_shutdown(data: Mapping[str, Any]) -> Usage:
    """The accounting of a `session.shutdown` record's `data`; never raises on content."""
    metrics = _dict(data, "modelMetrics")
    models = tuple(
        _model_usage(name, value) for name, value in metrics.items() if isinstance(value, dict)
    )
    changes = _dict(data, "codeChanges")
    files = changes.get("filesModified")
    return Usage(
        models=models,
        premium_requests=_premium_requests(data, models),
        api_duration_ms=_number(data.get("totalApiDurationMs")),
        files_modified=(
            tuple(name for name in files if isinstance(name, str))
            if isinstance(files, list)
            else None
        ),
        lines_added=_count(changes.get("linesAdded")),
        lines_removed=_count(changes.get("linesRemoved")),
    )


def _model_usage(name: str, metrics: Mapping[str, Any]) -> ModelUsage:
    requests = _dict(metrics, "requests")
    usage = _dict(metrics, "usage")
    return ModelUsage(
        model=name,
        requests=_count(requests.get("count")),
        cost=_number(requests.get("cost")),
        input_tokens=_count(usage.get("inputTokens")),
        output_tokens=_count(usage.get("outputTokens")),
        cache_read_tokens=_count(usage.get("cacheReadTokens")),
        cache_write_tokens=_count(usage.get("cacheWriteTokens")),
    )


def _premium_requests(data: Mapping[str, Any], models: tuple[ModelUsage, ...]) -> float | None:
    total = _number(_dict(data, "accountingSnapshot").get("totalPremiumRequestCost"))
    if total is not None:
        return total
    costs = [m.cost for m in models if m.cost is not None]
    return math.fsum(costs) if costs else None


def _number(value: Any) -> float | None:
    """A finite, non-negative JSON number (Python's JSON reader accepts `NaN` and `Infinity`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return number if math.isfinite(number) and 0 <= number < _MAX_COUNT else None


def _count(value: Any) -> int | None:
    """A whole number from 0 to 2**63 (`3.0` counts as 3); anything else is no count."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value < _MAX_COUNT else None


def _str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _dict(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
