"""`copilot_driver.report.gantt`: which calls are drawn, on what axis, with what labels.
(Mermaid's own parser checks the charts in test_mermaid.py.)"""

from __future__ import annotations

import re

from copilot_driver.report import load_timeline, parse_timeline, render_markdown
from copilot_driver.report.gantt import FAILED_BARS, MAX_BARS, gantt_chart
from helpers.report_samples import (
    CHART_HEADER,
    TASK_LINE,
    TOOLS_AND_DENIAL,
    bash_call,
    event,
    many_calls,
    mermaid_block,
)


def _tasks(lines: list[str]) -> list[dict[str, str]]:
    return [match.groupdict() for line in lines if (match := TASK_LINE.match(line))]


def test_the_axis_starts_at_the_session_start() -> None:
    chart = gantt_chart(load_timeline(TOOLS_AND_DENIAL))

    # session.start at .656; the calls at .852, .899 and .899
    assert [(t["start"], t["end"]) for t in _tasks(chart.lines)] == [
        ("196", "229"),
        ("243", "317"),
        ("243", "315"),
    ]
    assert (chart.drawn, chart.timed, chart.calls) == (3, 3, 3)


def test_the_axis_format_suits_the_run_length() -> None:
    def axis(end_second: float) -> str:
        lines = [event("session.start", {}), *bash_call("c1", "sleep", end_second - 0.05)]
        return gantt_chart(parse_timeline(lines)).lines[3]

    # Zone-proof fields only: seconds since time 0, with milliseconds for short runs.
    assert axis(0.4) == "    axisFormat %s.%L s"
    assert axis(59) == "    axisFormat %s.%L s"
    assert axis(61) == "    axisFormat %s s"


def test_a_long_run_has_a_long_relative_axis() -> None:
    # 07:35:10 to 10:35:10 the next day: the events helper counts seconds from 07:35:10.
    lines = [event("session.start", {}), *bash_call("c1", "build", 27 * 3600.0)]
    (task,) = _tasks(gantt_chart(parse_timeline(lines)).lines)

    assert int(task["start"]) == 27 * 3600 * 1000
    assert int(task["end"]) - int(task["start"]) == 50


def test_at_most_max_bars_the_failed_first_then_the_slowest() -> None:
    timeline = parse_timeline(many_calls(2000))
    chart = gantt_chart(timeline)

    tasks = _tasks(chart.lines)
    assert len(tasks) == chart.drawn == MAX_BARS
    assert chart.calls == 2000
    numbers = [int(t["label"].removeprefix("bash echo ")) for t in tasks]
    assert numbers == sorted(numbers)  # drawn in time order
    failed = [t for t in tasks if t["tag"] != "done"]
    assert len(failed) == FAILED_BARS
    assert 7 in numbers  # the slowest call
    starts = [int(t["start"]) for t in tasks]
    assert starts == sorted(starts)
    markdown = render_markdown(timeline)
    assert "The chart draws 100 of 2,000 tool calls (1,900 not drawn)" in markdown


def test_all_bars_when_they_fit_and_untimed_calls_are_counted() -> None:
    lines = [
        *bash_call("c1", "a", 0),
        '{"type": "tool.execution_start", "data": {"toolCallId": "c2", "toolName": "x"}}',
    ]
    chart = gantt_chart(parse_timeline(lines))

    assert (chart.drawn, chart.timed, chart.calls) == (1, 1, 2)
    markdown = render_markdown(parse_timeline(lines))
    assert "not drawn" not in markdown
    assert "\n1 tool call without a timestamp.\n\n```mermaid\n" in markdown


def test_no_chart_without_a_timed_call() -> None:
    chart = gantt_chart(parse_timeline([event("user.message", {"content": "hi"})]))

    assert chart.lines == []
    assert "```mermaid" not in render_markdown(parse_timeline([]))


def test_mermaid_labels_are_sanitised() -> None:
    lines = [
        *bash_call("c1", "echo a:b; echo `c` # d %% e <br>", 0, ok=False),
        event(
            "tool.execution_start",
            {"toolCallId": "c2", "toolName": "title", "arguments": {"x": 1}},
            0.1,
        ),
    ]
    block = mermaid_block(render_markdown(parse_timeline(lines)))

    tasks = block[CHART_HEADER + 1 :]
    assert tasks == [
        "    bash echo a#58;b#59; echo #96;c#96; #35; d #37;#37; e #60;br#62; :crit, t1, 0, 50",
        '    tool title {"x"#58;1} :active, t2, 100, 101',
    ]
    for task in tasks:
        label = task.split(" :", 1)[0]
        assert not set(label) & set(":`%<>\n")
        assert re.sub(r"#\d+;", "", label).count("#") == 0  # every `#` opens an entity code
        assert re.sub(r"#\d+;", "", label).count(";") == 0


def test_labels_mermaid_would_read_as_statements_are_prefixed() -> None:
    names = ["gantt", "Section", "dateFormat", "2026-01-01", "accDescr{", "todayMarker", "ok"]
    lines = [
        event("tool.execution_start", {"toolCallId": f"c{n}", "toolName": name}, n / 10)
        for n, name in enumerate(names)
    ]
    labels = [t["label"] for t in _tasks(gantt_chart(parse_timeline(lines)).lines)]

    assert labels == [f"tool {name}" for name in names[:-1]] + ["ok"]
