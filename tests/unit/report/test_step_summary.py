"""`copilot_driver.report.step_summary`: the harness's account of a run, always bounded."""

from __future__ import annotations

import time

from hypothesis import given, settings

from copilot_driver.report import (
    STEP_SUMMARY_LIMIT,
    Attempt,
    RunOutcome,
    load_timeline,
    parse_timeline,
    render_step_summary,
)
from copilot_driver.report.markdown import CALL_ROWS_FIRST, CALL_ROWS_LAST, cell
from copilot_driver.report.policy import NOT_RECORDED
from helpers.report_samples import (
    DATA,
    POLICY_DENIAL_SESSION,
    SIDECAR_FAILURE,
    event,
    event_lines,
    many_calls,
    mermaid_block,
    outcomes,
    table_rows,
)

SUCCESS = RunOutcome(0, None, None, None)
POLICY_ROW = f"| Policy | {cell(NOT_RECORDED)} |\n"
"""These runs' files predate the policy's record."""
MIB = 1024 * 1024


def _size(markdown: str) -> int:
    return len(markdown.encode("utf-8"))


def test_a_run_that_failed_before_any_session() -> None:
    markdown = render_step_summary(SIDECAR_FAILURE, None)

    assert markdown.startswith("## Copilot run failed: The Copilot CLI sidecar could not start\n")
    assert "| Exit code | 1 |\n| Error kind | `sidecar_unreachable` |\n| Attempts | 2 |" in markdown
    assert "> Check COPILOT\\_GITHUB\\_TOKEN, then sidecar.log beside the events file." in markdown
    assert table_rows(markdown, "| Attempt |") == [
        "| 1 | 1 | sidecar\\_unreachable | the sidecar exited before it listened (exit status 1) "
        "| in 2.00 s |",
        "| 2 | 1 | sidecar\\_unreachable | the sidecar exited before it listened (exit status 1) "
        "| - |",
    ]
    assert "No session timeline" in markdown
    assert markdown.endswith("<sub>report v2.</sub>\n")


def test_the_example_in_the_docs_is_a_real_render() -> None:
    docs = (DATA.parent.parent / "docs" / "report.md").read_text(encoding="utf-8")
    section = docs.split("## The harness's step summary", 1)[1]
    example = section.split("````markdown\n", 1)[1].split("````\n", 1)[0]

    assert example == render_step_summary(SIDECAR_FAILURE, None)


def test_a_success_is_the_heading_and_the_timeline() -> None:
    markdown = render_step_summary(SUCCESS, load_timeline(POLICY_DENIAL_SESSION))

    assert markdown.startswith(
        f"## Copilot run succeeded\n\n| Field | Value |\n|---|---|\n{POLICY_ROW}\n### Session\n\n"
    )
    assert markdown.count("| Policy |") == 1  # shown once, at the top
    assert "### Attempts" not in markdown
    assert "| Exit code | 0 |" in markdown  # from result.json, in the session's table
    assert "allow with `shell(rm victim.txt)`" in markdown
    assert "| gpt-4.1 | 3 | 30 | 15 | 0 | 0 |" in markdown
    assert mermaid_block(markdown)[0] == "gantt"
    assert markdown.endswith("<sub>report v2. Read 22 lines, 22 events, 0 skipped.</sub>\n")


def test_a_failure_with_a_timeline() -> None:
    timeline = parse_timeline(
        [
            event("user.message", {"content": "work"}),
            event("session.error", {"message": "the model went away"}, 1),
        ]
    )
    outcome = RunOutcome(1, "session_error", None, "The model went away.\nTry again.")
    markdown = render_step_summary(outcome, timeline)

    assert markdown.startswith(
        "## Copilot run failed\n\n| Field | Value |\n|---|---|\n| Exit code | 1 |\n"
    )
    assert (
        f"| Error kind | `session_error` |\n{POLICY_ROW}\n> The model went away.\n> Try again.\n"
    ) in markdown
    assert "### Attempts" not in markdown  # one attempt: nothing to tabulate
    assert "| Outcome | error: the model went away |" in markdown


def test_a_success_after_a_retry_shows_the_attempts() -> None:
    attempts = (
        Attempt(1, 1, "sidecar_lost", "the sidecar died", 5),
        Attempt(2, 0, None, None, None),
    )
    markdown = render_step_summary(RunOutcome(0, None, None, None, attempts), None)

    assert markdown.startswith(
        "## Copilot run succeeded\n\n| Field | Value |\n|---|---|\n| Exit code | 0 |"
    )
    assert table_rows(markdown, "| Attempt |") == [
        "| 1 | 1 | sidecar\\_lost | the sidecar died | in 5.00 s |",
        "| 2 | 0 | - | succeeded | - |",
    ]


def test_the_message_shows_as_typed_and_is_capped() -> None:
    message = "# not a heading\n- not a list\n<script>x</script> `code` *stars*\n" + "line\n" * 100
    markdown = render_step_summary(RunOutcome(2, None, "a | title\nover lines", message), None)

    assert markdown.startswith("## Copilot run failed: a \\| title over lines\n")
    assert "> \\# not a heading\n> \\- not a list\n" in markdown
    assert "> \\<script\\>x\\</script\\> `code` \\*stars\\*\n" in markdown  # a quoted value
    assert markdown.count("> line\n") == 36  # and the 37th, marked as cut
    # 40 of the 103 lines: the 63 left out are 63 line breaks and 63 `line`s.
    assert "> line …\n>\n> _(message cut: 315 more characters not shown)_\n" in markdown


def test_the_attempts_table_keeps_the_first_and_last_ten() -> None:
    attempts = tuple(Attempt(n, 1, "x", f"try {n}", float("nan")) for n in range(1, 101))
    markdown = render_step_summary(RunOutcome(1, "x", "t", None, attempts), None)

    rows = table_rows(markdown, "| Attempt |")
    assert len(rows) == 21
    assert rows[10] == "| | | | _80 attempts not shown_ | |"
    assert rows[0].startswith("| 1 | 1 | x | try 1 | - |")
    assert rows[-1].startswith("| 100 |")


def test_thousands_of_tool_calls_stay_small_and_fast() -> None:
    for count in (5_000, 50_000):
        timeline = parse_timeline(many_calls(count))
        started = time.monotonic()
        markdown = render_step_summary(SIDECAR_FAILURE, timeline)
        elapsed = time.monotonic() - started

        assert _size(markdown) < STEP_SUMMARY_LIMIT < MIB
        assert len(table_rows(markdown, "| Turn |")) == CALL_ROWS_FIRST + 1 + CALL_ROWS_LAST
        assert f"tool calls ({count - 100:,} not drawn)" in markdown
        assert elapsed < 5, f"{count} calls took {elapsed:.1f} s"


def test_huge_text_everywhere_stays_under_the_limit() -> None:
    huge = "\u00e9\U0001f600|`*" * 50_000  # 250,000 characters that grow when escaped
    lines = [
        event("session.start", {"sessionId": huge}),
        event("user.message", {"content": huge}),
        *[
            event(
                "tool.execution_start", {"toolCallId": f"c{n}", "toolName": huge, "arguments": huge}
            )
            for n in range(40)
        ],
        event("session.error", {"message": huge}),
        event("assistant.message", {"content": huge}),
    ]
    attempts = tuple(Attempt(n, 1, huge, huge, 1.0) for n in range(50))
    outcome = RunOutcome(1, huge, huge, huge, attempts)

    markdown = render_step_summary(outcome, parse_timeline(lines))

    assert _size(markdown) < STEP_SUMMARY_LIMIT


def test_a_summary_over_the_limit_is_cut_with_a_note() -> None:
    # Every part at its cap, in characters that take 4 bytes each: only the last-resort
    # cut (which counts bytes) can hold this.
    wide = "\U0001f600" * 1000
    lines = [event("user.message", {"content": "x"})]
    lines += [
        event("tool.execution_start", {"toolCallId": f"c{n}", "toolName": wide, "arguments": wide})
        for n in range(1000)
    ]
    lines += [event("session.error", {"message": wide}, 1) for _ in range(60)]
    denial = {"requestSummary": wide, "reason": wide, "allowRule": wide}
    lines += [event("policy.denial", denial, 1) for _ in range(60)]

    markdown = render_step_summary(SIDECAR_FAILURE, parse_timeline(lines))

    # Cut at a line boundary: within one of its longest lines (a notice, 1,630 bytes here).
    assert STEP_SUMMARY_LIMIT - 2048 < _size(markdown) <= STEP_SUMMARY_LIMIT
    assert markdown.endswith("\n\n_(This summary was cut here: it is limited to 256 KiB.)_\n")


@settings(max_examples=200, deadline=None)
@given(outcomes, event_lines)
def test_any_outcome_and_any_events_render_under_the_limit(
    outcome: RunOutcome, raw: list[str]
) -> None:
    for timeline in (None, parse_timeline(raw)):
        markdown = render_step_summary(outcome, timeline)

        assert _size(markdown) <= STEP_SUMMARY_LIMIT
        assert markdown.startswith("## Copilot run ")
        fences = [line for line in markdown.splitlines() if line.startswith("```")]
        assert len(fences) % 2 == 0  # every fence closed
