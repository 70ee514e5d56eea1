"""A finished run's account: its lines, the files beside the events file, the step
outputs and the answer."""

from __future__ import annotations

import io
import json
from pathlib import Path

from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.console import PREFIX, Console
from copilot_driver.harness.outputs import Ending, FinishedRun, Outputs
from copilot_driver.harness.progress import Progress, StatusLine
from copilot_driver.harness.sandbox import SandboxSettings
from copilot_driver.redaction import Redactor
from copilot_driver.report import SANDBOX_FILE
from copilot_driver.vocabulary import EVENTS_FILE_NAME, SIDECAR_LOG_NAME, HarnessErrorKind

SECRET = "f3c1a9e07b2d4c6e8a0b1c2d3e4f5a6b"


def finished(tmp_path: Path, ending: Ending, *, answer: str = "") -> FinishedRun:
    session = tmp_path / "state" / "session-1"
    session.mkdir(parents=True)
    (session / EVENTS_FILE_NAME).write_text("", encoding="utf-8")
    sidecar_log = tmp_path / "state" / "sidecar-x.log"
    sidecar_log.write_text("stdout: listening\n", encoding="utf-8")
    return FinishedRun(
        ending,
        answer=answer,
        attempts=(),
        progress=Progress(),
        state_base=tmp_path / "state",
        wall_started=0.0,
        sidecar_log=sidecar_log,
        sandbox_settings=SandboxSettings(enabled=False),
        sandbox=None,
    )


def tell(run: FinishedRun, env: dict[str, str], *, in_actions: bool = False) -> tuple[str, str]:
    stderr, stdout = io.StringIO(), io.StringIO()
    console = Console(StatusLine(stderr, enabled=False), in_actions=in_actions)
    console.redactor = Redactor([SECRET])
    Outputs(env, console=console, stdout=stdout).report(run)
    return stderr.getvalue(), stdout.getvalue()


def test_a_success_prints_the_answer_masked_and_writes_the_step_outputs(tmp_path: Path) -> None:
    run = finished(tmp_path, Ending(ExitCode.OK), answer=f"done {SECRET}\n")
    outputs = tmp_path / "github-output"
    stderr, stdout = tell(run, {"GITHUB_OUTPUT": str(outputs)})
    assert (stderr, stdout) == ("", "done ***\n")
    written = outputs.read_text(encoding="utf-8")
    assert "\ndone ***\n" in written
    assert "exit-code<<" in written
    assert f"\n{tmp_path / 'state' / 'session-1' / EVENTS_FILE_NAME}\n" in written


def test_the_sidecar_log_and_the_sandbox_record_go_beside_the_events_file(
    tmp_path: Path,
) -> None:
    run = finished(tmp_path, Ending(ExitCode.OK))
    tell(run, {})
    session = tmp_path / "state" / "session-1"
    assert (session / SIDECAR_LOG_NAME).read_text(encoding="utf-8") == "stdout: listening\n"
    assert run.sidecar_log is not None
    assert not run.sidecar_log.exists()
    record = json.loads((session / SANDBOX_FILE).read_text(encoding="utf-8"))
    assert record["mode"] == "off"


def test_a_failure_is_its_cause_and_fix_and_in_actions_an_annotation(tmp_path: Path) -> None:
    ending = Ending(ExitCode.CONFIG, HarnessErrorKind.CLI_NOT_FOUND, f"no CLI {SECRET}")
    stderr, _ = tell(finished(tmp_path, ending), {}, in_actions=True)
    lines = stderr.splitlines()
    assert lines[0] == f"{PREFIX} error: no CLI ***"
    assert lines[-1].startswith("::error title=No usable Copilot CLI::error: no CLI ***")


def test_lines_the_driver_already_showed_are_not_said_twice(tmp_path: Path) -> None:
    ending = Ending(ExitCode.CONFIG, HarnessErrorKind.CONFIG, "bad variable", shown=True)
    stderr, _ = tell(finished(tmp_path, ending), {})
    assert stderr.splitlines() == [
        f"{PREFIX} how to fix: `python -m copilot_driver --help` lists every variable the "
        "driver reads"
    ]
