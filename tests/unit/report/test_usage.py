"""`copilot_driver.report.usage`: the shutdown record's accounting, read tolerantly: a
field of the wrong type is a field that is missing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from copilot_driver.report import load_timeline
from copilot_driver.report.usage import (
    ModelUsage,
    Usage,
    usage_from_shutdown,
)
from helpers.report_samples import POLICY_DENIAL_SESSION, json_values, model_metrics


def test_the_real_shutdown_record() -> None:
    usage = load_timeline(POLICY_DENIAL_SESSION).usage

    assert usage == Usage(
        models=(ModelUsage("gpt-4.1", 3, 0.0, 30, 15, 0, 0),),
        premium_requests=0.0,
        api_duration_ms=19.0,
        files_modified=(),
        lines_added=0,
        lines_removed=0,
    )
    assert usage.requests == 3


def test_premium_requests_fall_back_to_the_models_costs() -> None:
    metrics = {"a": model_metrics(2, 1.5, (1, 2, 3, 4)), "b": model_metrics(1, 0.25, (0,) * 4)}

    assert usage_from_shutdown({"modelMetrics": metrics}).premium_requests == 1.75
    snapshot = {"modelMetrics": metrics, "accountingSnapshot": {"totalPremiumRequestCost": 4}}
    assert usage_from_shutdown(snapshot).premium_requests == 4.0
    assert usage_from_shutdown({}).premium_requests is None


@pytest.mark.parametrize(
    "bad", [None, True, "12", -1, float("nan"), float("inf"), 2**80, [], {"x": 1}, 1.5]
)
def test_counts_of_the_wrong_type_are_missing(bad: Any) -> None:
    data = {
        "modelMetrics": {"m": {"requests": {"count": bad}, "usage": {"inputTokens": bad}}},
        "codeChanges": {"linesAdded": bad},
    }
    usage = usage_from_shutdown(data)

    (model,) = usage.models
    assert model.requests is None
    assert model.input_tokens is None
    assert usage.lines_added is None


def test_shapes_of_the_wrong_type_are_missing() -> None:
    data = {
        "modelMetrics": {"m": "not an object", "n": {"requests": [], "usage": 3}},
        "codeChanges": {"filesModified": ["a.py", 3, None, "b.py"]},
        "totalApiDurationMs": "18",
        "accountingSnapshot": [],
    }
    usage = usage_from_shutdown(data)

    assert usage.models == (ModelUsage("n"),)
    assert usage.requests is None
    assert usage.files_modified == ("a.py", "b.py")
    assert usage.api_duration_ms is None
    assert usage_from_shutdown({"codeChanges": {"filesModified": "a.py"}}).files_modified is None


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_is_read_without_raising(value: Any) -> None:
    usage_from_shutdown(value if isinstance(value, dict) else {"modelMetrics": value})
