"""What a new user met in the report (issue 29), rendered for real: two durations that
disagreed without saying why, an answer cut mid-word, tables with empty headers, a chart
axis without a unit or a 0 and colours without a legend, and a failed command that must
be a failure in every view. (The command's PATH handling is in test_cli.py.)"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from copilot_driver.report import (
    RunOutcome,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_step_summary,
    render_text,
)
from copilot_driver.report.gantt import LEGEND
from helpers.report_samples import (
    CHART_HEADER,
    POLICY_DENIAL_SESSION,
    SIDECAR_FAILURE,
    TASK_LINE,
    bash_call,
    event,
    mermaid_block,
    mermaid_parse,
    table_rows,
)

WORDS = "The quick brown fox jumps over the lazy dog. "


def _session_with_result(tmp_path: Path, **result: object) -> Path:
    """The real session, its result.json's fields replaced by `result`."""
    folder = tmp_path / "session"
    shutil.copytree(POLICY_DENIAL_SESSION, folder)
    recorded = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    (folder / "result.json").write_text(json.dumps({**recorded, **result}), encoding="utf-8")
    return folder


def _answered(answer: str) -> list[str]:
    return [
        event("session.start", {"sessionId": "s"}),
        event("user.message", {"content": "go"}, 0.1),
        event("assistant.message", {"content": answer}, 0.2),
    ]


# --- 2. the two durations, each saying what it measures ------------------------------------


def test_the_event_span_and_the_drivers_duration_are_labelled_apart(tmp_path: Path) -> None:
    timeline = load_timeline(_session_with_result(tmp_path, durationMs=2638))

    text = render_text(timeline)
    assert "lasted" not in text
    assert " wall" not in text
    assert "  event span   261 ms, from the session's first event to its last\n" in text
    assert (
        "  driver time  2.64 s, from sending the prompt to completion (result.json durationMs)\n"
    ) in text
    markdown = render_markdown(timeline)
    assert "| Time | 261 ms event span; model 19 ms, tools 62 ms |" in markdown
    assert (
        "| Driver time | 2.64 s, from sending the prompt to completion (result.json durationMs) |"
    ) in markdown


def test_without_a_duration_in_result_json_there_is_no_driver_time(tmp_path: Path) -> None:
    timeline = load_timeline(_session_with_result(tmp_path, durationMs="soon"))

    assert "driver time" not in render_text(timeline)
    assert "| Driver time |" not in render_markdown(timeline)
    assert "  event span   261 ms," in render_text(timeline)


# --- 2. the answer: whole where it fits, else cut after a word, saying how much ----------


def test_a_long_answer_is_cut_after_a_whole_word_in_markdown() -> None:
    answer = WORDS * 100  # 4,500 characters on one line: over the 4,000 of the markdown
    markdown = render_markdown(parse_timeline(_answered(answer)))

    quote = markdown.split("### Final answer\n\n", 1)[1].split("\n\n", 1)[0].split("\n")
    shown = quote[0].removeprefix("> ").removesuffix(" …")
    assert quote[0].endswith(" …")
    assert answer.startswith(shown + " ")  # a whole number of words
    assert len(shown) <= 4000
    left_out = len(answer.rstrip()) - len(shown)
    assert quote[1:] == [">", f"> _(answer cut: {left_out:,} more characters not shown)_"]


def test_an_answer_that_fits_is_shown_whole_in_both_renderings() -> None:
    answer = WORDS * 8  # 360 characters: wider than a terminal, within every cap
    timeline = parse_timeline(_answered(answer))

    text = render_text(timeline)
    block = text.split("Final answer:\n", 1)[1].split("\n\n", 1)[0]
    assert " ".join(block.split()) == answer.strip()  # wrapped, nothing dropped
    assert max(len(line) for line in block.split("\n")) <= 96
    assert "..." not in block
    assert "answer cut" not in text
    assert f"> {answer.strip()}\n" in render_markdown(timeline)


def test_a_long_answer_is_wrapped_then_cut_after_a_whole_word_in_text() -> None:
    answer = WORDS * 60  # 2,700 characters: over the text's 1,500
    text = render_text(parse_timeline(_answered(answer)))

    block = text.split("Final answer:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    *shown_lines, note = block
    assert shown_lines[-1].endswith(" ...")
    shown = " ".join(" ".join(shown_lines).removesuffix(" ...").split())
    assert answer.startswith(shown + " ")
    left_out = len(answer.rstrip()) - len(shown)
    assert note == f"  (answer cut: {left_out:,} more characters not shown)"


# --- 3. tables with headers, a chart read in seconds from 0, with a legend ---------------

_HEADER = re.compile(r"^\|(.*)\|\n\|[-:|]+\|$", re.MULTILINE)


def _headers(markdown: str) -> list[list[str]]:
    return [[cell.strip() for cell in m.group(1).split("|")] for m in _HEADER.finditer(markdown)]


def test_no_table_has_an_empty_header() -> None:
    timeline = load_timeline(POLICY_DENIAL_SESSION)
    failed = RunOutcome(1, "session_error", "The model went away", "It did.")
    renders = [
        render_markdown(timeline),
        render_step_summary(RunOutcome(0, None, None, None), timeline),
        render_step_summary(failed, timeline),
        render_step_summary(SIDECAR_FAILURE, None),
    ]

    for markdown in renders:
        headers = _headers(markdown)
        assert headers, markdown
        for header in headers:
            assert all(header), header
    step_summary = renders[1]
    assert "### Session\n\n| Field | Value |\n|---|---|\n| Session | ba2f267c-" in step_summary


def test_the_chart_axis_reads_seconds_from_0_and_a_legend_follows(tmp_path: Path) -> None:
    # The first call starts 5 s in, and the session ends 9 s in: the axis spans 0 to 9 s.
    lines = [
        event("session.start", {"sessionId": "s"}),
        event("user.message", {"content": "go"}, 0.1),
        *bash_call("c1", "make", 5.0),
        event("assistant.message", {"content": "done"}, 9.0),
    ]
    markdown = render_markdown(parse_timeline(lines))

    chart = mermaid_block(markdown)
    assert chart[1] == "    title Tool calls, seconds since the session's first event"
    assert chart[3] == "    axisFormat %s.%L s"  # labels like `5.000 s`
    assert chart[5:CHART_HEADER] == ["    section Session", "    whole session :s0, 0, 9000"]
    (task,) = [m.groupdict() for line in chart if (m := TASK_LINE.match(line))]
    assert (task["start"], task["end"]) == ("5000", "5050")
    assert (
        markdown.split("```mermaid\n", 1)[1]
        .split("```\n", 1)[1]
        .startswith(f"\n<sub>{LEGEND}</sub>\n")
    )
    for words in ("seconds since the session's first event (0)", "`done`", "`crit`", "`active`"):
        assert words in LEGEND
    (report,) = [json.loads(line) for line in mermaid_parse(tmp_path, chart).stdout.splitlines()]
    assert report["tasks"] == 2


# --- a command that failed is a failure everywhere -------------------------------------------


def test_a_command_that_exited_non_zero_is_failed_in_every_view_and_red_in_the_chart(
    tmp_path: Path,
) -> None:
    """The runtime reports `success: true` for `git status` outside a repository; its exit
    status (128) makes it a failure in the text, the tables, the step summary and the
    chart, which must agree."""
    lines = [
        event("session.start", {"sessionId": "s"}),
        event("user.message", {"content": "go"}, 0.1),
        *bash_call("c1", "git --version", 0.2),
        event(
            "tool.execution_start",
            {"toolCallId": "c2", "toolName": "bash", "arguments": {"command": "git status"}},
            0.3,
        ),
        event(
            "tool.execution_complete",
            {"toolCallId": "c2", "success": True, "shellExecution": {"exitCode": 128}},
            0.4,
        ),
    ]
    timeline = parse_timeline(lines)

    text = render_text(timeline)
    assert re.search(r"\+0\.30s  bash  git status +FAILED +100 ms\n", text)
    assert "  tool calls   2 (1 ok, 1 failed)\n" in text
    markdown = render_markdown(timeline)
    summary = render_step_summary(RunOutcome(0, None, None, None), timeline)
    for rendered in (markdown, summary):
        assert table_rows(rendered, "| Turn |") == [
            "| 1 | +0.20s | bash | git --version | ok | 50 ms |",
            "| 1 | +0.30s | bash | git status | FAILED | 100 ms |",
        ]
        assert "| Tool calls | 2 (1 ok, 1 failed) |" in rendered
        chart = mermaid_block(rendered)
        assert chart[CHART_HEADER + 1 :] == [
            "    bash git --version :done, t1, 200, 250",
            "    bash git status :crit, t2, 300, 400",
        ]
    assert mermaid_parse(tmp_path, mermaid_block(summary)).returncode == 0


def test_an_earlier_turns_answer_is_cut_after_a_whole_word() -> None:
    lines = [
        event("user.message", {"content": "first"}, 0.1),
        event("assistant.message", {"content": WORDS * 5}, 0.2),
        event("user.message", {"content": "second"}, 0.3),
        event("assistant.message", {"content": "done"}, 0.4),
    ]
    text = render_text(parse_timeline(lines))

    (line,) = [line for line in text.splitlines() if line.startswith("  answer: ")]
    shown = line.removeprefix("  answer: ").removesuffix(" ...")
    assert line.endswith(" ...")
    assert len(line) <= 96
    assert (WORDS * 5).startswith(shown + " ")
