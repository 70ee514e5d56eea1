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
        handle.write(json.dumps({"type": "assistant.turn_start", "data": {}}) + "\n")
        start = {"type": "tool.execution_start", "data": {"toolName": "bash", "command": "ls -1"}}
        handle.write(json.dumps(start))
        handle.flush()
        progress.poll_events()
        assert (progress.phase, progress.started_tools) == ("model round 1", False)
        handle.write("\n")
        handle.flush()
        progress.poll_events()
        assert (progress.phase, progress.started_tools) == ("running ls -1", True)
        handle.write(json.dumps({"type": "tool.execution_complete", "data": {}}) + "\n")
        handle.write(json.dumps({"type": "assistant.turn_start", "data": {}}) + "\n")
        error = {"errorType": "rate_limit", "statusCode": 429, "message": "Last error: 429"}
        handle.write(json.dumps({"type": "session.error", "data": error}) + "\n")
        handle.write("garbage\n")
        handle.flush()
        progress.poll_events()
    assert (progress.rounds, progress.phase) == (2, "model round 2")
    assert (progress.status_code, progress.session_error["errorType"]) == (429, "rate_limit")


def test_the_phase_follows_the_drivers_log_and_its_error_is_kept() -> None:
    progress = Progress()
    progress.read_log_line(json.dumps({"event": "connection.start", "level": "info"}))
    assert progress.phase == "connecting"
    progress.read_log_line(json.dumps({"event": "client.started", "level": "info"}))
    assert progress.phase == "creating the session"
    created = {"event": "session.created", "sessionId": "s-1", "eventsFile": str(EVENTS)}
    progress.read_log_line(json.dumps(created))
    assert (progress.phase, progress.session_id) == ("waiting for the model", "s-1")
    error = {"event": "error", "level": "error", "message": "it broke", "errorKind": "send_timeout"}
    progress.read_log_line(json.dumps(error))
    progress.read_log_line("[copilot-sdk-driver] ERROR config: GH_AW_PROMPT is not set")
    assert progress.error_kind == "send_timeout"
    assert progress.errors[0] == "it broke"
    assert len(progress.errors) == 2


def test_a_disabled_status_line_only_passes_lines_through() -> None:
    stream = io.StringIO()
    status = StatusLine(stream, enabled=False)
    status.start()
    status.print_line("driver line one")
    status.print_line("driver line two\n")
    status.stop()
    assert stream.getvalue() == "driver line one\ndriver line two\n"


def test_an_enabled_status_line_redraws_below_each_line_and_is_cleared_at_the_end() -> None:
    stream = io.StringIO()
    status = StatusLine(stream, enabled=True)
    status.progress.denials = 2
    status.progress.phase = "running git status"
    status.label = "try 2/3"
    status.print_line("first")
    status.print_line("second")
    status.stop()
    text = stream.getvalue()
    assert text.startswith("first\n[copilot]")
    assert "\r\x1b[Ksecond\n" in text  # the status is cleared before a line is printed
    assert "s | try 2/3 | running git status | denials 2" in text
    assert text.endswith("\r\x1b[K")  # and cleared for good, before the answer is printed
