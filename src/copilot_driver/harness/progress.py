"""What the harness learns while the driver runs, and the live status line.

The harness reads only what any conforming driver makes visible: its log
lines on stderr (JSON or text) and the events file. From them it learns the
session's id and folder, counts denials, keeps the driver's error (its
`errorKind` and message) and, from the events, whether any tool started and
how the runtime's last `session.error` ended (the retry decision needs both).

On a terminal it keeps a one-line status: elapsed time, the phase (starting
the sidecar, connecting, model round N, running `<command>`), denials so far.
It is cleared before anything else is printed, and never drawn outside a
terminal (in CI it prints nothing of its own).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import IO, Any

from copilot_driver import records
from copilot_driver.formatting import shorten
from copilot_driver.inert_text import visible_controls
from copilot_driver.logs import read_entry
from copilot_driver.vocabulary import LogEvent

_STATUS_CHARS = 100


class Progress:
    """Facts gathered from one try's log lines and its events file."""

    def __init__(self) -> None:
        self.events_file: Path | None = None
        self.session_id: str | None = None
        self.denials = 0
        self.rounds = 0
        self.phase = "starting"
        self.current_tool: str | None = None
        self.started_tools = False
        self.error_kind: str | None = None
        self.errors: list[str] = []
        """The driver's error-level messages, in order (the last is its verdict)."""
        self.session_error: dict[str, Any] = {}
        """The runtime's last `session.error` data (`errorType`, `statusCode`, `message`)."""
        self._events_offset = 0
        self._lock = threading.Lock()

    def read_log_line(self, line: str) -> None:
        """Learn from one driver stderr line, whatever its format."""
        entry = read_entry(line)
        if entry is None:
            return
        event = entry.get("event")
        if event == LogEvent.SESSION_CREATED:
            if isinstance(entry.get("eventsFile"), str):
                self._found_events_file(entry["eventsFile"])
            if isinstance(entry.get("sessionId"), str):
                self.session_id = self.session_id or entry["sessionId"]
            self.phase = "waiting for the model"
        elif event == LogEvent.CLIENT_STARTED:
            self.phase = "creating the session"
        elif event == LogEvent.CONNECTION_START:
            self.phase = "connecting"
        elif event == LogEvent.PERMISSION_DENIED:
            self.denials += 1
        if str(entry.get("level", "")).lower() in ("error", "critical"):
            self.errors.append(str(entry.get("message") or event or "error"))
            if isinstance(entry.get("errorKind"), str):
                self.error_kind = entry["errorKind"]

    def _found_events_file(self, path: str) -> None:
        with self._lock:
            if self.events_file is None:
                self.events_file = Path(path)

    def poll_events(self) -> None:
        """Read the events appended since the last poll (rounds, tools, errors)."""
        with self._lock:
            path = self.events_file
            if path is None:
                return
            try:
                with path.open("rb") as handle:
                    handle.seek(self._events_offset)
                    chunk = handle.read()
            except OSError:
                return
            complete = chunk[: chunk.rfind(b"\n") + 1]  # never half a line
            self._events_offset += len(complete)
            for line in complete.splitlines():
                record = records.parse_line(line)
                if record is not None:
                    self._learn(records.event_type(record), records.event_data(record))

    def _learn(self, kind: str | None, data: dict[str, Any]) -> None:
        if kind == records.ASSISTANT_TURN_START:
            self.rounds += 1
            self.current_tool = None
            self.phase = f"model round {self.rounds}"
        elif kind == records.TOOL_EXECUTION_START:
            self.started_tools = True
            name = str(data.get("toolName") or "tool")
            command = data.get("command")
            self.current_tool = shorten(command, 60) if isinstance(command, str) else name
            self.phase = f"running {self.current_tool}"
        elif kind == records.TOOL_EXECUTION_COMPLETE:
            self.current_tool = None
            self.phase = f"model round {self.rounds}"
        elif kind == records.SESSION_ERROR:
            self.session_error = data

    @property
    def status_code(self) -> int | None:
        code = self.session_error.get("statusCode")
        return code if isinstance(code, int) and not isinstance(code, bool) else None


class StatusLine:
    """A one-line live status on a terminal; other lines print above it."""

    def __init__(self, stream: IO[str], *, enabled: bool) -> None:
        self._stream = stream
        self.enabled = enabled
        self.progress = Progress()
        self.label = ""
        """Shown before the phase, e.g. `try 2/3`."""
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._shown = False
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="status-line", daemon=True)

    def start(self) -> None:
        if self.enabled and not self._ticker.is_alive() and not self._stop.is_set():
            self._ticker.start()
            with self._lock:
                self._draw()
                self._stream.flush()

    def stop(self) -> None:
        """Stop drawing and clear the line (before the answer is printed)."""
        self._stop.set()
        if self._ticker.is_alive():
            self._ticker.join(2)
        with self._lock:
            self._clear()
            self._stream.flush()

    def print_line(self, line: str) -> None:
        """Write one line, keeping the status below it."""
        with self._lock:
            self._clear()
            self._stream.write(line if line.endswith("\n") else line + "\n")
            self._draw()
            self._stream.flush()

    def write_raw(self, text: str) -> None:
        """Write text as is (workflow commands), the status cleared first."""
        with self._lock:
            self._clear()
            self._stream.write(text)
            self._stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self.progress.poll_events()
            with self._lock:
                self._clear()
                self._draw()
                self._stream.flush()

    def _draw(self) -> None:
        if not self.enabled or self._stop.is_set():
            return
        progress = self.progress
        elapsed = time.monotonic() - self._started
        parts = [f"[copilot] {elapsed:.1f}s", self.label, progress.phase]
        parts.append(f"denials {progress.denials}")
        text = " | ".join(part for part in parts if part)
        self._stream.write(shorten(visible_controls(text), _STATUS_CHARS))  # a tool's command
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._shown = False
