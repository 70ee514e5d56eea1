"""`copilot_driver.report.markdown`: the report for GitHub, bounded, with its chart."""

from __future__ import annotations

from copilot_driver.report import STEP_SUMMARY_LIMIT, load_timeline, parse_timeline, render_markdown
from copilot_driver.report.markdown import (
    CALL_ROWS_FIRST,
    CALL_ROWS_LAST,
    FILES_LISTED,
    LISTED,
    code,
)
from copilot_driver.vocabulary import RunResult
from helpers.report_samples import (
    ANSWER,
    CHART_HEADER,
    GUARD_STOP,
    POLICY_DENIAL_SESSION,
    POLICY_REASON,
    TASK_LINE,
    TOOLS_AND_DENIAL,
    UNESCAPED_PIPE,
    bash_call,
    event,
    many_calls,
    mermaid_block,
    model_metrics,
    shutdown,
    table_rows,
)


def test_real_tools_and_denial_as_markdown() -> None:
    markdown = render_markdown(load_timeline(TOOLS_AND_DENIAL))

    assert markdown.startswith("## Copilot session timeline\n")
    assert "| Session | 3c6145b0-612d-4252-a7fe-5944c8ad1464 (CLI 1.0.102) |" in markdown
    assert "| Time | 408 ms event span; model 24 ms, tools 107 ms |" in markdown
    assert "| Tool calls | 3 (2 ok, 1 denied) |" in markdown
    assert "| Premium requests | 0 |" in markdown
    assert (
        "| Files changed | none by the editing tools (create, edit); not listed: what shell "
        "commands changed (1 ran) |"  # git --version ran; rm victim.txt was denied
    ) in markdown
    assert "| Outcome | answered |" in markdown
    assert "| Exit code |" not in markdown  # no result.json beside this file
    assert table_rows(markdown, "| Model | Requests |") == ["| gpt-4.1 | 3 | 30 | 15 | 0 | 0 |"]
    assert table_rows(markdown, "| Turn |") == [
        "| 1 | +0.20s | bash | git --version | ok | 33 ms |",
        "| 1 | +0.24s | bash | rm victim.txt | DENIED | 74 ms |",
        "| 1 | +0.24s | view | README.md | ok | 72 ms |",
    ]
    denials = markdown.split("### Denied permissions", 1)[1].split("###", 1)[0]
    # A file without the driver's policy.denial: the runtime's feedback and kind.
    assert "- shell(rm victim.txt): Tool invocation is not allowed" in denials
    assert "(denied-interactively-by-user)" in denials
    assert f"### Final answer\n\n> {ANSWER}\n" in markdown
    assert mermaid_block(markdown) == [
        "gantt",
        "    title Tool calls, seconds since the session's first event",
        "    dateFormat x",
        "    axisFormat %s.%L s",
        "    todayMarker off",
        "    section Session",
        "    whole session :s0, 0, 408",
        "    section Turn 1",
        "    bash git --version :done, t1, 196, 229",
        "    bash rm victim.txt :crit, t2, 243, 317",
        "    view README.md :done, t3, 243, 315",
    ]
    assert markdown.endswith("<sub>report v2. Read 25 lines, 25 events, 0 skipped.</sub>\n")


def test_real_policy_denial_shows_the_reason_and_the_allow_rule() -> None:
    markdown = render_markdown(load_timeline(POLICY_DENIAL_SESSION))

    denials = markdown.split("### Denied permissions\n\n", 1)[1].split("\n\n", 1)[0]
    assert denials == (
        "- shell(rm victim.txt): denied: `rm victim.txt` matches no shell rule; "
        "allow with `shell(rm victim.txt)`"
    )
    assert POLICY_REASON == "`rm victim.txt` matches no shell rule"
    assert "denied-interactively-by-user" not in markdown
    assert "| Exit code | 0 |" in markdown
    assert "| Error |" not in markdown


def test_real_guard_stop_as_markdown() -> None:
    markdown = render_markdown(load_timeline(GUARD_STOP))

    assert "| Outcome | stopped by the denial guard (2/2 denials) |" in markdown
    assert "| 1 | +0.30s | bash | rm file1.txt | no result | - |" in markdown
    assert "- shell(rm file0.txt): " in markdown
    assert "- shell(rm file1.txt): " in markdown
    assert "- **guard stop** (+0.34s): 2/2 denials; stopped the session" in markdown
    assert "_No final answer._" in markdown
    tasks = [TASK_LINE.match(line) for line in mermaid_block(markdown)[CHART_HEADER:]]
    assert [(t["tag"], int(t["end"]) - int(t["start"])) for t in tasks if t] == [
        ("crit", 69),
        ("active", 1),
    ]


def test_usage_files_and_an_error_result() -> None:
    files = [f"src/module_{n}.py" for n in range(FILES_LISTED + 5)]
    lines = [
        event("user.message", {"content": "change things"}),
        shutdown(
            {"big-model": model_metrics(1234, 2.5, (1_234_567, 8910, 11, 12))},
            accountingSnapshot={"totalPremiumRequestCost": 3},
            totalApiDurationMs=61_500,
            codeChanges={"filesModified": files, "linesAdded": 120, "linesRemoved": 7},
        ),
    ]
    markdown = render_markdown(parse_timeline(lines))

    assert table_rows(markdown, "| Model | Requests |") == [
        "| big-model | 1,234 | 1,234,567 | 8,910 | 11 | 12 |"
    ]
    assert "| Premium requests | 3 |" in markdown  # the snapshot's total, not the model's cost
    assert (
        "| Files changed | 35 files (+120 -7) by the editing tools (create, edit); "
        "not listed: what shell commands changed (none ran) |"
    ) in markdown
    assert "model 1m01s" in markdown
    section = "### Files changed by the editing tools (create, edit)\n\n"
    listed = markdown.split(section, 1)[1].split("\n\n", 1)[0].split("\n")
    assert listed[0] == "- src/module\\_0.py"
    assert len(listed) == FILES_LISTED + 1
    assert listed[-1] == "- _... and 5 more files_"


def test_exit_code_error_kind_and_error_from_the_result() -> None:
    timeline = parse_timeline([event("user.message", {"content": "x"})])
    timeline.result = RunResult(1, "session_error", "the model went | away")
    markdown = render_markdown(timeline)

    assert "| Exit code | 1 (session\\_error) |" in markdown
    assert "| Error | the model went \\| away |" in markdown


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
    assert rows[0] == '| 1 | +0.00s | we\\|ird tool | {"q":"a\\|b"} | no result | - |'
    assert rows[1] == "| 1 | +0.10s | bash | grep 'a\\|b' file \\| wc -l | ok | 50 ms |"
    assert all(len(UNESCAPED_PIPE.findall(row)) == 7 for row in rows)
    assert "| Outcome | error: line one line \\| two |" in markdown
    assert "- **session.error** (+0.40s): line one<br>line \\| two" in markdown


def test_code_spans_hold_any_backticks() -> None:
    assert code("shell(rm x)") == "`shell(rm x)`"
    assert code("shell(echo `id`)") == "``shell(echo `id`)``"
    assert code("`a``") == "``` `a`` ```"
    assert code("a\nb") == "`a b`"


def test_the_tool_call_table_keeps_its_first_and_last_rows() -> None:
    count = 5000
    timeline = parse_timeline(many_calls(count))
    markdown = render_markdown(timeline)

    rows = table_rows(markdown, "| Turn |")
    assert len(rows) == CALL_ROWS_FIRST + 1 + CALL_ROWS_LAST
    assert "| echo 0 |" in rows[0]
    left_out = count - CALL_ROWS_FIRST - CALL_ROWS_LAST
    assert rows[CALL_ROWS_FIRST] == f"| | | | _{left_out:,} calls not shown_ | | |"
    assert f"| echo {count - 1} |" in rows[-1]
    assert all(len(UNESCAPED_PIPE.findall(row)) == 7 for row in rows)
    denials = markdown.split("### Denied permissions\n\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert len(denials) == LISTED + 1
    denied = sum(p.denied for p in timeline.permissions)
    assert denied > LISTED
    assert denials[-1] == f"- _... and {denied - LISTED:,} more denials_"
    assert denials[0] == "- shell(echo 69): denied: no rule; allow with `shell(echo 69)`"
    assert len(markdown.encode()) < STEP_SUMMARY_LIMIT


def test_free_text_is_capped() -> None:
    huge = "x" * 100_000
    lines = [
        event("session.start", {"sessionId": huge, "selectedModel": huge}),
        event("user.message", {"content": huge}),
        event("tool.execution_start", {"toolCallId": "c1", "toolName": huge, "arguments": huge}),
        event("session.error", {"message": huge}),
        event("assistant.message", {"content": huge}),
    ]
    markdown = render_markdown(parse_timeline(lines))

    assert len(markdown) < 20_000
    assert max(len(line) for line in markdown.splitlines()) < 5_000
