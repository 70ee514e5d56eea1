"""`copilot_driver.timeline`: the run report, on real events files and on broken ones.

The two files under tests/data were captured from the real runtime (a scripted model,
a real Copilot CLI sidecar, this project's driver); the hand-written ones cover what
other drivers and crashed runs may leave behind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.timeline import (
    Timeline,
    load_timeline,
    main,
    parse_timeline,
    render_markdown,
    render_text,
)

DATA = Path(__file__).resolve().parents[2] / "data"
TOOLS_AND_DENIAL = DATA / "events-tools-and-denial.jsonl"
GUARD_STOP = DATA / "events-guard-stop.jsonl"
ANSWER = "Git is installed; I was not allowed to remove victim.txt."

CALL_LINE = re.compile(
    r"^ +(?P<at>[+-]\d+\.\d\ds) +(?P<tool>\S+) +(?P<what>.+?) +"
    r"(?P<outcome>ok|DENIED|FAILED|no result)(?: +(?P<ms>\d+) ms)?$"
)
TASK_LINE = re.compile(
    r"^    (?P<label>[^:]+) :(?P<tag>done|crit|active), t(?P<n>\d+), (?P<start>\d+), (?P<end>\d+)$"
)
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def event(event_type: str, data: dict[str, Any], second: float = 0.0) -> str:
    """One events-file line, `second` seconds after 07:35:10 UTC."""
    timestamp = f"2026-11-21T07:35:{10 + second:06.3f}+00:00"
    return json.dumps({"type": event_type, "timestamp": timestamp, "data": data})


def bash_call(call_id: str, command: str, second: float, *, ok: bool = True) -> list[str]:
    return [
        event(
            "tool.execution_start",
            {"toolCallId": call_id, "toolName": "bash", "arguments": {"command": command}},
            second,
        ),
        event("tool.execution_complete", {"toolCallId": call_id, "success": ok}, second + 0.05),
    ]


def call_lines(text: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := CALL_LINE.match(line))]


def mermaid_block(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("```mermaid")
    return lines[start + 1 : lines.index("```", start)]


def table_rows(markdown: str, header: str) -> list[str]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


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


def test_real_tools_and_denial_as_text() -> None:
    text = render_text(load_timeline(TOOLS_AND_DENIAL))

    assert text.startswith("Copilot session 3c6145b0-612d-4252-a7fe-5944c8ad1464\n")
    assert "CLI 1.0.102" in text
    assert "started 2026-11-21 07:32:55.656 UTC, lasted 408 ms" in text
    assert "Turn 1: CLEANUP please" in text
    calls = call_lines(text)
    assert [(m["tool"], m["what"], m["outcome"]) for m in calls] == [
        ("bash", "git --version", "ok"),
        ("bash", "rm victim.txt", "DENIED"),
        ("view", "README.md", "ok"),
    ]
    assert [int(m["ms"]) for m in calls] == [33, 74, 72]
    assert all(float(m["at"].rstrip("s")) >= 0 for m in calls)
    assert "            approved shell(git --version)\n" in text
    assert "            DENIED shell(rm victim.txt)\n" in text
    assert "feedback: Tool invocation is not allowed by workflow tool permissions." in text
    assert f"Final answer:\n  {ANSWER}\n" in text
    assert "  tool calls   3 (2 ok, 1 denied)" in text
    assert "  permissions  2 approved, 1 denied" in text
    assert "  input        25 lines, 25 events, 0 skipped" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_real_tools_and_denial_as_markdown() -> None:
    markdown = render_markdown(load_timeline(TOOLS_AND_DENIAL))

    assert markdown.startswith("## Copilot session timeline\n")
    assert "| Session | 3c6145b0-612d-4252-a7fe-5944c8ad1464 (CLI 1.0.102) |" in markdown
    assert "| Tool calls | 3 (2 ok, 1 denied) |" in markdown
    assert "| Outcome | answered |" in markdown
    assert table_rows(markdown, "| Turn |") == [
        "| 1 | +0.20s | bash | git --version | ok | 33 ms |",
        "| 1 | +0.24s | bash | rm victim.txt | DENIED | 74 ms |",
        "| 1 | +0.24s | view | README.md | ok | 72 ms |",
    ]
    denials = markdown.split("### Denied permissions", 1)[1].split("###", 1)[0]
    assert "- shell(rm victim.txt): Tool invocation is not allowed" in denials
    assert "git --version" not in denials
    assert f"### Final answer\n\n> {ANSWER}\n" in markdown
    assert mermaid_block(markdown) == [
        "gantt",
        "    title Tool calls",
        "    dateFormat x",
        "    axisFormat %M:%S",
        "    section Turn 1",
        "    bash git --version :done, t1, 1795246375852, 1795246375885",
        "    bash rm victim.txt :crit, t2, 1795246375899, 1795246375973",
        "    view README.md :done, t3, 1795246375899, 1795246375971",
    ]


def test_real_guard_stop_as_text() -> None:
    timeline = load_timeline(GUARD_STOP)
    text = render_text(timeline)

    assert timeline.guard_stop is not None
    assert (timeline.guard_stop.denial_count, timeline.guard_stop.threshold) == ("2", "2")
    assert "outcome: stopped by the denial guard (2/2 denials)" in text
    calls = call_lines(text)
    assert [(m["what"], m["outcome"], m["ms"]) for m in calls] == [
        ("rm file0.txt", "DENIED", "69"),
        ("rm file1.txt", "no result", None),
    ]
    assert text.count("DENIED shell(rm file") == 2
    assert "GUARD STOP: 2/2 denials; stopped the session" in text
    assert "ABORT: user_initiated" in text
    assert "Final answer: (none)" in text
    assert "  tool calls   2 (0 ok, 1 denied, 1 no result)" in text
    assert "  permissions  0 approved, 2 denied" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_real_guard_stop_as_markdown() -> None:
    markdown = render_markdown(load_timeline(GUARD_STOP))

    assert "| Outcome | stopped by the denial guard (2/2 denials) |" in markdown
    assert "| 1 | +0.30s | bash | rm file1.txt | no result | - |" in markdown
    assert "- shell(rm file0.txt): " in markdown
    assert "- shell(rm file1.txt): " in markdown
    assert "- **guard stop** (+0.34s): 2/2 denials; stopped the session" in markdown
    assert "_No final answer._" in markdown
    tasks = [TASK_LINE.match(line) for line in mermaid_block(markdown)[5:]]
    assert [(t["tag"], int(t["end"]) - int(t["start"])) for t in tasks if t] == [
        ("crit", 69),
        ("active", 1),
    ]


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


def test_markdown_cells_escape_pipes_and_newlines() -> None:
    lines = [
        event(
            "tool.execution_start",
            {"toolCallId": "c1", "toolName": "we|ird\ntool", "arguments": {"q": "a|b"}},
        ),
        *bash_call("c2", "grep 'a|b' file | wc -l", 0.1),
        event("user.message", {"content": "x"}, 0.3),
        event("session.error", {"message": "line one\nline | two"}, 0.4),
    ]
    markdown = render_markdown(parse_timeline(lines))

    rows = table_rows(markdown, "| Turn |")
    assert rows[0] == '| 1 | +0.00s | we\\|ird<br>tool | {"q":"a\\|b"} | no result | - |'
    assert rows[1] == "| 1 | +0.10s | bash | grep 'a\\|b' file \\| wc -l | ok | 50 ms |"
    assert all(len(UNESCAPED_PIPE.findall(row)) == 7 for row in rows)
    assert "| Outcome | error: line one line \\| two |" in markdown
    assert "- **session.error** (+0.40s): line one<br>line \\| two" in markdown


def test_mermaid_labels_are_sanitised() -> None:
    lines = [
        *bash_call("c1", "echo a:b; echo `c` # d %% e", 0, ok=False),
        event(
            "tool.execution_start",
            {"toolCallId": "c2", "toolName": "title", "arguments": {"x": 1}},
            0.1,
        ),
    ]
    block = mermaid_block(render_markdown(parse_timeline(lines)))

    tasks = block[5:]
    assert tasks == [
        "    bash echo a b echo c d e :crit, t1, 1795246510000, 1795246510050",
        '    tool title {"x" 1} :active, t2, 1795246510100, 1795246510101',
    ]
    for task in tasks:
        label = task.split(" :", 1)[0]
        assert not set(label) & set(":;#`%\n")


def test_web_fetch_shows_the_url_without_its_query() -> None:
    start = {
        "toolCallId": "c1",
        "toolName": "web_fetch",
        "arguments": {"url": "https://user:pw@example.com/a?token=s3cret#frag"},
    }
    timeline = parse_timeline([event("tool.execution_start", start)])

    assert timeline.tool_calls[0].what == "https://example.com/a"
    assert "s3cret" not in render_text(timeline) + render_markdown(timeline)


def test_long_commands_stay_within_the_terminal() -> None:
    lines = [
        event("user.message", {"content": "p" * 300}),
        *bash_call("c1", "echo " + "x" * 300, 0.1),
        event("assistant.message", {"content": "a" * 300 + "\n" + "b\n" * 20}, 0.2),
    ]
    text = render_text(parse_timeline(lines))

    assert max(len(line) for line in text.splitlines()) <= 100
    assert "  ... (15 more lines)" in text


def test_the_examples_in_the_docs_are_real_renders() -> None:
    docs = (DATA.parent.parent / "docs" / "timeline.md").read_text(encoding="utf-8")
    timeline = load_timeline(TOOLS_AND_DENIAL)

    text_section = docs.split("## `text`", 1)[1]
    text_example = text_section.split("```\n", 1)[1].split("\n```\n", 1)[0]
    markdown_example = docs.split("````markdown\n", 1)[1].split("````\n", 1)[0]
    assert text_example + "\n" == render_text(timeline)
    assert markdown_example == render_markdown(timeline)


# --- the command ----------------------------------------------------------------------


def test_main_markdown_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(TOOLS_AND_DENIAL), "--format", "markdown"]) == 0

    out, err = capsys.readouterr()
    assert out.startswith("## Copilot session timeline\n")
    assert "```mermaid\ngantt\n" in out
    assert err == ""


def test_main_text_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(GUARD_STOP)]) == 0

    out, _ = capsys.readouterr()
    assert out == render_text(load_timeline(GUARD_STOP))


def test_main_missing_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"

    assert main([str(missing)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("timeline: error: cannot read ")
    assert str(missing) in err


def test_main_survives_lone_surrogates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"type": "user.message", "data": {"content": "bad \\ud800 text"}}\n')

    assert main([str(path)]) == 0

    assert "Turn 1: bad ? text" in capsys.readouterr().out


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
