"""The outcome of a run: exit codes and the session result (spec 7.2)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from copilot_driver.redaction import Redactor


class ExitCode(IntEnum):
    """The driver's documented exit statuses (the README lists them)."""

    OK = 0
    FAILURE = 1
    """Runtime failure: sidecar unreachable, token rejected, session error, crash."""
    CONFIG = 2
    """Configuration error, reported before anything connects."""
    TOOL_DENIALS = 3
    """The tool-denials guard stopped the session (GH_AW_MAX_TOOL_DENIALS)."""
    SEND_TIMEOUT = 124
    """No completion within COPILOT_SDK_SEND_TIMEOUT_MS (the `timeout(1)` convention)."""

    @staticmethod
    def for_signal(signum: int) -> int:
        """128 + signal number, the shell's convention for a run ended by a signal."""
        return 128 + signum


@dataclass(frozen=True)
class SessionResult:
    exit_code: int
    output: str
    duration_ms: int
    session_id: str | None = None
    error: str | None = None

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
