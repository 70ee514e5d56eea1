"""The report's Mermaid charts, checked by Mermaid's own parser (tests/helpers/
mermaid_parse.mjs, on the Mermaid `make test` installs): the charts of real runs, of a
5,000-call run inside a bounded step summary, and of labels made to break it."""

from __future__ import annotations

import json
from pathlib import Path

from copilot_driver.report import (
    STEP_SUMMARY_LIMIT,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_step_summary,
)
from copilot_driver.report.gantt import MAX_BARS
from helpers.report_samples import (
    GUARD_STOP,
    POLICY_DENIAL_SESSION,
    SIDECAR_FAILURE,
    TOOLS_AND_DENIAL,
    bash_call,
    event,
    many_calls,
    mermaid_block,
    mermaid_parse,
)

MIB = 1024 * 1024
NASTY_NAMES = [
    "gantt",
    "title x",
    "section y",
    "dateFormat YYYY",
    "axisFormat %H",
    "todayMarker off",
    "excludes weekends",
    "click t1 call alert()",
    "accTitle: a",
    "accDescr { b }",
    "2026-01-01 x",
    "%%{init: {}}%%",
    "a:b;c#d",
    "`fence` ```",
    "<b>bold</b> &amp; <br/>",
    "line\nbreak\r\nand\ttab",
    "ünïcödé 😀 日本語",
    "(paren) [bracket] {brace}",
    "' \" \\",
    "",
    "   ",
    "x" * 500,
    "\x00\x07\x1b[31m",
    "\u2028\u2029\x85",
]


def _accepted(tmp_path: Path, *charts: list[str]) -> list[dict[str, object]]:
    completed = mermaid_parse(tmp_path, *charts)
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines()]


def test_a_5000_call_step_summary_is_small_and_its_chart_parses(tmp_path: Path) -> None:
    markdown = render_step_summary(SIDECAR_FAILURE, parse_timeline(many_calls(5000)))

    assert len(markdown.encode("utf-8")) < STEP_SUMMARY_LIMIT < MIB
    (report,) = _accepted(tmp_path, mermaid_block(markdown))
    assert report["type"] == "gantt"
    assert report["tasks"] == 1 + MAX_BARS  # the whole session, then the calls


def test_a_broken_chart_is_rejected(tmp_path: Path) -> None:
    broken = ["gantt", "    dateFormat x", "    section Turn 1", "    a call without its data"]

    completed = mermaid_parse(tmp_path, broken)

    assert completed.returncode == 1
    assert "Parse error" in completed.stderr


def test_a_task_with_a_bad_date_or_ending_before_it_starts_is_rejected(tmp_path: Path) -> None:
    header = ["gantt", "    dateFormat x", "    section Turn 1"]
    for task in ["    a :done, t1, soon, 5", "    a :done, t1, 10, 5"]:
        completed = mermaid_parse(tmp_path, [*header, task])
        assert completed.returncode == 1, task


def test_a_chart_over_mermaids_size_limit_is_rejected(tmp_path: Path) -> None:
    bars = [f"    call {n} :done, t{n}, {n}, {n + 1}" for n in range(2000)]

    completed = mermaid_parse(tmp_path, ["gantt", "    dateFormat x", *bars])

    assert completed.returncode == 1
    assert "maxTextSize" in completed.stderr


def test_the_real_runs_and_a_long_run_parse(tmp_path: Path) -> None:
    long_run = [event("session.start", {}), *bash_call("c1", "build", 5 * 3600.0)]
    timelines = [
        load_timeline(TOOLS_AND_DENIAL),
        load_timeline(GUARD_STOP),
        load_timeline(POLICY_DENIAL_SESSION),
        parse_timeline(long_run),
    ]
    charts = [mermaid_block(render_markdown(timeline)) for timeline in timelines]

    reports = _accepted(tmp_path, *charts)

    assert [report["tasks"] for report in reports] == [1 + 3, 1 + 2, 1 + 2, 1 + 1]


def test_labels_made_to_break_the_chart_parse(tmp_path: Path) -> None:
    lines = []
    for n, name in enumerate(NASTY_NAMES):
        for m, command in enumerate([name, f"echo {name}"]):
            call: dict[str, object] = {
                "toolCallId": f"c{n}-{m}",
                "toolName": name if m == 0 else "bash",
                "arguments": {"command": command},
            }
            lines += [
                event("tool.execution_start", call, n + m / 10),
                event("tool.execution_complete", {"toolCallId": call["toolCallId"]}, n + 0.5),
            ]
        lines.append(event("user.message", {"content": name}, n + 0.9))

    (report,) = _accepted(tmp_path, mermaid_block(render_markdown(parse_timeline(lines))))

    assert report["tasks"] == 1 + 2 * len(NASTY_NAMES)
