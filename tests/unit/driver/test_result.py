"""RunResult, result.json and the documented exit codes (spec 7.2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from copilot_driver.driver.result import write_result
from copilot_driver.redaction import Redactor
from copilot_driver.vocabulary import RunResult

SECRET = "conn-token-8d41f0a2b7c9e3"


def test_to_json_has_the_documented_keys_and_values() -> None:
    result = RunResult(
        exit_code=0, output="The answer.", duration_ms=1234, session_id="sess-1", error=None
    )
    assert result.to_json() == {
        "exitCode": 0,
        "output": "The answer.",
        "hasOutput": True,
        "durationMs": 1234,
        "sessionId": "sess-1",
        "error": None,
        "errorKind": None,
        "policy": None,
    }


def test_to_json_defaults_for_a_failed_run_without_session() -> None:
    result = RunResult(exit_code=1, output="", duration_ms=5, error="connection refused")
    data = result.to_json()
    assert data["sessionId"] is None
    assert data["error"] == "connection refused"
    assert data["hasOutput"] is False
    assert data["exitCode"] == 1


@pytest.mark.parametrize(
    ("output", "expected"),
    [("", False), (" ", False), ("\n\t  \r\n", False), ("x", True), ("  answer \n", True)],
)
def test_has_output_ignores_whitespace(output: str, expected: bool) -> None:
    result = RunResult(exit_code=0, output=output, duration_ms=1)
    assert result.has_output is expected
    assert result.to_json()["hasOutput"] is expected
    assert result.to_json()["output"] == output


def test_write_result_writes_valid_json_with_secrets_masked(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    result = RunResult(
        exit_code=1,
        output=f"echoed {SECRET} by the model",
        duration_ms=42,
        session_id="sess-2",
        error=f"rejected token {SECRET}",
        error_kind="session_error",
    )
    write_result(path, result, Redactor([SECRET]))
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    assert json.loads(text) == {
        "exitCode": 1,
        "output": "echoed *** by the model",
        "hasOutput": True,
        "durationMs": 42,
        "sessionId": "sess-2",
        "error": "rejected token ***",
        "errorKind": "session_error",
        "policy": None,
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"], "no temp file left"


def test_write_result_keeps_non_ascii_text(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    write_result(path, RunResult(0, output="héllo ✓", duration_ms=1), Redactor([]))
    assert json.loads(path.read_text(encoding="utf-8"))["output"] == "héllo ✓"


def test_write_result_replaces_an_existing_file_via_a_sibling_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "result.json"
    path.write_text('{"old": true}\n', encoding="utf-8")
    replaced: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spy_replace(source: Path, target: Path) -> None:
        # At the moment of the swap the target still holds the old content and
        # the new content is complete in a separate file beside it.
        assert json.loads(Path(target).read_text(encoding="utf-8")) == {"old": True}
        assert json.loads(Path(source).read_text(encoding="utf-8"))["exitCode"] == 0
        replaced.append((Path(source), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy_replace)
    write_result(path, RunResult(0, output="new", duration_ms=7, session_id="s"), Redactor([]))

    assert len(replaced) == 1
    source, target = replaced[0]
    assert target == path
    assert source != path
    assert source.parent == path.parent, "the temp file must be on the same filesystem"
    assert json.loads(path.read_text(encoding="utf-8"))["output"] == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_write_result_failure_keeps_the_old_file_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "result.json"
    path.write_text('{"old": true}\n', encoding="utf-8")

    def failing_replace(source: Path, target: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        write_result(path, RunResult(0, output="new", duration_ms=7), Redactor([]))
    assert json.loads(path.read_text(encoding="utf-8")) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"], "temp file left"
