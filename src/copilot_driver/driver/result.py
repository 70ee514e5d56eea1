"""The outcome of a run: the session result and its file (spec 7.2)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.redaction import Redactor


@dataclass(frozen=True)
class SessionResult:
    exit_code: int
    output: str
    duration_ms: int
    session_id: str | None = None
    error: str | None = None
    error_kind: str | None = None
    """The `errorKind` of the run's `error` log entry (`failures.DriverErrorKind`)."""

    @property
    def has_output(self) -> bool:
        return bool(self.output.strip())

    def to_dict(self) -> dict[str, object]:
        return {
            "exitCode": self.exit_code,
            "output": self.output,
            "hasOutput": self.has_output,
            "durationMs": self.duration_ms,
            "sessionId": self.session_id,
            "error": self.error,
            "errorKind": self.error_kind,
        }


def write_result(path: Path, result: SessionResult, redactor: Redactor) -> None:
    """Write result.json atomically (a reader never sees half a file)."""
    text = json.dumps(redactor.value(result.to_dict()), ensure_ascii=False, indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
