"""EventsSink: the session's JSON Lines audit trail (spec 3.3)."""

from __future__ import annotations

import errno
import json
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from copilot.session_events import SessionEvent

from copilot_driver.driver import sink as events_module
from copilot_driver.driver.sink import EventsFileError, EventsSink
from copilot_driver.formatting import iso_utc, parse_iso
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import EVENTS_FILE_NAME

SECRET = "tok-5f0c1d9e7a2b4c6d8e0f"
TIMESTAMP = "2026-11-21T06:47:02.5Z"


DATA = Path(__file__).parents[2] / "data"


def wire_event(
    event_type: str,
    data: dict[str, Any],
    *,
    ephemeral: bool | None = None,
    parent_id: str | None = None,
) -> SessionEvent:
    """A real SDK event, built from the runtime's wire form."""
    raw: dict[str, Any] = {
        "type": event_type,
        "id": str(uuid.uuid4()),
        "timestamp": TIMESTAMP,
        "parentId": parent_id,
        "data": data,
    }
    if ephemeral is not None:
        raw["ephemeral"] = ephemeral
    return SessionEvent.from_dict(raw)


def message(content: str, message_id: str = "m1") -> SessionEvent:
    return wire_event("assistant.message", {"content": content, "messageId": message_id})


def tool_start(call_id: str, tool_name: str, mcp_server: str | None = None) -> SessionEvent:
    data: dict[str, Any] = {
        "toolCallId": call_id,
        "toolName": tool_name,
        "arguments": {"command": "echo hi"},
    }
    if mcp_server is not None:
        data["mcpServerName"] = mcp_server
    return wire_event("tool.execution_start", data)


def tool_complete(call_id: str) -> SessionEvent:
    return wire_event(
        "tool.execution_complete",
        {"toolCallId": call_id, "success": True, "result": {"content": "hi"}},
    )


def idle() -> SessionEvent:
    return wire_event("session.idle", {"mode": "interactive"}, ephemeral=True)


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the file, each of which must be one whole JSON object."""
    raw = path.read_bytes()
    if not raw:
        return []
    assert raw.endswith(b"\n"), "the file must end with a complete line"
    records = []
    for line in raw.split(b"\n")[:-1]:
        record = json.loads(line)
        assert isinstance(record, dict)
        records.append(record)
    return records


class Errors:
    """An on_error callback that remembers what it was told."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, message: str) -> None:
        self.messages.append(message)


@pytest.fixture
def errors() -> Errors:
    return Errors()


@pytest.fixture
def sink(tmp_path: Path, errors: Errors) -> EventsSink:
    return EventsSink(tmp_path / "state", Redactor([SECRET]), on_error=errors)


def test_attach_creates_events_file_under_base_and_session_id(tmp_path: Path) -> None:
    base = tmp_path / "not" / "yet" / "there"
    sink = EventsSink(base, Redactor([]))
    path = sink.attach("session-123")
    sink.close()
    assert path == base / "session-123" / EVENTS_FILE_NAME
    assert EVENTS_FILE_NAME == "events.jsonl"
    assert sink.path == path
    assert path.is_file()


def test_ephemeral_events_are_not_written(sink: EventsSink, errors: Errors) -> None:
    path = sink.attach("s1")
    sink.handle(message("before"))
    sink.handle(idle())
    sink.handle(
        wire_event("assistant.message", {"content": "eph", "messageId": "x"}, ephemeral=True)
    )
    sink.handle(message("after"))
    sink.close()
    records = read_lines(path)
    assert [r["type"] for r in records] == ["assistant.message", "assistant.message"]
    assert [r["data"]["content"] for r in records] == ["before", "after"]
    assert errors.messages == []


def test_ephemeral_event_is_skipped_before_it_is_serialised(
    sink: EventsSink, errors: Errors
) -> None:
    class EphemeralUnserialisable:
        ephemeral: bool | None = True

        def to_dict(self) -> dict[str, Any]:
            raise AssertionError("an ephemeral event must not be serialised")

    sink.handle(EphemeralUnserialisable())
    path = sink.attach("s1")
    sink.close()
    assert errors.messages == []
    assert sink.error is None
    assert path.read_bytes() == b""


def test_events_before_attach_are_written_after_attach_in_order(sink: EventsSink) -> None:
    sink.handle(message("one", "m1"))
    sink.handle(message("two", "m2"))
    sink.write_record({"type": "driver.note", "timestamp": TIMESTAMP, "data": {"n": 3}})
    path = sink.attach("s1")
    sink.handle(message("four", "m4"))
    sink.close()
    records = read_lines(path)
    assert [r["type"] for r in records] == [
        "assistant.message",
        "assistant.message",
        "driver.note",
        "assistant.message",
    ]
    assert [r["data"].get("content") for r in records] == ["one", "two", None, "four"]
    assert sink.lines_written == 4


def test_line_format_type_timestamp_data_first_then_ids(sink: EventsSink) -> None:
    parent = str(uuid.uuid4())
    with_parent = wire_event(
        "assistant.message", {"content": "child", "messageId": "m2"}, parent_id=parent
    )
    without_parent = message("root")
    path = sink.attach("s1")
    sink.handle(without_parent)
    sink.handle(with_parent)
    sink.close()
    first, second = read_lines(path)

    assert list(first)[:3] == ["type", "timestamp", "data"]
    assert list(second)[:3] == ["type", "timestamp", "data"]
    assert first["type"] == "assistant.message"
    # The SDK's instant, written as gh-aw's driver writes it (JavaScript's toISOString).
    assert first["timestamp"] == iso_utc(parse_iso(without_parent.to_dict()["timestamp"]))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["timestamp"])
    assert first["data"] == {"content": "root", "messageId": "m1"}
    assert first["id"] == str(without_parent.id)
    assert "parentId" not in first, "a null parentId is omitted"
    assert second["id"] == str(with_parent.id)
    assert second["parentId"] == parent
    # Nothing beyond the documented fields (ephemeral is never persisted).
    assert set(first) == {"type", "timestamp", "data", "id"}
    assert set(second) == {"type", "timestamp", "data", "id", "parentId"}


def test_data_keeps_the_runtime_camel_case_names(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(tool_start("call_1", "bash", mcp_server="github"))
    sink.handle(tool_complete("call_1"))
    sink.close()
    start, complete = read_lines(path)
    assert set(start["data"]) == {
        "toolCallId",
        "toolName",
        "arguments",
        "mcpServerName",
        # added for gh-aw's readers, as its reference driver writes them:
        "input",
        "command",
        "mcpToolName",
    }
    assert start["data"]["arguments"] == {"command": "echo hi"}
    assert {"toolCallId", "success", "result"} <= set(complete["data"])
    for record in (start, complete):
        assert not [key for key in record["data"] if "_" in key], record["data"]


def test_tool_start_carries_input_command_and_the_mcp_tool_name(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(tool_start("call_1", "github-get_me", mcp_server="github"))
    sink.handle(tool_start("call_2", "view"))
    sink.close()
    mcp_start, view_start = read_lines(path)
    assert mcp_start["data"]["input"] == {"command": "echo hi"}
    assert mcp_start["data"]["command"] == "echo hi"
    assert mcp_start["data"]["mcpToolName"] == "get_me"
    assert "mcpToolName" not in view_start["data"]


def test_tool_complete_is_enriched_from_its_start_event(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(tool_start("call_1", "bash", mcp_server="github"))
    sink.handle(tool_start("call_2", "view"))
    assert set(sink._tools) == {"call_1", "call_2"}
    sink.handle(tool_complete("call_2"))
    sink.handle(tool_complete("call_1"))
    assert sink._tools == {}, "the correlation entry is dropped once the call completes"
    sink.close()
    records = read_lines(path)
    completes = {
        r["data"]["toolCallId"]: r["data"]
        for r in records
        if r["type"] == "tool.execution_complete"
    }
    assert completes["call_1"]["toolName"] == "bash"
    assert completes["call_1"]["mcpServerName"] == "github"
    assert completes["call_1"]["success"] is True
    assert completes["call_1"]["result"] == {"content": "hi"}
    assert completes["call_2"]["toolName"] == "view"
    assert completes["call_2"]["mcpServerName"] == "", "a built-in tool, as gh-aw writes it"


def test_tool_complete_without_a_start_is_written_unchanged(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(tool_complete("call_unknown"))
    sink.close()
    (record,) = read_lines(path)
    assert record["data"]["toolCallId"] == "call_unknown"
    assert "toolName" not in record["data"]
    assert sink._tools == {}


def test_write_record_appends_a_driver_record(sink: EventsSink) -> None:
    path = sink.attach("s1")
    record = {"type": "driver.outcome", "timestamp": TIMESTAMP, "data": {"exitCode": 0}}
    sink.write_record(record)
    sink.close()
    assert read_lines(path) == [record]
    assert list(read_lines(path)[0]) == ["type", "timestamp", "data"]


def test_close_flushes_everything(sink: EventsSink, errors: Errors) -> None:
    count = 20000
    path = sink.attach("s1")
    for index in range(count):
        sink.handle(message(f"event {index}", f"m{index}"))
    sink.close()
    raw_lines = path.read_bytes().split(b"\n")
    assert raw_lines[-1] == b""
    assert len(raw_lines) - 1 == count
    records = [json.loads(line) for line in raw_lines[:-1]]
    assert [r["data"]["content"] for r in records] == [f"event {i}" for i in range(count)]
    assert sink.lines_written == count
    assert errors.messages == []


def test_close_is_idempotent_and_later_events_are_ignored(sink: EventsSink, errors: Errors) -> None:
    path = sink.attach("s1")
    sink.handle(message("kept"))
    sink.close()
    content = path.read_bytes()
    sink.close()
    sink.close(timeout=0.01)
    sink.handle(message("too late"))
    sink.write_record({"type": "driver.late", "timestamp": TIMESTAMP, "data": {}})
    time.sleep(0.05)
    assert path.read_bytes() == content
    assert [r["data"]["content"] for r in read_lines(path)] == ["kept"]
    assert sink._queue.empty(), "nothing may pile up in memory after close"
    assert errors.messages == []
    assert sink._writer is not None
    assert not sink._writer.is_alive()


def test_close_without_attach_is_harmless(tmp_path: Path, errors: Errors) -> None:
    sink = EventsSink(tmp_path / "state", Redactor([]), on_error=errors)
    sink.handle(message("never attached"))
    sink.close()
    sink.close()
    assert sink.path is None
    assert not (tmp_path / "state").exists()
    assert errors.messages == []


def test_secret_inside_event_data_is_masked(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(message(f"the token is {SECRET}!"))
    sink.handle(tool_start("call_1", "bash"))
    sink.write_record(
        {
            "type": "driver.note",
            "timestamp": TIMESTAMP,
            "data": {"note": f"{SECRET}", SECRET: "as a key"},
        }
    )
    sink.close()
    raw = path.read_text(encoding="utf-8")
    assert SECRET not in raw
    first, _, note = read_lines(path)
    assert first["data"]["content"] == "the token is ***!"
    assert note["data"] == {"note": "***", "***": "as a key"}


def test_lines_are_never_interleaved_across_threads(sink: EventsSink, errors: Errors) -> None:
    threads_count, per_thread, size = 8, 25, 64 * 1024
    path = sink.attach("s1")
    barrier = threading.Barrier(threads_count)
    failures: list[BaseException] = []

    def produce(worker: int) -> None:
        try:
            filler = chr(ord("a") + worker) * size
            barrier.wait()
            for index in range(per_thread):
                sink.handle(message(f"{worker}:{index}:{filler}", f"m{worker}-{index}"))
        except BaseException as error:  # surfaced by the assertion below
            failures.append(error)

    workers = [threading.Thread(target=produce, args=(w,)) for w in range(threads_count)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(30)
    sink.close()
    assert failures == []

    records = read_lines(path)
    assert len(records) == threads_count * per_thread
    seen: dict[int, list[int]] = {}
    for record in records:
        worker_text, index_text, filler = record["data"]["content"].split(":", 2)
        worker = int(worker_text)
        assert filler == chr(ord("a") + worker) * size, "a line was cut or mixed"
        seen.setdefault(worker, []).append(int(index_text))
    # Every event arrived once, and each producer's events stayed in order.
    assert seen == {w: list(range(per_thread)) for w in range(threads_count)}
    assert errors.messages == []


@pytest.mark.parametrize("session_id", ["", ".", "..", "a/b", "../escape", "/abs"])
def test_attach_rejects_unusable_session_ids(tmp_path: Path, session_id: str) -> None:
    sink = EventsSink(tmp_path / "state", Redactor([]))
    with pytest.raises(ValueError, match="unusable session id"):
        sink.attach(session_id)
    assert sink.path is None
    assert not (tmp_path / "state").exists()


def test_attach_raises_when_the_base_directory_is_unusable(tmp_path: Path) -> None:
    base = tmp_path / "a-regular-file"
    base.write_text("not a directory", encoding="utf-8")
    sink = EventsSink(base, Redactor([]))
    sink.handle(message("pending"))
    with pytest.raises(EventsFileError, match="GH_AW_SESSION_STATE_BASE_DIR") as caught:
        sink.attach("s1")
    assert isinstance(caught.value.__cause__, NotADirectoryError)
    assert sink.path is None
    assert sink._writer is None
    sink.close()  # still safe afterwards
    assert base.read_text(encoding="utf-8") == "not a directory"


class FailingFile:
    """A real file that accepts `room` bytes and then fails like a full disk.

    A write that crosses the limit is accepted in part (what a raw write does
    at the edge of a full disk) and the next one fails.
    """

    def __init__(self, path: Path, room: int = 0) -> None:
        self.raw = open(path, "ab", buffering=0)  # noqa: SIM115
        self.room = room
        self.write_calls = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.write_calls += 1
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        accepted = self.raw.write(bytes(data[: self.room])) or 0
        self.room -= accepted
        return accepted

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()
        self.closed = True


def wait_for(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def test_write_failure_is_reported_once_and_does_not_kill_the_writer(
    sink: EventsSink, errors: Errors, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    failing = FailingFile(tmp_path / "events.jsonl")
    monkeypatch.setattr(events_module, "open", lambda *a, **k: failing, raising=False)
    path = sink.attach("s1")
    sink.handle(message("first"))
    wait_for(lambda: sink.error is not None)
    # More batches after the failure: the writer keeps draining, silently.
    for index in range(5):
        sink.handle(message(f"more {index}"))
        time.sleep(0.01)
    assert sink._writer is not None
    assert sink._writer.is_alive(), "a write failure must not end the writer thread"
    sink.close()

    assert len(errors.messages) == 1
    assert errors.messages == [sink.error]
    assert "No space left on device" in errors.messages[0]
    assert str(path) in errors.messages[0]
    assert sink.lines_written == 0
    assert not sink._writer.is_alive()
    assert failing.closed


def test_a_batch_cut_by_a_full_disk_keeps_its_whole_lines_and_ends_with_one(
    sink: EventsSink, errors: Errors, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = tmp_path / "events.jsonl"
    failing = FailingFile(target, room=10_000)
    monkeypatch.setattr(events_module, "open", lambda *a, **k: failing, raising=False)
    sink.attach("s1")
    sink.handle(message("first"))
    wait_for(lambda: sink.lines_written == 1)
    failing.room = 1_000  # room for a few more lines, then one cut in the middle
    for index in range(200):
        sink.write_record({"type": "driver.note", "data": {"text": f"{index} " + "x" * 200}})
    sink.close()

    assert errors.messages
    assert "No space left on device" in errors.messages[0]
    data = target.read_bytes()
    assert data.endswith(b"\n")  # the line cut in the middle was taken back
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert lines[0]["data"]["content"] == "first"
    notes = [line["data"]["text"].split()[0] for line in lines[1:]]
    assert notes == [str(index) for index in range(len(notes))]  # in order, none lost
    assert 1 <= len(notes) < 5
    assert sink.lines_written == len(lines)


def test_handle_never_raises_when_to_dict_raises(sink: EventsSink, errors: Errors) -> None:
    class Broken:
        ephemeral: bool | None = None

        def to_dict(self) -> dict[str, Any]:
            raise RuntimeError("cannot serialise this one")

    sink.handle(Broken())  # must not raise
    assert len(errors.messages) == 1
    assert "cannot serialise this one" in errors.messages[0]
    # Skipped and reported, but the file itself is still healthy.
    assert sink.skipped == 1
    assert sink.error is None


def test_one_unserialisable_event_does_not_stop_later_events_being_written(
    sink: EventsSink, errors: Errors
) -> None:
    """A bad event must not break the trail: the events after it are still written."""

    class Broken:
        ephemeral: bool | None = None

        def to_dict(self) -> dict[str, Any]:
            raise RuntimeError("cannot serialise this one")

    path = sink.attach("s1")
    sink.handle(message("before"))
    sink.handle(Broken())
    sink.handle(message("after"))
    sink.close()
    assert len(errors.messages) == 1
    assert [r["data"]["content"] for r in read_lines(path)] == ["before", "after"]


def test_handle_never_raises_when_the_record_cannot_be_encoded(
    sink: EventsSink, errors: Errors
) -> None:
    """`handle()` is documented as never raising, whatever the event holds."""

    class Circular:
        ephemeral: bool | None = None

        def to_dict(self) -> dict[str, Any]:
            data: dict[str, Any] = {}
            data["self"] = data
            return {"type": "assistant.message", "timestamp": TIMESTAMP, "data": data}

    sink.attach("s1")
    sink.handle(Circular())  # must not raise
    sink.close()
    assert len(errors.messages) == 1


def test_user_messages_are_written_without_the_prompt(sink: EventsSink) -> None:
    path = sink.attach("s1")
    sink.handle(wire_event("user.message", {"content": "the secret plan", "source": "user"}))
    sink.close()
    (record,) = read_lines(path)
    assert record["type"] == "user.message"
    assert record["data"] == {}
    assert "secret plan" not in path.read_text()


def test_whole_number_floats_are_written_as_javascript_writes_them(sink: EventsSink) -> None:
    """A real `session.shutdown` (tests/data): its float counts are written as ints."""
    shutdown = next(
        json.loads(line)
        for line in (DATA / "events-tools-and-denial.jsonl").read_text().splitlines()
        if '"session.shutdown"' in line
    )
    path = sink.attach("s1")
    sink.handle(SessionEvent.from_dict(shutdown))
    sink.close()
    (record,) = read_lines(path)
    metrics = record["data"]["modelMetrics"]["gpt-4.1"]
    assert metrics["requests"]["cost"] == 0
    assert isinstance(metrics["requests"]["cost"], int)
    written = path.read_text()
    assert ".0," not in written
    assert ".0}" not in written


def test_hook_events_are_written_without_the_prompt(sink: EventsSink) -> None:
    path = sink.attach("s1")
    for event, hook, side in (
        ("hook.start", "sessionStart", "input"),
        ("hook.end", "userPromptTransformed", "output"),
    ):
        data: dict[str, Any] = {
            "hookInvocationId": "h1",
            "hookType": hook,
            side: {"initialPrompt": "the secret plan", "prompt": "the secret plan", "cwd": "/w"},
        }
        if side == "output":
            data["output"]["transformedPrompt"] = "the secret plan, transformed"
            data["success"] = True
        sink.handle(wire_event(event, data))
    sink.close()
    first, second = read_lines(path)
    assert first["data"]["input"] == {"cwd": "/w"}
    assert first["data"]["hookType"] == "sessionStart"
    assert second["data"]["output"] == {"cwd": "/w"}
    assert "secret plan" not in path.read_text()
