"""Unit tests for `copilot_driver.logs`: the lifecycle log on stderr (spec 6, 6.5)."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from copilot_driver.logs import (
    LOGGER_NAME,
    SDK_LOGGER_NAME,
    DriverLog,
    configure_logging,
    read_entry,
    read_json_entry,
    read_text_entry,
)
from copilot_driver.redaction import Redactor

SECRET = "tok-LOG-SECRET-92c1"
ALL_LEVELS = ("none", "error", "warning", "info", "debug", "all")
QUIET_LEVELS = ("none", "error", "warning", "info")
VERBOSE_LEVELS = ("debug", "all")


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def root_records() -> Iterator[list[logging.LogRecord]]:
    """Whatever reaches the root logger (nothing should: both loggers do not propagate)."""
    handler = _ListHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)


def _setup(
    fmt: str = "json", level: str = "info", secrets: tuple[str, ...] = ()
) -> tuple[DriverLog, io.StringIO]:
    stream = io.StringIO()
    log = configure_logging(fmt, level, Redactor(secrets), stream=stream)  # type: ignore[arg-type]
    return log, stream


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def _json_entries(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in _lines(stream)]


# -- JSON format ----------------------------------------------------------------------


def test_json_entry_has_the_section_6_5_fields_in_order() -> None:
    log, stream = _setup("json")
    log.bind(sessionId="s1")
    before = datetime.now(UTC)
    log.info("session.completed", "done", durationMs=5, hasOutput=True)
    after = datetime.now(UTC)

    (line,) = _lines(stream)
    entry = json.loads(line)
    assert list(entry) == [
        "event",
        "timestamp",
        "level",
        "message",
        "sessionId",
        "durationMs",
        "hasOutput",
    ]
    assert entry["event"] == "session.completed"
    assert entry["level"] == "info"
    assert entry["message"] == "done"
    assert entry["sessionId"] == "s1"
    assert entry["durationMs"] == 5
    assert entry["hasOutput"] is True

    stamp = entry["timestamp"]
    assert isinstance(stamp, str)
    assert stamp.endswith("Z")
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    assert before.replace(microsecond=0) <= parsed.replace(microsecond=0)
    assert parsed <= after


def test_json_session_id_absent_until_bound() -> None:
    log, stream = _setup("json")
    log.info("connection.start", "connecting")
    log.bind(sessionId="abc-123")
    log.info("session.created", "created")
    first, second = _json_entries(stream)
    assert "sessionId" not in first
    assert second["sessionId"] == "abc-123"


@pytest.mark.parametrize(
    ("method", "level"), [("info", "info"), ("warning", "warning"), ("error", "error")]
)
def test_json_level_names(method: str, level: str) -> None:
    log, stream = _setup("json")
    getattr(log, method)("some.event", "text")
    (entry,) = _json_entries(stream)
    assert entry["level"] == level
    assert entry["event"] == "some.event"


def test_json_message_with_newlines_stays_one_line() -> None:
    log, stream = _setup("json")
    log.error("error", "first line\nsecond line\r\nthird", detail="a\nb")
    (line,) = _lines(stream)
    entry = json.loads(line)
    assert entry["message"] == "first line\nsecond line\r\nthird"
    assert entry["detail"] == "a\nb"


def test_json_non_ascii_is_kept() -> None:
    log, stream = _setup("json")
    log.info("x.y", "résumé ✓")
    assert "résumé ✓" in stream.getvalue()
    assert _json_entries(stream)[0]["message"] == "résumé ✓"


# -- text format ----------------------------------------------------------------------


def test_text_entry_format() -> None:
    log, stream = _setup("text")
    log.bind(sessionId="s1")
    log.info("session.completed", "done", durationMs=5, hasOutput=True)
    assert stream.getvalue() == (
        "[copilot-sdk-driver] INFO session.completed: done sessionId=s1 durationMs=5 "
        "hasOutput=true\n"
    )


def test_text_entry_without_fields() -> None:
    log, stream = _setup("text")
    log.warning("config.fallback", "using the default")
    assert _lines(stream) == ["[copilot-sdk-driver] WARNING config.fallback: using the default"]


def test_text_message_with_newlines_stays_one_line() -> None:
    log, stream = _setup("text")
    log.error("error", "line one\nline two\rthree", detail="x\ny")
    (line,) = _lines(stream)
    assert line.startswith("[copilot-sdk-driver] ERROR error: line one\\nline two\\rthree")
    assert 'detail="x\\ny"' in line


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("a b", '"a b"'),
        ("", '""'),
        ("k=v", '"k=v"'),
        ("plain", "plain"),
        (False, "false"),
        (None, "null"),
        (1.5, "1.5"),
        (7, "7"),
    ],
)
def test_text_field_values(value: object, shown: str) -> None:
    log, stream = _setup("text")
    log.info("e.v", "m", field=value)
    (line,) = _lines(stream)
    assert line == f"[copilot-sdk-driver] INFO e.v: m field={shown}"


def test_text_structured_value_is_one_quoted_token() -> None:
    log, stream = _setup("text")
    log.info("e.v", "m", data={"a": [1, "two words"]})
    (line,) = _lines(stream)
    _, _, raw = line.partition(" data=")
    assert json.loads(json.loads(raw)) == {"a": [1, "two words"]}


# -- redaction ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_secret_is_masked_in_message_and_fields(fmt: str) -> None:
    log, stream = _setup(fmt, secrets=(SECRET,))
    log.bind(sessionId=f"s-{SECRET}")
    log.error(
        "error",
        f"the sidecar said: bad token {SECRET}",
        detail=SECRET,
        nested={"inner": {"list": ["x", f"pre{SECRET}post", {"deep": SECRET}]}},
        items=[SECRET, 1, True],
    )
    output = stream.getvalue()
    assert SECRET not in output
    assert "***" in output
    (line,) = _lines(stream)
    if fmt == "json":
        entry = json.loads(line)
        assert entry["message"] == "the sidecar said: bad token ***"
        assert entry["detail"] == "***"
        assert entry["sessionId"] == "s-***"
        assert entry["nested"] == {"inner": {"list": ["x", "pre***post", {"deep": "***"}]}}
        assert entry["items"] == ["***", 1, True]
    else:
        assert "bad token ***" in line
        assert "detail=***" in line


@pytest.mark.parametrize("secret", ["abcdefgh", 'q"t-quoted', "back\\slash", "ünïcødé-1"])
def test_json_stays_valid_with_awkward_secrets(secret: str) -> None:
    log, stream = _setup("json", secrets=(secret,))
    log.info(
        "x.y",
        f"msg {secret} end",
        tab=f"grab{secret}",
        nested={f"k{secret}": [secret, "ok"]},
    )
    (line,) = _lines(stream)
    entry = json.loads(line)
    assert secret not in line
    assert json.dumps(secret)[1:-1] not in line
    assert entry["message"] == "msg *** end"
    assert entry["event"] == "x.y"
    assert entry["level"] == "info"


def test_json_short_secret_only_as_a_whole_value() -> None:
    # `1` as a connection token must not turn 127.0.0.1 or the timestamp into masks.
    log, stream = _setup("json", secrets=("1",))
    log.info("x.y", "about 127.0.0.1", table={"label": "1"}, one=1, uri="127.0.0.1:1")
    (line,) = _lines(stream)
    entry = json.loads(line)
    assert entry["message"] == "about 127.0.0.1"
    assert entry["table"] == {"label": "***"}
    assert entry["uri"] == "127.0.0.1:1"
    assert "***" not in entry["timestamp"]


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_secret_in_non_string_field_values_is_masked(fmt: str) -> None:
    # Defence in depth: a field holding an object (a path, an exception) is
    # serialised through str(); the secret inside it must still be masked.
    log, stream = _setup(fmt, secrets=(SECRET,))
    log.error("error", "failed", path=Path(f"/work/{SECRET}"), cause=RuntimeError(SECRET))
    assert len(_lines(stream)) == 1
    assert SECRET not in stream.getvalue()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_sdk_exception_traceback_is_masked_and_one_line(fmt: str) -> None:
    _, stream = _setup(fmt, level="debug", secrets=(SECRET,))
    try:
        raise RuntimeError(f"auth failed for {SECRET}")
    except RuntimeError:
        logging.getLogger(SDK_LOGGER_NAME).exception("request failed")
    output = stream.getvalue()
    assert SECRET not in output
    (line,) = _lines(stream)
    assert "RuntimeError" in line
    if fmt == "json":
        entry = json.loads(line)
        assert entry["event"] == "copilot.log"
        assert "auth failed for ***" in entry["exception"]
    else:
        assert "exception=" in line


# -- levels and the SDK logger --------------------------------------------------------


@pytest.mark.parametrize("level", QUIET_LEVELS)
def test_sdk_logger_is_silent_below_debug(
    level: str, root_records: list[logging.LogRecord]
) -> None:
    _, stream = _setup("json", level=level)
    sdk = logging.getLogger(SDK_LOGGER_NAME)
    sdk.debug("dbg")
    sdk.error("err")
    sdk.critical("crit")
    try:
        raise ValueError("expected fallback")
    except ValueError:
        logging.getLogger(f"{SDK_LOGGER_NAME}.jsonrpc").exception("noisy traceback")
    assert stream.getvalue() == ""
    assert root_records == []


@pytest.mark.parametrize("level", VERBOSE_LEVELS)
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_sdk_logger_is_routed_at_debug(
    level: str, fmt: str, root_records: list[logging.LogRecord]
) -> None:
    _, stream = _setup(fmt, level=level)
    logging.getLogger(SDK_LOGGER_NAME).debug("sdk says %s", "hi")
    logging.getLogger(f"{SDK_LOGGER_NAME}.client").warning("child says hi", extra={"port": 3})
    lines = _lines(stream)
    assert len(lines) == 2
    if fmt == "json":
        first, second = (json.loads(line) for line in lines)
        assert first["event"] == "copilot.log"
        assert first["level"] == "debug"
        assert first["message"] == "sdk says hi"
        assert second["event"] == "copilot.client.log"
        assert second["level"] == "warning"
        assert second["port"] == 3
    else:
        assert lines[0] == "[copilot-sdk-driver] DEBUG copilot.log: sdk says hi"
        assert lines[1] == "[copilot-sdk-driver] WARNING copilot.client.log: child says hi port=3"
    assert root_records == []


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_driver_debug_entries_only_at_debug(level: str) -> None:
    log, stream = _setup("json", level=level)
    log.debug("error.detail", "detail")
    entries = _json_entries(stream)
    if level in VERBOSE_LEVELS:
        assert [entry["event"] for entry in entries] == ["error.detail"]
        assert entries[0]["level"] == "debug"
    else:
        assert entries == []


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_lifecycle_entries_are_written_at_every_level(
    level: str, root_records: list[logging.LogRecord]
) -> None:
    log, stream = _setup("json", level=level)
    log.info("connection.start", "connecting")
    log.warning("config.fallback", "ignored")
    log.error("error", "failed")
    assert [entry["event"] for entry in _json_entries(stream)] == [
        "connection.start",
        "config.fallback",
        "error",
    ]
    assert root_records == []


def test_reconfiguring_replaces_the_handler() -> None:
    _, first = _setup("json", level="debug")
    log, second = _setup("text", level="warning")
    log.info("a.b", "once")
    logging.getLogger(SDK_LOGGER_NAME).error("sdk")
    assert first.getvalue() == ""
    assert _lines(second) == ["[copilot-sdk-driver] INFO a.b: once"]
    assert len(logging.getLogger(LOGGER_NAME).handlers) == 1


def test_default_stream_is_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    log = configure_logging("text", "info", Redactor())
    log.info("a.b", "to stderr")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "[copilot-sdk-driver] INFO a.b: to stderr\n"


def test_bind_fields_are_overridden_by_call_fields() -> None:
    log, stream = _setup("json")
    log.bind(sessionId="s1", phase="connect")
    log.info("a.b", "m", phase="turn")
    (entry,) = _json_entries(stream)
    assert entry["phase"] == "turn"
    assert entry["sessionId"] == "s1"


def test_entries_arrive_in_time_order() -> None:
    log, stream = _setup("json")
    for index in range(3):
        log.info("tick", f"n{index}")
        time.sleep(0.002)
    stamps = [str(entry["timestamp"]) for entry in _json_entries(stream)]
    assert stamps == sorted(stamps)


# -- reading entries back -------------------------------------------------------


def test_both_formats_read_back_to_the_same_event_and_fields() -> None:
    for log_format in ("json", "text"):
        stream = io.StringIO()
        log = configure_logging(log_format, "info", Redactor([]), stream=stream)
        log.info("session.created", "session s-1 created", eventsFile="/tmp/a b/events.jsonl")
        (line,) = stream.getvalue().splitlines()
        entry = read_entry(line)
        assert entry is not None
        assert entry["event"] == "session.created"
        assert entry["level"] == "info"
        assert entry["eventsFile"] == "/tmp/a b/events.jsonl"
        if log_format == "json":
            assert read_text_entry(line) is None
        else:
            assert read_json_entry(line) is None
    for other in ("", "Traceback (most recent call last):", "{not json", "[1]"):
        assert read_entry(other) is None
