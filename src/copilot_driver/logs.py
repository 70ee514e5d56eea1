"""The driver's lifecycle log: one entry per line on stderr (spec 6, 6.5).

Every entry is an *event* with a name (`connection.start`,
`session.completed`, ...), a level and a message; the JSON form carries the
section 6.5 fields (`event`, `timestamp`, `level`, `message`, `sessionId`
once known, `durationMs`/`hasOutput` on completion, plus event-specific
fields). `COPILOT_DRIVER_LOG_FORMAT=text` prints the same entries as

    [copilot-sdk-driver] INFO session.created: session created sessionId=...

Either way a line quoting model or tool text is inert (`inert_text.inert_line`):
no control character a terminal acts on, no `##[` the Actions runner reads.

Lifecycle, denial and error entries are audit records: they are written at
every COPILOT_SDK_LOG_LEVEL. The level adds the SDK's own log and the
driver's debug entries at `debug`/`all`; below that the SDK's logger (which
prints tracebacks for expected fallbacks) is silenced.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import IO, Any

from pythonjsonlogger.json import JsonFormatter

from copilot_driver import LOG_PREFIX
from copilot_driver.formatting import escape_line_breaks, iso_utc
from copilot_driver.inert_text import inert_line
from copilot_driver.redaction import Redactor
from copilot_driver.variable import LogFormat, LogLevel

LOGGER_NAME = "copilot_driver"
SDK_LOGGER_NAME = "copilot"

# Attributes every LogRecord has; anything else on a record is an entry field.
_RECORD_ATTRS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
_HEAD_FIELDS = ("event", "timestamp", "level", "message")
_TEXT_HEAD = re.compile(
    rf"{re.escape(LOG_PREFIX)} (?P<level>[A-Z]+) (?P<event>[\w.]+): (?P<message>.*)"
)
_TEXT_FIELD = re.compile(r' (?P<key>[A-Za-z]\w*)=(?P<value>"(?:[^"\\]|\\.)*"|\S+)')


class DriverLog:
    """Write named lifecycle entries; remembers the session id once known."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._context: dict[str, Any] = {}
        self.last_entry_at = time.monotonic()
        """When the latest entry was written (monotonic): the keep-alive's clock."""

    def bind(self, **fields: Any) -> None:
        """Add fields (e.g. `sessionId`) to every later entry."""
        self._context.update(fields)

    def debug(self, event: str, message: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, message, fields)

    def info(self, event: str, message: str, **fields: Any) -> None:
        self._log(logging.INFO, event, message, fields)

    def warning(self, event: str, message: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, message, fields)

    def error(self, event: str, message: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, message, fields)

    def _log(self, level: int, event: str, message: str, fields: dict[str, Any]) -> None:
        extra = {"event": event, **self._context, **fields}
        self._logger.log(level, "%s", message, extra={"fields": extra})
        if self._logger.isEnabledFor(level):
            self.last_entry_at = time.monotonic()


def entry_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The entry as an ordered mapping: event, timestamp, level, message, rest."""
    fields: dict[str, Any] = dict(getattr(record, "fields", {}))
    # Records from other loggers (the SDK's) carry their extras as attributes.
    for key, value in vars(record).items():
        if key not in _RECORD_ATTRS and key != "fields":
            fields.setdefault(key, value)
    entry = {
        "event": fields.pop("event", f"{record.name}.log"),
        "timestamp": iso_utc(record.created),
        "level": record.levelname.lower(),
        "message": record.getMessage(),
    }
    # Fields add to the entry; they never replace its head (event, timestamp, ...).
    entry.update((key, value) for key, value in fields.items() if key not in entry)
    return entry


class JsonEntryFormatter(JsonFormatter):
    """python-json-logger with the section 6.5 field set, secrets masked."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__(json_ensure_ascii=False)
        self._redactor = redactor

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        log_data.update(entry_fields(record))
        if record.exc_info:
            log_data["exception"] = self.formatException(record.exc_info)

    def jsonify_log_record(self, log_data: Any) -> str:
        return inert_line(super().jsonify_log_record(self._redactor.value(log_data)))


class TextEntryFormatter(logging.Formatter):
    """`[copilot-sdk-driver] LEVEL event: message key=value ...`, one line."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        entry = entry_fields(record)
        head = f"{LOG_PREFIX} {entry['level'].upper()} {entry['event']}: "
        message = escape_line_breaks(str(entry["message"]))
        rest = " ".join(
            f"{key}={_text_value(value)}" for key, value in entry.items() if key not in _HEAD_FIELDS
        )
        line = head + message + (" " + rest if rest else "")
        if record.exc_info:
            line += " exception=" + _text_value(self.formatException(record.exc_info))
        return inert_line(self._redactor.text(line))


def configure_logging(
    log_format: LogFormat,
    log_level: LogLevel,
    redactor: Redactor,
    stream: IO[str] | None = None,
) -> DriverLog:
    """Route the driver's (and, at debug/all, the SDK's) log to stderr."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(
        JsonEntryFormatter(redactor) if log_format == "json" else TextEntryFormatter(redactor)
    )
    verbose = log_level in ("debug", "all")

    driver_logger = logging.getLogger(LOGGER_NAME)
    driver_logger.handlers[:] = [handler]
    driver_logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    driver_logger.propagate = False

    sdk_logger = logging.getLogger(SDK_LOGGER_NAME)
    sdk_logger.handlers[:] = [handler] if verbose else [logging.NullHandler()]
    sdk_logger.setLevel(logging.DEBUG if verbose else logging.CRITICAL + 1)
    sdk_logger.propagate = False
    return DriverLog(driver_logger)


def _text_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) or value is None:
        return json.dumps(value)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        value = ",".join(value)  # allowedTools=shell(ls:*),read
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if text and not any(c.isspace() or c in "\"'=\\" for c in text):
        return text
    return json.dumps(text, ensure_ascii=False)


def read_json_entry(line: str) -> dict[str, Any] | None:
    """One JSON log line as its entry; None for any other line."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        return None
    try:
        entry = json.loads(stripped)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


_REFUSAL = re.compile(r"\[[\w.-]+\] error: (?P<message>.+)", re.DOTALL)
"""What a driver prints before its log exists: `[copilot-sdk-driver] error: ...` (a
configuration it refuses, a stop before the start)."""


def read_text_entry(line: str) -> dict[str, Any] | None:
    """One text log line as an entry: its event, level and message, plus the fields
    written as `key=value` after it (read back as strings). None for any other line."""
    match = _TEXT_HEAD.fullmatch(line.strip())
    if match is None:
        refusal = _REFUSAL.fullmatch(line.strip())
        if refusal is None:
            return None
        return {"event": "error", "level": "error", "message": refusal["message"]}
    entry: dict[str, Any] = {
        "event": match["event"],
        "level": match["level"].lower(),
        "message": match["message"],
    }
    for field in _TEXT_FIELD.finditer(match["message"]):
        value = field["value"]
        if value.startswith('"'):
            try:
                value = json.loads(value)
            except ValueError:
                continue
        entry.setdefault(field["key"], value)
    return entry


def read_entry(line: str) -> dict[str, Any] | None:
    """One line of the driver's log as an entry, in either format."""
    return read_json_entry(line) or read_text_entry(line)
