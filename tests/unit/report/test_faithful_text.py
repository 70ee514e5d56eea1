"""The text report shows what a user copies whole and the answer line for line; the
files-changed line says whose changes it counts; the command refuses what is not an
events file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.report import parse_timeline, render_text
from copilot_driver.report.cli import main
from copilot_driver.report.summary import unlisted_changes
from helpers.report_samples import bash_call, event, shutdown

WIDTH = 96


def _answer_block(answer: str) -> list[str]:
    text = render_text(parse_timeline([event("assistant.message", {"content": answer})]))
    return text.split("Final answer:\n", 1)[1].split("\n\nTotals:", 1)[0].split("\n")


def test_blank_lines_of_the_answer_are_kept() -> None:
    assert _answer_block("One.\n\nTwo.\n\n\nThree.") == [
        "  One.",
        "",
        "  Two.",
        "",
        "",
        "  Three.",
    ]


def test_a_quoted_command_in_the_answer_is_never_split() -> None:
    command = "`pip install --upgrade copilot-driver[adapters] --index-url https://x.io/simple`"
    answer = "To fix it, run " + command + " in the environment the harness uses, then retry."

    block = _answer_block(answer)

    assert any(command in line for line in block)
    assert " ".join(" ".join(block).split()) == answer
    assert max(len(line) for line in block if command not in line) <= WIDTH


def test_a_code_block_in_the_answer_is_shown_as_written() -> None:
    long_line = "curl -fsSL https://example.com/install.sh | sh -s -- --prefix=/opt/tool " * 2
    answer = f"Run:\n\n```sh\n{long_line.strip()}\n    indented\n```\n\n    {long_line.strip()}"

    block = _answer_block(answer)

    assert block == [
        "  Run:",
        "",
        "  ```sh",
        f"  {long_line.strip()}",
        "      indented",
        "  ```",
        "",
        f"      {long_line.strip()}",
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(categories=["L", "N", "P"], exclude_characters="`"), max_size=30),
            st.builds(lambda word: f"`{word} --x y`", st.text("abc-./", min_size=1, max_size=20)),
            st.just(""),
        ),
        max_size=12,
    )
)
def test_the_answer_keeps_its_lines_and_words(parts: list[str]) -> None:
    answer = "\n".join(" ".join(parts[i : i + 3]) for i in range(0, len(parts), 3)).strip()
    if not answer.strip():
        return

    block = _answer_block(answer)

    shown = [line.removeprefix("  ") for line in block]
    assert " ".join(" ".join(shown).split()) == " ".join(answer.split())
    assert block.count("") >= answer.strip("\n").count("\n\n")
    for value in re.findall(r"`[^`]+ --x y`", answer):
        assert any(value in line for line in block), value


def test_the_rule_to_copy_is_a_line_of_its_own_however_long() -> None:
    command = "python -m tool --option " + "x" * 150
    lines = [*bash_call("c1", command, 0.1, ok=False)]
    denial = {
        "requestSummary": f"shell({command})",
        "reason": f"`{command}` matches no shell rule",
        "allowRule": f"shell({command})",
        "toolCallId": "c1",
    }
    lines.append(event("policy.denial", denial, 0.12))

    text = render_text(parse_timeline(lines))

    assert f"\n                shell({command})\n" in text
    long_rule = {**denial, "allowRule": "shell(" + "y" * 600 + ")", "toolCallId": "c2"}
    lines += [*bash_call("c2", "y", 0.2, ok=False), event("policy.denial", long_rule, 0.22)]
    shown = " ".join(render_text(parse_timeline(lines)).split())
    assert "the rule that would allow it is 607 characters long, too long to show here" in shown
    assert "y" * 100 not in shown


def test_shell_commands_that_ran_are_counted_denied_ones_are_not() -> None:
    lines = [
        *bash_call("c1", "rm a", 0.1),
        *bash_call("c2", "false", 0.2, ok=False),
        event(
            "tool.execution_start",
            {"toolCallId": "c3", "toolName": "read_bash", "arguments": {"shellId": "0"}},
            0.3,
        ),
        event("tool.execution_start", {"toolCallId": "c4", "toolName": "bash"}, 0.4),
        event(
            "tool.execution_complete",
            {"toolCallId": "c4", "success": False, "error": {"code": "denied"}},
            0.5,
        ),
        shutdown(codeChanges={"filesModified": [], "linesAdded": 0, "linesRemoved": 0}),
    ]
    timeline = parse_timeline(lines)

    assert timeline.shell_commands == 2  # rm a, false: read_bash runs none, c4 was denied
    assert unlisted_changes(timeline) == "not listed: what shell commands changed (2 ran)"
    assert (
        "  changed      none by the editing tools (create, edit)\n"
        "               not listed: what shell commands changed (2 ran)\n"
    ) in render_text(timeline)


# --- the command on files that are not events files (the real command: the e2e tests) ----


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("listening on port 4321\nready\n", "none of its 2 lines is an event record"),
        ('{"exitCode": 0}\n', "its only line is not an event record"),
        ("[1, 2]\n\n", "its only line is not an event record (a JSON object with a `type`; "),
        ("", "is empty, not an events file"),
    ],
)
def test_a_file_that_is_not_an_events_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    path = tmp_path / "sidecar.log"
    path.write_text(content, encoding="utf-8")

    assert main([str(path)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"[copilot-driver-report] error: {path} ")
    assert why in err
    assert err.endswith(
        "; give the session's events.jsonl or its folder (the driver's log "
        "names the result.json beside it), or the state folder holding the "
        "session folders\n"
    )


def test_a_file_with_one_record_among_other_lines_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mixed.log"
    record = json.dumps({"type": "user.message", "data": {"content": "hello"}})
    path.write_text(f"noise\n{record}\nmore noise\n", encoding="utf-8")

    assert main([str(path)]) == 0

    out, err = capsys.readouterr()
    assert "Turn 1: hello" in out
    assert "2 of its 3 lines are not event records and were skipped (line 1: not JSON; " in err
