"""`copilot_driver.report.text`: the report for a terminal."""

from __future__ import annotations

from copilot_driver.report import load_timeline, parse_timeline, render_markdown, render_text
from copilot_driver.vocabulary import RunResult
from helpers.report_samples import (
    ANSWER,
    DATA,
    GUARD_STOP,
    POLICY_DENIAL_SESSION,
    POLICY_IN_FORCE_SESSION,
    POLICY_REASON,
    TOOLS_AND_DENIAL,
    bash_call,
    call_lines,
    event,
    model_metrics,
    shutdown,
)


def test_real_tools_and_denial_as_text() -> None:
    text = render_text(load_timeline(TOOLS_AND_DENIAL))

    assert text.startswith("Copilot session 3c6145b0-612d-4252-a7fe-5944c8ad1464\n")
    assert "CLI 1.0.102" in text
    assert (
        "  started      2026-11-21 07:32:55.656 UTC\n"
        "  event span   408 ms, from the session's first event to its last\n" in text
    )
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
    assert "  duration     408 ms event span; model 24 ms, tools 107 ms" in text
    assert "  usage        gpt-4.1: 3 requests; tokens: 30 in, 15 out, 0 cache read, " in text
    assert "  premium      0 requests" in text
    assert "  changed      none" in text
    assert "  input        25 lines, 25 events, 0 skipped" in text
    assert text.endswith("  format       report v2\n")
    assert "exit code" not in text  # no result.json beside this file
    assert max(len(line) for line in text.splitlines()) <= 100


def test_real_guard_stop_as_text() -> None:
    timeline = load_timeline(GUARD_STOP)
    text = render_text(timeline)

    assert timeline.guard_stop is not None
    assert (timeline.guard_stop.denial_count, timeline.guard_stop.threshold) == ("2", "2")
    assert "  outcome      stopped by the denial guard (2/2 denials)\n" in text
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


def test_long_commands_stay_within_the_terminal() -> None:
    lines = [
        event("user.message", {"content": "p" * 300}),
        *bash_call("c1", "echo " + "x" * 300, 0.1),
        event("assistant.message", {"content": "a" * 300 + "\n" + "b\n" * 20}, 0.2),
    ]
    text = render_text(parse_timeline(lines))

    answer = text.split("Final answer:\n", 1)[1]
    assert max(len(line) for line in text.replace(answer, "").splitlines()) <= 100
    # A word is never broken (it may be a URL to copy): it is a line of its own, and the
    # terminal wraps it. The answer is shown up to its room: 20 lines, the 21st left out.
    assert answer.startswith("  " + "a" * 300 + "\n  b\n")
    assert "  b ...\n  (answer cut: 2 more characters not shown)\n" in text


def test_real_policy_denial_as_text() -> None:
    text = render_text(load_timeline(POLICY_DENIAL_SESSION))

    assert "  outcome      answered\n  exit code    0\n" in text
    assert (
        "            DENIED shell(rm victim.txt)\n"
        f"              denied: {POLICY_REASON}; the rule that would allow it:\n"
        "                shell(rm victim.txt)\n"
    ) in text
    assert "feedback:" not in text  # the policy's account replaces the runtime's


def test_usage_files_and_an_error_result_as_text() -> None:
    files = [f"src/module_{n}.py" for n in range(25)]
    lines = [
        event("user.message", {"content": "change things"}),
        *bash_call("c1", "make", 0.1),
        *bash_call("c2", "make check", 0.12),  # overlaps c1: counted once
        shutdown(
            {"model-a": model_metrics(1, 0.5, (10, 2, 0, 0)), "model-b": {"requests": "x"}},
            totalApiDurationMs=1500,
            codeChanges={"filesModified": files, "linesAdded": 12, "linesRemoved": 3},
        ),
    ]
    timeline = parse_timeline(lines)
    timeline.result = RunResult(1, "session_error", "the model\nwent away")
    text = render_text(timeline)

    assert "  exit code    1 (session_error): the model went away\n" in text
    assert "  duration     9.00 s event span; model 1.50 s, tools 70 ms\n" in text
    assert "  usage        model-a: 1 request; tokens: 10 in, 2 out, 0 cache read, 0 " in text
    assert "               model-b: - requests; tokens: - in, - out, " in text
    assert "  premium      0.5 requests\n" in text  # the sum of the models' costs
    assert (
        "  changed      25 files (+12 -3) by the editing tools (create, edit)\n"
        "                 src/module_0.py\n"
    ) in text
    assert (
        "               ... and 5 more\n"
        "               not listed: what shell commands changed (2 ran)\n"
    ) in text


def test_the_examples_in_the_docs_are_real_renders() -> None:
    docs = (DATA.parent.parent / "docs" / "report.md").read_text(encoding="utf-8")
    timeline = load_timeline(POLICY_IN_FORCE_SESSION)

    text_section = docs.split("## `text`", 1)[1]
    text_example = text_section.split("```\n", 1)[1].split("\n```\n", 1)[0]
    markdown_example = docs.split("````markdown\n", 1)[1].split("````\n", 1)[0]
    assert text_example + "\n" == render_text(timeline)
    assert markdown_example == render_markdown(timeline)
