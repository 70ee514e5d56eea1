"""How a run ends: its RunResult, result.json (spec 7.2) and the last log entry.

The record itself is `vocabulary.RunResult`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from copilot_driver.driver.failures import Failure
from copilot_driver.exit_codes import ExitCode
from copilot_driver.logs import DriverLog
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import RESULT_FILE_NAME, LogEvent, PolicyInForce, RunResult


def write_result(path: Path, result: RunResult, redactor: Redactor) -> None:
    """Write result.json atomically (a reader never sees half a file)."""
    text = json.dumps(redactor.value(result.to_json()), ensure_ascii=False, indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def conclude(
    failure: Failure | None,
    *,
    output: str,
    duration_ms: float,
    session_id: str | None,
    events_file: Path | None,
    policy: PolicyInForce | None = None,
    redactor: Redactor,
    log: DriverLog,
) -> RunResult:
    """The run's result, written beside the events file (when there is one), and the
    run's last log entry: `session.completed` on success, `error` otherwise."""
    result = RunResult(
        exit_code=failure.exit_code if failure else ExitCode.OK,
        output=output,
        duration_ms=duration_ms,
        session_id=session_id,
        error=failure.message if failure else None,
        error_kind=failure.kind if failure else None,
        policy=policy,
    )
    result_file = _write_result_file(result, events_file, redactor, log)
    summary: dict[str, Any] = {
        "exitCode": result.exit_code,
        "hasOutput": result.has_output,
        "durationMs": result.duration_ms,
    }
    if result_file:
        summary["resultFile"] = result_file
    if failure is None:
        log.info(LogEvent.SESSION_COMPLETED, "session completed", **summary)
    else:
        log.error(LogEvent.ERROR, failure.message, errorKind=failure.kind, **summary)
    return result


def _write_result_file(
    result: RunResult, events_file: Path | None, redactor: Redactor, log: DriverLog
) -> str | None:
    if events_file is None:
        return None
    path = events_file.with_name(RESULT_FILE_NAME)
    try:
        write_result(path, result, redactor)
    except OSError as error:
        log.error(LogEvent.RESULT_WRITE_FAILED, f"cannot write {path}: {error.strerror}")
        return None
    return str(path)
