"""`copilot_driver.vocabulary`: the words that cross processes, written by one side and
read back by the other."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from copilot_driver import records, vocabulary
from copilot_driver.logs import configure_logging, read_entry
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import Denial, LogEvent, RunResult, read_result
from helpers.report_samples import json_values


def test_the_result_file(tmp_path: Path) -> None:
    events = tmp_path / vocabulary.EVENTS_FILE_NAME
    assert read_result(events) is None  # absent

    (tmp_path / "result.json").write_text("{not json")
    assert read_result(events) is None

    (tmp_path / "result.json").write_text("[1]")
    assert read_result(events) is None

    older = {"exitCode": 0, "output": "x", "error": None}  # before errorKind existed
    (tmp_path / "result.json").write_text(json.dumps(older))
    assert read_result(events) == RunResult(0, output="x")

    (tmp_path / "result.json").write_text(
        json.dumps({"exitCode": 1, "errorKind": "session_error", "error": "boom"})
    )
    assert read_result(events) == RunResult(1, "session_error", "boom")


def test_a_written_result_reads_back_the_same(tmp_path: Path) -> None:
    written = RunResult(
        exit_code=1,
        error_kind=vocabulary.DriverErrorKind.SEND_TIMEOUT,
        error="no answer",
        duration_ms=1234,
        output="half an answer",
        session_id="s-1",
        policy=vocabulary.PolicyInForce(
            "scoped", "GH_AW_COPILOT_SDK_PERMISSIONS", ("read",), ("shell(rm:*)",), "1 rule: read"
        ),
    )
    text = json.dumps(written.to_json())

    assert list(json.loads(text)) == [
        "exitCode",
        "output",
        "hasOutput",
        "durationMs",
        "sessionId",
        "error",
        "errorKind",
        "policy",
    ]
    assert json.loads(text)["policy"] == {
        "mode": "scoped",
        "source": "GH_AW_COPILOT_SDK_PERMISSIONS",
        "allowedTools": ["read"],
        "deniedTools": ["shell(rm:*)"],
        "summary": "1 rule: read",
    }
    assert RunResult.from_json(json.loads(text)) == written


@pytest.mark.parametrize(
    "value",
    [None, [], "scoped", {"mode": 1, "source": "x"}, {"source": "X"}],
)
def test_a_policy_that_cannot_be_read_is_not_given(value: object) -> None:
    assert vocabulary.PolicyInForce.from_json(value) is None


def test_a_policy_reads_back_tolerantly() -> None:
    read = vocabulary.PolicyInForce.from_json(
        {"mode": "unrestricted", "source": None, "allowedTools": ["a", 1], "deniedTools": "x"}
    )
    assert read == vocabulary.PolicyInForce("unrestricted", None, ("a",), (), "")
    assert read.approves_everything


def test_result_fields_of_the_wrong_type_are_missing() -> None:
    assert RunResult.from_json({"exitCode": True, "errorKind": 3, "error": ["x"]}) == RunResult()
    assert RunResult.from_json({"exitCode": "1", "durationMs": float("nan")}) == RunResult()
    assert RunResult.from_json({"durationMs": -1, "output": 7}) == RunResult()


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_is_read_without_raising(value: Any) -> None:
    RunResult.from_json(value)
    if isinstance(value, dict):
        Denial.from_record_data(value)


def test_a_denial_reads_back_from_its_record() -> None:
    denial = Denial(
        kind="shell",
        summary="shell(rm -rf /)",
        reason="no rule allows rm",
        allow_rule="shell(rm:*)",
        tool_call_id="call-1",
        session_id="s-1",
    )
    record = records.denial_record(denial)

    assert record["type"] == records.POLICY_DENIAL
    # The session is the file's, not the record's.
    assert Denial.from_record_data(record["data"]) == Denial(
        "shell", "shell(rm -rf /)", "no rule allows rm", "shell(rm:*)", "call-1"
    )
    assert denial.log_fields() == {
        "sessionId": "s-1",
        "requestKind": "shell",
        "requestSummary": "shell(rm -rf /)",
        "reason": "no rule allows rm",
        "allowRule": "shell(rm:*)",
    }


def test_a_denial_record_missing_its_fields_still_reads() -> None:
    assert Denial.from_record_data({}) == Denial(None, "unknown", "(no reason recorded)")


def test_log_events_are_written_and_read_back_as_their_names() -> None:
    for log_format in ("json", "text"):
        stream = io.StringIO()
        log = configure_logging(log_format, "info", Redactor([]), stream=stream)
        log.info(LogEvent.SESSION_CREATED, "session s-1 created")
        (line,) = stream.getvalue().splitlines()

        assert "session.created" in line
        assert "LogEvent" not in line
        entry = read_entry(line)
        assert entry is not None
        assert entry["event"] == LogEvent.SESSION_CREATED


def test_every_log_event_has_its_own_name() -> None:
    assert len({event.value for event in LogEvent}) == len(LogEvent)
