"""`copilot_driver.report.model`: the figures derived from the timeline."""

from __future__ import annotations

import pytest

from copilot_driver.report.model import Timeline, ToolCallRecord, Turn


def _timeline(*spans: tuple[float | None, float | None]) -> Timeline:
    turn = Turn(1, "p", 0.0)
    turn.tool_calls = [
        ToolCallRecord(f"c{n}", "bash", None, 1, started_ms=start, finished_ms=end)
        for n, (start, end) in enumerate(spans)
    ]
    return Timeline(turns=[turn])


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ([], None),
        ([(0, 10)], 10),
        ([(0, 10), (20, 25)], 15),  # apart: added
        ([(0, 10), (5, 15)], 15),  # overlapping: the union
        ([(0, 100), (10, 20), (30, 40)], 100),  # parallel calls inside a long one
        ([(10, 20), (0, 5), (20, 30)], 25),  # any order; touching spans join
        ([(0, 10), (50, 40)], 10),  # a clock step backwards is no time
        ([(0, None), (None, 5), (1, 3)], 2),  # calls without both ends are not timed
    ],
)
def test_tool_time_counts_parallel_calls_once(
    spans: list[tuple[float | None, float | None]], expected: float | None
) -> None:
    assert _timeline(*spans).tool_time_ms == expected
