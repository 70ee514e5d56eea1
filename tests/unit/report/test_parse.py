"""`copilot_driver.report.parse`: events files read into a Timeline, the real ones and
the broken ones other drivers and crashed runs may leave behind; parsing never raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver import records
from copilot_driver.report import (
    Timeline,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_text,
)
from helpers.report_samples import (
    ANSWER,
    TASK_LINE,
    TOOLS_AND_DENIAL,
    UNESCAPED_PIPE,
    bash_call,
    event,
    mermaid_block,
    table_rows,
)

# --- the real files ---------------------------------------------------------------------


def test_real_tools_and_denial_is_parsed_into_calls_permissions_and_answer() -> None:
    timeline = load_timeline(TOOLS_AND_DENIAL)

    assert timeline.session_id == "3c6145b0-612d-4252-a7fe-5944c8ad1464"
    assert timeline.copilot_version == "1.0.102"
    assert [turn.prompt for turn in timeline.turns] == ["CLEANUP please"]
    assert timeline.turns[0].rounds == 3
    calls = timeline.tool_calls
    assert [(c.tool, c.what, c.outcome) for c in calls] == [
        ("bash", "git --version", "ok"),
        ("bash", "rm victim.txt", "DENIED"),
        ("view", "README.md", "ok"),
    ]
    # From the file's timestamps: .852 -> .885, .899 -> .973, .899 -> .971
    assert [c.duration_ms for c in calls] == pytest.approx([33, 74, 72])
    assert [p.summary for p in calls[1].permissions] == ["shell(rm victim.txt)"]
    assert calls[1].permissions[0].feedback == (
        "Tool invocation is not allowed by workflow tool permissions."
    )
    assert sorted((p.verdict, p.summary) for p in timeline.permissions) == [
        ("DENIED", "shell(rm victim.txt)"),
        ("approved", "read(/WORKSPACE-ROOT/workspace/README.md)"),
        ("approved", "shell(git --version)"),
    ]
    assert timeline.final_answer == ANSWER
    assert timeline.outcome == "answered"
    assert timeline.duration_ms == pytest.approx(408)
    assert (timeline.lines, timeline.events, timeline.skipped) == (25, 25, 0)
    assert not timeline.unknown_types


# --- what other drivers and broken runs leave behind ---------------------------------------


MESSY_LINES = [
    "this is not JSON",
    "[1, 2, 3]",
    json.dumps({"no": "type"}),
    event("session.start", {"sessionId": "s-1", "copilotVersion": 7}),
    event("future.thing", {"x": 1}, 0.1),
    json.dumps({"type": "future.thing"}),
    event("user.message", {"content": "first prompt\nwith a second line"}, 0.2),
    json.dumps({"type": "assistant.turn_start", "timestamp": "yesterday", "data": "oops"}),
    *bash_call("c1", "ls -la", 0.3),
    json.dumps({"type": "tool.execution_start", "data": {"toolCallId": "c2", "toolName": "x"}}),
    event("tool.execution_complete", {"toolCallId": "c9", "success": False, "error": "boom"}, 1),
    event("permission.requested", {"requestId": "r1", "permissionRequest": {"kind": "url"}}, 1),
    event("permission.completed", {"requestId": "r1", "result": {"kind": "denied-by-rules"}}, 1.1),
    event("permission.completed", {"requestId": "r-unknown"}, 1.2),
    event("assistant.message", {"content": "first answer"}, 1.3),
    event("user.message", {}, 2),
    event("tool.execution_start", {"toolCallId": "c3"}, 2.1),
    event("session.error", {"message": "the model went away"}, 2.5),
    "",
]


def test_messy_file_is_rendered_and_what_was_skipped_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(MESSY_LINES), encoding="utf-8")

    timeline = load_timeline(path)

    assert timeline.skipped == 3
    assert timeline.skip_examples == [
        "line 1: not JSON",
        "line 2: a JSON array, not an object",
        "line 3: no event type",
    ]
    assert timeline.unknown_types == {"future.thing": 2}
    assert timeline.untimed == 3
    assert timeline.orphan_completions == 1
    assert timeline.session_id == "s-1"
    assert timeline.copilot_version is None  # 7 is not a version string
    assert [turn.prompt for turn in timeline.turns] == ["first prompt\nwith a second line", ""]
    outcomes = {(c.tool, c.call_id): c.outcome for c in timeline.tool_calls}
    assert outcomes == {
        ("bash", "c1"): "ok",
        ("x", "c2"): "no result",
        ("?", "c9"): "FAILED",
        ("?", "c3"): "no result",
    }
    assert timeline.outcome == "error: the model went away"

    text = render_text(timeline)
    assert "Turn 1: first prompt with a second line" in text
    assert "permission  DENIED url(?)" in text
    assert "permission  unknown (request not recorded)" in text
    assert "            error: boom" in text
    assert "answer: first answer" in text
    assert "SESSION.ERROR: the model went away" in text
    assert "3 skipped (line 1: not JSON; line 2: a JSON array, not an object;" in text
    assert "event types not shown: future.thing x2" in text
    assert "3 events without a usable timestamp" in text
    assert "1 tool results without a start" in text

    markdown = render_markdown(timeline)
    assert "future.thing x2" in markdown
    assert "| Outcome | error: the model went away |" in markdown
    tasks = [TASK_LINE.match(line) for line in mermaid_block(markdown)]
    # c2 has no timestamp at all, so it has no place in the chart; the rest do.
    assert sorted(t["tag"] for t in tasks if t) == ["active", "crit", "done"]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("", encoding="utf-8")

    timeline = load_timeline(path)
    text = render_text(timeline)
    markdown = render_markdown(timeline)

    assert (timeline.lines, timeline.events, timeline.skipped) == (0, 0, 0)
    assert timeline.outcome == "no events"
    assert "No events." in text
    assert "input        0 lines, 0 events, 0 skipped" in text
    assert "No tool calls." in markdown
    assert "```mermaid" not in markdown


def test_web_fetch_shows_the_url_without_its_query() -> None:
    start = {
        "toolCallId": "c1",
        "toolName": "web_fetch",
        "arguments": {"url": "https://user:pw@example.com/a?token=s3cret#frag"},
    }
    timeline = parse_timeline([event("tool.execution_start", start)])

    assert timeline.tool_calls[0].what == "https://example.com/a"
    assert "s3cret" not in render_text(timeline) + render_markdown(timeline)


# --- never raises ---------------------------------------------------------------------

TYPES = [
    "session.start",
    "session.shutdown",
    "session.error",
    "user.message",
    "assistant.turn_start",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "permission.requested",
    "permission.completed",
    "abort",
    "guard.tool_denials_exceeded",
    "system.message",
]

FIELDS = [
    "sessionId",
    "copilotVersion",
    "context",
    "cwd",
    "content",
    "toolCallId",
    "toolName",
    "mcpServerName",
    "arguments",
    "command",
    "path",
    "url",
    "success",
    "result",
    "error",
    "message",
    "code",
    "requestId",
    "permissionRequest",
    "kind",
    "fullCommandText",
    "serverName",
    "feedback",
    "denialCount",
    "threshold",
    "reason",
]

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["c1", "c2", "bash", "shell", "url", "approved", "denied-by-rules"])
)

keys = st.sampled_from(FIELDS) | st.text(max_size=6)

json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)

timestamps = st.sampled_from(
    ["2026-11-21T07:35:10.123000+00:00", "2026-11-21T07:35:11Z", "2026-11-21", "0001-01-01T00:00"]
) | st.text(max_size=30)

events = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(TYPES) | st.text(max_size=12) | json_values,
        "timestamp": timestamps | json_values,
        "data": st.dictionaries(keys, json_values, max_size=6) | json_values,
        "id": st.text(max_size=4),
    },
)

lines = st.lists(
    st.text(max_size=40) | events.map(json.dumps) | json_values.map(json.dumps), max_size=15
)


@settings(max_examples=300, deadline=None)
@given(lines)
def test_parse_never_raises_and_renders_safe_markdown(raw: list[str]) -> None:
    timeline = parse_timeline(raw)

    assert isinstance(timeline, Timeline)
    assert isinstance(render_text(timeline), str)
    markdown = render_markdown(timeline)
    assert isinstance(markdown, str)
    if timeline.tool_calls:
        assert all(
            len(UNESCAPED_PIPE.findall(row)) == 7 for row in table_rows(markdown, "| Turn |")
        )
    if "```mermaid" in markdown:
        for task in mermaid_block(markdown)[4:]:
            assert task.startswith("    section Turn ") or TASK_LINE.match(task), task


def test_the_budget_stop_is_a_notice_not_an_unknown_type() -> None:
    record = records.budget_record("bash", 4, 3, "stopped the session")
    timeline = parse_timeline([json.dumps(record)])
    assert not timeline.unknown_types
    (notice,) = timeline.notices
    assert notice.kind == "budget stop"
    assert notice.message == "tool call 4 past a budget of 3; stopped the session"
