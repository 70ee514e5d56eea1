"""`copilot_driver.report.markdown`: the report for GitHub, with its Mermaid chart."""

from __future__ import annotations

from copilot_driver.report import load_timeline, parse_timeline, render_markdown
from helpers.report_samples import (
    ANSWER,
    GUARD_STOP,
    TASK_LINE,
    TOOLS_AND_DENIAL,
    UNESCAPED_PIPE,
    bash_call,
    event,
    mermaid_block,
    table_rows,
)


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
