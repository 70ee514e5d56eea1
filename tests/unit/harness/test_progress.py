"""What the harness learns from a driver's log and events file, and its status line."""

from __future__ import annotations

import io
import json
from pathlib import Path

from copilot_driver.harness.progress import Progress, StatusLine

EVENTS = Path("/state/s-1/events.jsonl")


def test_the_events_file_is_learned_from_a_json_log_line() -> None:
    progress = Progress()
    progress.read_log_line(json.dumps({"event": "session.created", "eventsFile": str(EVENTS)}))
    assert progress.events_file == EVENTS


def test_the_events_file_is_learned_from_a_text_log_line_too() -> None:
    progress = Progress()
    progress.read_log_line(
        "[copilot-sdk-driver] INFO session.created: session s-1 created sessionId=s-1 "
        f"model=gpt-4.1 eventsFile={EVENTS}\n"
    )
    assert progress.events_file == EVENTS
    quoted = Progress()
    quoted.read_log_line(
        '[copilot-sdk-driver] INFO session.created: created eventsFile="/a b/events.jsonl"'
    )
    assert quoted.events_file == Path("/a b/events.jsonl")


def test_the_first_events_file_wins() -> None:
    progress = Progress()
    progress.read_log_line(json.dumps({"event": "session.created", "eventsFile": "/a"}))
    progress.read_log_line(json.dumps({"event": "session.created", "eventsFile": "/b"}))
    assert progress.events_file == Path("/a")


def test_denials_are_counted_in_both_log_formats() -> None:
    progress = Progress()
    progress.read_log_line(json.dumps({"event": "permission.denied", "requestKind": "shell"}))
    progress.read_log_line("[copilot-sdk-driver] WARNING permission.denied: shell(rm x)")
    progress.read_log_line("not a log line at all {")
    progress.read_log_line(json.dumps(["a", "list"]))
    assert progress.denials == 2


def test_events_are_read_incrementally_and_never_half_a_line(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    progress = Progress()
    progress.read_log_line(json.dumps({"event": "session.created", "eventsFile": str(events)}))
    progress.poll_events()  # not there yet: nothing happens
    with events.open("w") as handle:
        handle.write(json.dumps({"type": "user.message", "data": {}}) + "\n")
        handle.write(json.dumps({"type": "tool.execution_start", "data": {"toolName": "bash"}}))
        handle.flush()
        progress.poll_events()
        assert (progress.turns, progress.current_tool) == (1, None)  # the half line waits
        handle.write("\n")
        handle.flush()
        progress.poll_events()
        assert progress.current_tool == "bash"
        handle.write(json.dumps({"type": "tool.execution_complete", "data": {}}) + "\n")
        handle.write("garbage\n")
        handle.flush()
        progress.poll_events()
    assert progress.turns == 1
    assert progress.current_tool is None


def test_a_disabled_status_line_only_passes_lines_through() -> None:
    stream = io.StringIO()
    status = StatusLine(stream, Progress(), enabled=False)
    status.start()
    status.print_line("driver line one")
    status.print_line("driver line two\n")
    status.stop()
    assert stream.getvalue() == "driver line one\ndriver line two\n"


def test_an_enabled_status_line_redraws_below_each_driver_line() -> None:
    stream = io.StringIO()
    progress = Progress()
    progress.denials = 2
    status = StatusLine(stream, progress, enabled=True)
    status.print_line("first")
    status.print_line("second")
    status.stop()
    text = stream.getvalue()
    assert text.startswith("first\n[copilot]")
    assert "\r\x1b[Ksecond\n" in text  # the status is cleared before a line is printed
    assert "denials 2" in text
    assert text.endswith("\r\x1b[K")  # and cleared for good at the end
