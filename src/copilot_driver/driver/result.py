"""result.json written (spec 7.2); its record is `vocabulary.RunResult`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import RunResult


def write_result(path: Path, result: RunResult, redactor: Redactor) -> None:
    """Write result.json atomically (a reader never sees half a file)."""
    text = json.dumps(redactor.value(result.to_json()), ensure_ascii=False, indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
