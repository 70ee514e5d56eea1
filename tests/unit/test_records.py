"""The events file's record: written by the sink, read by the report and the harness."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from copilot_driver import records


def test_make_record_keeps_the_field_order_and_the_ids() -> None:
    record = records.make_record(
        records.TOOL_EXECUTION_START,
        {"toolName": "bash"},
        timestamp="2026-11-24T00:00:00.000Z",
        ids={"id": "e1", "parentId": None, "agentId": "a", "other": "x"},
    )
    assert list(record) == ["type", "timestamp", "data", "id", "agentId"]
    assert record["type"] == "tool.execution_start"


def test_the_guard_record() -> None:
    record = records.guard_record(3, 3, "stopped")
    assert record["type"] == records.GUARD_TOOL_DENIALS_EXCEEDED
    assert record["data"] == {"denialCount": 3, "threshold": 3, "reason": "stopped"}
    assert records.event_time(record) is not None


def test_readers_are_tolerant() -> None:
    for line in ("", "not json", "[1]", '"x"', "{" * 10_000):
        assert records.parse_line(line) is None
    record = records.parse_line(json.dumps({"type": 5, "data": [1], "timestamp": "x"}))
    assert record is not None
    assert records.event_type(record) is None
    assert records.event_data(record) == {}
    assert records.event_time(record) is None


def test_readers_read_a_whole_record() -> None:
    line = b'{"type":"user.message","timestamp":"2026-11-24T01:02:03.004Z","data":{"c":1}}'
    record = records.parse_line(line)
    assert record is not None
    assert records.event_type(record) == records.USER_MESSAGE
    assert records.event_data(record) == {"c": 1}
    assert records.event_time(record) == datetime(2026, 11, 24, 1, 2, 3, 4000, tzinfo=UTC)
