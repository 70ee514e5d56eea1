"""The session's audit trail: non-ephemeral events as JSON Lines (spec 3.3).

One line per event, `{"type", "timestamp", "data"}` plus `id`/`parentId`
when present, `data` in the runtime's camelCase names, appended to
`<base>/<sessionId>/events.jsonl` as it happens. The lines gh-aw's own
driver writes are there with at least its fields and in its timestamp format
(gh-aw's timeline, audit and session-state steps read the file); like it,
`user.message` is written without the prompt's text.

Why it is shaped this way:
- The SDK calls event handlers on the event loop, so `handle()` only
  filters, serialises and enqueues; a single writer thread does the file
  I/O in batches. One writer means lines are never interleaved, and whole
  lines are written with one call each batch, so none is ever truncated by
  a concurrent writer.
- Events can arrive before the session id is known (`session.start` comes
  during `create_session`); they wait in a small buffer until `attach()`.
- Memory stays flat: the queue is drained continuously and the only other
  state is the set of tool calls still running (for enrichment).
- `close()` drains, flushes and fsyncs; it runs on success, errors and
  signals alike. Events still waiting for a session id when it is called
  are dropped: without a session there is no file to hold them.
- One event that cannot be serialised is reported and skipped; it never
  stops the events around it from being written. A failed *write* (a full
  disk, a file-size limit) stops the file and is reported once; a line of
  the failed batch that reached the disk only in part is cut off again, so
  the file still ends with a whole line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from copilot_driver.env import SESSION_STATE_BASE_DIR
from copilot_driver.errors import CopilotDriverError
from copilot_driver.records import (
    TOOL_EXECUTION_COMPLETE,
    TOOL_EXECUTION_START,
    USER_MESSAGE,
    EventRecord,
    make_record,
)
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import EVENTS_FILE_NAME, DriverErrorKind

_BATCH_LINES = 512
_PATH_CHARS = 300
_STOP = object()


class EventsFileError(CopilotDriverError, OSError):
    """The events file cannot be created; `failure_kind` names it for the log."""

    failure_kind = DriverErrorKind.EVENTS_UNWRITABLE


class SessionEventLike(Protocol):
    """What the sink needs of an SDK `SessionEvent`."""

    ephemeral: bool | None

    def to_dict(self) -> dict[str, Any]: ...


class EventsSink:
    def __init__(
        self,
        base_dir: Path,
        redactor: Redactor,
        *,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self._base_dir = base_dir
        self._redactor = redactor
        self._on_error = on_error
        self._pending: list[str] | None = []  # lines before attach(); None after
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._tools: dict[str, dict[str, Any]] = {}
        self._closed = False
        self.path: Path | None = None
        self.lines_written = 0
        self.skipped = 0
        self.error: str | None = None
        """Why the file stopped being written (a write error, a stuck writer)."""

    # -- called on the event loop ------------------------------------------

    def handle(self, event: SessionEventLike) -> None:
        """The SDK event handler: persist `event` unless it is ephemeral.

        Never raises: a bad event must not break the session.
        """
        try:
            if event.ephemeral:
                return
            self.write_record(self._record(event.to_dict()))
        except Exception as error:  # this one event cannot be serialised: skip it
            self.skipped += 1
            if self._on_error is not None:
                self._on_error(f"an event could not be serialised and was skipped: {error}")

    def write_record(self, record: Mapping[str, Any]) -> None:
        """Append a record the driver itself produces (same line format)."""
        if self._closed:
            return
        line = self._redactor.json_line(dict(record)) + "\n"
        if self._pending is not None:
            self._pending.append(line)
        else:
            self._queue.put(line)

    def attach(self, session_id: str) -> Path:
        """Open `<base>/<session_id>/events.jsonl` and start writing to it."""
        if not session_id or "/" in session_id or session_id in (".", ".."):
            raise ValueError(f"unusable session id for a folder name: {session_id!r}")
        folder = self._base_dir / session_id
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # Unbuffered: a failed write must leave nothing queued in a buffer
            # that closing the file would try to write again.
            handle = open(folder / EVENTS_FILE_NAME, "ab", buffering=0)  # noqa: SIM115
        except OSError as error:
            shown = str(folder)
            if len(shown) > _PATH_CHARS:  # a path of thousands of characters: its ends say enough
                shown = f"{shown[: _PATH_CHARS // 2]}...{shown[-_PATH_CHARS // 2 :]}"
            raise EventsFileError(
                f"cannot create the events file in {shown}: {error.strerror or error}; "
                f"set {SESSION_STATE_BASE_DIR.name} to a writable folder"
            ) from error
        self.path = folder / EVENTS_FILE_NAME
        pending, self._pending = self._pending or [], None
        for line in pending:
            self._queue.put(line)
        self._writer = threading.Thread(
            target=self._write_loop, args=(handle,), name="events-writer", daemon=True
        )
        self._writer.start()
        return self.path

    def close(self, timeout: float = 5.0) -> None:
        """Write everything queued, flush to disk and close. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._writer is None:
            return
        self._queue.put(_STOP)
        self._writer.join(timeout)
        if self._writer.is_alive():
            self._report(f"the events writer did not finish within {timeout:g}s")

    # -- internals ---------------------------------------------------------

    def _record(self, raw: dict[str, Any]) -> EventRecord:
        event_type = raw.get("type")
        data = raw.get("data")
        if event_type == USER_MESSAGE:
            # gh-aw's driver writes `{}`: a prompt can hold what a workflow's author would
            # not put in an uploaded artifact, and the driver's log has its length.
            data = {}
        elif isinstance(data, dict) and isinstance(event_type, str) and event_type in HOOK_TYPES:
            data = _without_prompts(data)
        elif isinstance(data, dict):
            data = self._enrich(event_type, data)
        return make_record(
            str(event_type), _whole_numbers_as_ints(data), timestamp=raw.get("timestamp"), ids=raw
        )

    def _enrich(self, event_type: Any, data: dict[str, Any]) -> dict[str, Any]:
        """Give the tool events the fields gh-aw's reference driver writes there:
        `mcpServerName` on both (`""` for a built-in tool), the start's tool name on
        the completion, and `input`, `command`, `mcpToolName` on the start.

        The runtime's completion event carries only the `toolCallId`, while
        timelines need the tool's name on both ends of the call.
        """
        if event_type in (TOOL_EXECUTION_START, TOOL_EXECUTION_COMPLETE):
            data = {**data, "mcpServerName": data.get("mcpServerName") or ""}
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            return data
        if event_type == TOOL_EXECUTION_START:
            names = {k: data[k] for k in ("toolName", "mcpServerName") if data.get(k) is not None}
            self._tools[call_id] = names
            added = {k: v for k, v in _start_fields(data).items() if k not in data}
            return {**data, **added} if added else data
        if event_type == TOOL_EXECUTION_COMPLETE:
            names = self._tools.pop(call_id, {})
            missing = {k: v for k, v in names.items() if k not in data or not data[k]}
            if missing:
                return {**data, **missing}
        return data

    def _write_loop(self, handle: Any) -> None:
        try:
            stop = False
            while not stop:
                batch = [self._queue.get()]
                while len(batch) < _BATCH_LINES:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = any(item is _STOP for item in batch)
                lines = [item for item in batch if isinstance(item, str)]
                if lines and self.error is None:
                    kept, failure = _append(handle, "".join(lines).encode("utf-8"))
                    self.lines_written += kept
                    if failure is not None:
                        self._report(f"cannot write {self.path}: {failure.strerror or failure}")
            if self.error is None:
                with contextlib.suppress(OSError):
                    os.fsync(handle.fileno())
        finally:
            with contextlib.suppress(OSError):
                handle.close()

    def _report(self, message: str) -> None:
        if self.error is None:
            self.error = message
            if self._on_error is not None:
                self._on_error(message)


def _append(handle: Any, data: bytes) -> tuple[int, OSError | None]:
    """Write `data` (whole lines): the lines that reached the file, and the failure.

    A full disk or a file-size limit can accept part of a batch before it
    fails: the file is then cut back to the last whole line, so the lines of
    the batch that fitted are kept and the file still ends with a newline.
    """
    try:
        start = os.fstat(handle.fileno()).st_size
    except OSError as error:
        return 0, error
    view = memoryview(data)
    done = 0
    try:
        while done < len(data):
            written = handle.write(view[done:])
            if not written:  # a raw write that accepted nothing: the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            done += written
    except OSError as error:
        whole = data.rfind(b"\n", 0, done) + 1
        with contextlib.suppress(OSError):
            os.ftruncate(handle.fileno(), start + whole)
        return data.count(b"\n", 0, whole), error
    return data.count(b"\n"), None


def _start_fields(data: dict[str, Any]) -> dict[str, Any]:
    """`input` (the call's arguments), `command` (a shell call's command line) and
    `mcpToolName` (an MCP call's tool, without its server's prefix), as gh-aw's
    reference driver writes them on `tool.execution_start`."""
    fields: dict[str, Any] = {}
    arguments = data.get("arguments")
    if arguments is not None:
        fields["input"] = arguments
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        fields["command"] = arguments["command"]
    server, tool = data.get("mcpServerName"), data.get("toolName")
    if isinstance(server, str) and server and isinstance(tool, str):
        fields["mcpToolName"] = tool.removeprefix(f"{server}-")
    return fields


def _whole_numbers_as_ints(value: Any) -> Any:
    """`1.0` as `1`, as JavaScript writes it: the SDK gives some counts as floats
    (`session.shutdown`'s `cost`, `totalPremiumRequests`), and gh-aw's Go readers
    declare them integers and skip a line that holds `1.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers_as_ints(item) for item in value]
    return value


HOOK_TYPES = frozenset(["hook.start", "hook.end"])
PROMPT_FIELDS = frozenset(["prompt", "initialPrompt", "transformedPrompt"])
"""What the runtime's hook events carry of the prompt (`sessionStart`,
`userPromptSubmitted`, `userPromptTransformed`): left out, like `user.message`'s text."""


def _without_prompts(data: dict[str, Any]) -> dict[str, Any]:
    """A hook event's data with the prompt's text left out of its input and output."""
    kept = dict(data)
    for side in ("input", "output"):
        part = kept.get(side)
        if isinstance(part, dict):
            kept[side] = {key: value for key, value in part.items() if key not in PROMPT_FIELDS}
    return kept
