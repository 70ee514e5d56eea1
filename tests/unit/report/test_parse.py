"""`copilot_driver.report.parse`: events files read into a Timeline, the real ones and
the broken ones other drivers and crashed runs may leave behind; parsing never raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings

from copilot_driver import records
from copilot_driver.report import (
    Timeline,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_text,
)
from copilot_driver.report.parse import PROMPT_NOT_RECORDED
from copilot_driver.vocabulary import Denial
from helpers.report_samples import (
    ANSWER,
    CHART_HEADER,
    POLICY_DENIAL_SESSION,
    POLICY_REASON,
    TASK_LINE,
    TOOLS_AND_DENIAL,
    UNESCAPED_PIPE,
    bash_call,
    event,
    event_lines,
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
    assert [turn.prompt for turn in timeline.turns] == [
        "first prompt\nwith a second line",
        PROMPT_NOT_RECORDED,
    ]
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
    assert timeline.outcome == "no events yet"
    assert "\nNo events yet: the file holds no event record (a run still starting, or one " in text
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


@settings(max_examples=300, deadline=None)
@given(event_lines)
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
        for task in mermaid_block(markdown)[CHART_HEADER:]:
            assert task.startswith("    section Turn ") or TASK_LINE.match(task), task


def test_the_budget_stop_is_a_notice_not_an_unknown_type() -> None:
    record = records.budget_record("bash", "s", 13, 3, "stopped the session")
    timeline = parse_timeline([json.dumps(record)])
    assert not timeline.unknown_types
    (notice,) = timeline.notices
    assert notice.kind == "budget stop"
    assert notice.message == "tool call 13 past a budget of 3; stopped the session"


def test_budget_debits_are_known_and_only_denied_calls_are_noticed() -> None:
    lines = [json.dumps(records.budget_debit_record("bash", "s", n, 2)) for n in (1, 2, 3)]
    timeline = parse_timeline(lines)
    assert not timeline.unknown_types
    (notice,) = timeline.notices
    assert notice.kind == "budget denial"
    assert notice.message.startswith("tool call 3 (bash) past a budget of 2: denied")


# --- the driver's policy.denial records --------------------------------------------------


def test_real_policy_denial_is_matched_to_its_permission() -> None:
    timeline = load_timeline(POLICY_DENIAL_SESSION)

    assert not timeline.unknown_types  # policy.denial is read, not counted as unknown
    denied = [p for p in timeline.permissions if p.denied]
    assert len(denied) == 1
    policy = denied[0].policy
    assert policy is not None
    assert (policy.summary, policy.reason, policy.allow_rule) == (
        "shell(rm victim.txt)",
        POLICY_REASON,
        "shell(rm victim.txt)",
    )
    assert denied[0].result == "denied-interactively-by-user"  # the runtime's, kept
    assert [p.policy for p in timeline.permissions if p.approved] == [None]
    assert timeline.result is not None
    assert (timeline.result.exit_code, timeline.result.error_kind) == (0, None)


def _denial(summary: str, reason: str, rule: str | None, call_id: str | None, second: float) -> str:
    record = records.denial_record(Denial("shell", summary, reason, rule, call_id))
    record["timestamp"] = f"2026-11-21T07:35:{10 + second:06.3f}+00:00"
    return json.dumps(record)


def _permission(request_id: str, command: str, call_id: str | None, second: float) -> list[str]:
    request = {"kind": "shell", "fullCommandText": command}
    completed: dict[str, object] = {"requestId": request_id, "result": {"kind": "denied-x"}}
    requested: dict[str, object] = {"requestId": request_id, "permissionRequest": request}
    if call_id is not None:
        requested["toolCallId"] = completed["toolCallId"] = call_id
    return [
        event("permission.requested", requested, second),
        event("permission.completed", completed, second + 0.01),
    ]


def test_denials_match_by_tool_call_then_by_summary_in_order() -> None:
    lines = [
        *_permission("r1", "rm a", "c1", 0.1),
        *_permission("r2", "rm a", None, 0.2),
        *_permission("r3", "rm a", None, 0.3),
        # written just before each completion in real files; any order matches
        _denial("shell(rm a)", "second", None, None, 0.31),
        _denial("shell(rm a)", "by id", "shell(rm a)", "c1", 0.32),
        _denial("shell(rm a)", "third", None, None, 0.33),
    ]
    timeline = parse_timeline(lines)

    reasons = {p.request_id: p.policy.reason if p.policy else None for p in timeline.permissions}
    assert reasons == {"r1": "by id", "r2": "second", "r3": "third"}


def test_a_denial_without_a_permission_event_is_shown_as_one() -> None:
    lines = [
        *bash_call("c1", "rm x", 0.1, ok=False),
        _denial("shell(rm x)", "not allowed", "shell(rm x)", "c1", 0.12),
        _denial("shell(curl y)", "never", None, None, 0.13),
    ]
    timeline = parse_timeline(lines)

    (attached,) = timeline.tool_calls[0].permissions
    assert attached.verdict == "DENIED"
    assert attached.policy is not None
    assert attached.policy.reason == "not allowed"
    assert timeline.tool_calls[0].outcome == "DENIED"
    loose = [p for p in timeline.permissions if p.tool_call_id is None]
    assert [(p.summary, p.verdict) for p in loose] == [("shell(curl y)", "DENIED")]
    text = render_text(timeline)
    assert (
        "              denied: not allowed; the rule that would allow it:\n"
        "                shell(rm x)\n"
    ) in text
    assert "denied: never; no allow rule can permit this" in text


def test_an_undecided_permission_takes_the_policy_denial() -> None:
    requested = {"requestId": "r1", "toolCallId": "c1", "permissionRequest": {"kind": "shell"}}
    lines = [
        event("permission.requested", requested, 0.1),
        _denial("whatever", "no", None, "c1", 0.2),
    ]
    (permission,) = parse_timeline(lines).permissions

    assert permission.verdict == "DENIED"
    assert permission.policy is not None


def test_policy_denial_fields_of_the_wrong_type_are_missing() -> None:
    data = {"requestSummary": 3, "reason": ["x"], "allowRule": {"a": 1}, "toolCallId": 7}
    (permission,) = parse_timeline([event("policy.denial", data)]).permissions

    assert permission.policy is not None
    assert permission.summary == "unknown"
    assert permission.policy.reason == "(no reason recorded)"
    assert permission.policy.allow_rule is None


def test_a_session_folder_is_read_with_its_result(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(event("user.message", {"content": "hi"}) + "\n")
    (tmp_path / "result.json").write_text(
        json.dumps({"exitCode": 3, "errorKind": "session_error", "error": "the model went away"})
    )

    timeline = load_timeline(tmp_path)

    assert [turn.prompt for turn in timeline.turns] == ["hi"]
    assert timeline.result is not None
    assert (timeline.result.exit_code, timeline.result.error_kind, timeline.result.error) == (
        3,
        "session_error",
        "the model went away",
    )


def test_a_shell_command_that_exited_non_zero_is_a_failure_in_every_view() -> None:
    """The runtime says `success: true` for `git status` outside a repository (exit 128);
    its `shellExecution.exitCode` is what the report believes."""
    lines = [
        event("user.message", {}),
        event(
            "tool.execution_start",
            {"toolCallId": "c1", "toolName": "bash", "arguments": {"command": "git status"}},
            0.1,
        ),
        event(
            "tool.execution_complete",
            {
                "toolCallId": "c1",
                "success": True,
                "shellExecution": {"exitCode": 128},
                "result": {"content": "fatal: not a git repository"},
            },
            0.2,
        ),
    ]
    timeline = parse_timeline(lines)
    (call,) = timeline.tool_calls
    assert call.outcome == "FAILED"
    assert call.error == "the command exited with status 128"
    assert "FAILED" in render_text(timeline)
    assert "FAILED" in render_markdown(timeline)
    assert " ok" not in render_text(timeline).split("git status", 1)[1].splitlines()[0]
    assert timeline.turns[0].prompt == "(the prompt's text is not recorded)"
