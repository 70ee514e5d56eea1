"""The harness's exit-status table (docs/harness.md, docs/exit-status.md), checked against the
code and run into: each documented status and `error-kind` the harness gives itself,
by the real command, with a stand-in sidecar where the real one is not needed.

A run is cheap: `--sandbox off` and a stand-in CLI that says it listens, or not, as
each ending needs; the step outputs (`GITHUB_OUTPUT`) give `exit-code` and
`error-kind` as a workflow reads them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.outcome import EXIT_STATUS_OF_KIND
from copilot_driver.vocabulary import DriverErrorKind, HarnessErrorKind
from helpers.actions_runner import read_file_commands

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TABLES = (ROOT / "docs" / "harness.md", ROOT / "docs" / "exit-status.md")
LISTENING = "print('CLI server listening on port 1', flush=True)\ntime.sleep(60)\n"


def documented(path: Path) -> dict[str, set[str]]:
    """The harness's exit-status table in `path`: each row's status -> its kinds."""
    text = path.read_text()
    start = text.index("| harness exit status | `error-kind` | meaning |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        status, kinds, _ = (cell.strip() for cell in line.strip("|").split("|", 2))
        rows[status] = set(re.findall(r"`([a-z_]+)`", kinds))
    return rows


@pytest.mark.parametrize("path", TABLES, ids=lambda path: path.name)
def test_the_table_is_the_code(path: Path) -> None:
    rows = documented(path)
    by_status: dict[str, set[str]] = {}
    for kind, status in EXIT_STATUS_OF_KIND.items():
        by_status.setdefault(str(status), set()).add(kind)
    numeric = {status: kinds for status, kinds in rows.items() if status.isdigit()}
    assert numeric == by_status
    assert rows["the driver's"] == {HarnessErrorKind.DRIVER_FAILED}  # else its errorKind
    assert rows["128+N"] == {DriverErrorKind.INTERRUPTED}
    listed = set().union(*rows.values())
    assert set(HarnessErrorKind) <= listed  # every kind of the harness's own is documented


def fake_sidecar(tmp: Path, body: str) -> Path:
    path = tmp / "fake-copilot"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}")
    path.chmod(0o755)
    return path


def run(
    tmp: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str]]:
    """The harness as a workflow step: its exit status and its step outputs."""
    prompt = tmp / "prompt.md"
    prompt.write_text("Say hello.\n")
    outputs = tmp / "github-output"
    outputs.write_text("")
    workspace = tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "GITHUB_WORKSPACE": str(workspace),
        "GH_AW_PROMPT": str(prompt),
        "GH_AW_SESSION_STATE_BASE_DIR": str(tmp / "state"),
        "COPILOT_MODEL": "gpt-5-mini",
        "COPILOT_GITHUB_TOKEN": "github_pat_" + "s" * 30,
        "GITHUB_OUTPUT": str(outputs),
        "CI": "true",
    }
    completed = subprocess.run(
        [sys.executable, "-P", "-m", "copilot_driver.harness", *args],
        env={**base, **(env or {})},
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    said = read_file_commands(outputs.read_text())
    assert said["exit-code"] == str(completed.returncode), completed.stderr
    return completed.returncode, said


def status_of(kind: str) -> int:
    return EXIT_STATUS_OF_KIND[kind]


def test_cli_not_found(tmp_path: Path) -> None:
    code, said = run(tmp_path, "--copilot", str(tmp_path / "no-copilot"), "--sandbox", "off")
    assert (code, said["error-kind"]) == (status_of("cli_not_found"), "cli_not_found")


def test_no_credential(tmp_path: Path) -> None:
    cli = fake_sidecar(tmp_path, LISTENING)
    code, said = run(
        tmp_path, "--copilot", str(cli), "--sandbox", "off", env={"COPILOT_GITHUB_TOKEN": ""}
    )
    assert (code, said["error-kind"]) == (status_of("no_credential"), "no_credential")


def test_unsupported_token(tmp_path: Path) -> None:
    cli = fake_sidecar(tmp_path, LISTENING)
    classic = {"COPILOT_GITHUB_TOKEN": "ghp_" + "c" * 36}
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off", env=classic)
    assert (code, said["error-kind"]) == (status_of("unsupported_token"), "unsupported_token")


def test_config(tmp_path: Path) -> None:
    cli = fake_sidecar(tmp_path, LISTENING)
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off", "--port", "x")
    assert (code, said["error-kind"]) == (status_of("config"), "config")


def test_sandbox_unavailable(tmp_path: Path) -> None:
    """No bubblewrap on PATH (an empty one): the sandbox cannot be set up."""
    cli = fake_sidecar(tmp_path, LISTENING)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    code, said = run(tmp_path, "--copilot", str(cli), env={"PATH": str(empty)})
    kind = "sandbox_unavailable"
    assert (code, said["error-kind"]) == (status_of(kind), kind)


def test_driver_not_started(tmp_path: Path) -> None:
    """An executable file the system cannot run (no `#!`, not a program)."""
    cli = fake_sidecar(tmp_path, LISTENING)
    driver = tmp_path / "not-a-program"
    driver.write_bytes(b"\x00\x01\x02")
    driver.chmod(0o755)
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off", "--", str(driver))
    assert (code, said["error-kind"]) == (status_of("driver_not_started"), "driver_not_started")


def test_sidecar_start_failed(tmp_path: Path) -> None:
    cli = fake_sidecar(tmp_path, "sys.exit('Error: no such model')\n")
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off")
    kind = "sidecar_start_failed"
    assert (code, said["error-kind"]) == (status_of(kind), kind)
    assert code == ExitCode.START_FAILED


def test_sidecar_died(tmp_path: Path) -> None:
    cli = fake_sidecar(
        tmp_path, "print('CLI server listening on port 1', flush=True)\ntime.sleep(1)\n"
    )
    driver = [sys.executable, "-c", "import time; time.sleep(60)"]
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off", "--", *driver)
    assert (code, said["error-kind"]) == (status_of("sidecar_died"), "sidecar_died")
    assert code == ExitCode.SIDECAR_DIED


def test_driver_failed_takes_the_drivers_status(tmp_path: Path) -> None:
    cli = fake_sidecar(tmp_path, LISTENING)
    driver = [sys.executable, "-c", "import sys; sys.exit(7)"]
    code, said = run(tmp_path, "--copilot", str(cli), "--sandbox", "off", "--", *driver)
    assert (code, said["error-kind"]) == (7, "driver_failed")
