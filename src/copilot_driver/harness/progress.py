"""What the harness learns while the driver runs, and the live status line.

The harness reads only what any conforming driver makes visible: its log
lines on stderr (JSON or text) and the events file. From them it learns where
the session's folder is, counts denials, and (on a terminal) keeps a one-line
status: elapsed time, turn, the tool running now, denials so far. In CI
(stderr not a terminal) it prints nothing of its own.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import IO

from copilot_driver import records
from copilot_driver.logs import read_entry


class Progress:
    """Facts gathered from the driver's log lines and its events file."""

    def __init__(self) -> None:
        self.events_file: Path | None = None
        self.denials = 0
        self.turns = 0
        self.current_tool: str | None = None
        self._events_offset = 0
        self._lock = threading.Lock()

    def read_log_line(self, line: str) -> None:
        """Learn from one driver stderr line, whatever its format."""
        entry = read_entry(line)
        if entry is None:
            return
        event = entry.get("event")
        if event == "session.created" and isinstance(entry.get("eventsFile"), str):
            self._found_events_file(entry["eventsFile"])
        elif event == "permission.denied":
            self.denials += 1

    def _found_events_file(self, path: str) -> None:
        with self._lock:
            if self.events_file is None:
                self.events_file = Path(path)

    def poll_events(self) -> None:
        """Read the events appended since the last poll (turns and tools)."""
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
            if record is None:
                continue
            kind = records.event_type(record)
            if kind == records.USER_MESSAGE:
                self.turns += 1
            elif kind == records.TOOL_EXECUTION_START:
                self.current_tool = str(records.event_data(record).get("toolName") or "tool")
            elif kind == records.TOOL_EXECUTION_COMPLETE:
                self.current_tool = None


class StatusLine:
    """A one-line live status on a terminal; driver log lines print above it."""

    def __init__(self, stream: IO[str], progress: Progress, *, enabled: bool) -> None:
        self._stream = stream
        self._progress = progress
        self.enabled = enabled
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._shown = False
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="status-line", daemon=True)

    def start(self) -> None:
        if self.enabled:
            self._ticker.start()

    def stop(self) -> None:
        self._stop.set()
        if self._ticker.is_alive():
            self._ticker.join(2)
        with self._lock:
            self._clear()

    def print_line(self, line: str) -> None:
        """Write one line of the driver's output, keeping the status below it."""
        with self._lock:
            self._clear()
            self._stream.write(line if line.endswith("\n") else line + "\n")
            self._draw()
            self._stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self._progress.poll_events()
            with self._lock:
                self._clear()
                self._draw()
                self._stream.flush()

    def _draw(self) -> None:
        if not self.enabled or self._stop.is_set():
            return
        progress = self._progress
        elapsed = time.monotonic() - self._started
        tool = f"running {progress.current_tool}" if progress.current_tool else "thinking"
        text = (
            f"[copilot] {elapsed:5.1f}s  turn {max(progress.turns, 1)}  {tool}  "
            f"denials {progress.denials}"
        )
        self._stream.write(text)
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._shown = False
