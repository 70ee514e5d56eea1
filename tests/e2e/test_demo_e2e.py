"""`make demo`'s module run for real, and every command it prints for the user pasted
into a fresh `bash -c` in the clone, with a PATH that does not hold `.venv/bin`.

The demo prints `make demo` forms when make started it (MAKELEVEL), else the
interpreter's own; both are pasted here. The make forms run the clone's real
Makefile; the virtualenv is the one `make setup` made, which holds the demo's
`testing` extra, so its install step is taken as done (`make -o
.venv/.demo-installed`, through a `make` on the shell's PATH that adds only that):
no test reinstalls into the shared virtualenv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Demo:
    done: subprocess.CompletedProcess[str]
    output: Path

    @property
    def commands(self) -> list[str]:
        """The indented command lines of the demo's `--- try next ---` section."""
        section = self.done.stdout.split("--- try next ---\n", 1)[1]
        return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def _run_demo(output: Path, *, made: bool, **settings: str) -> Demo:
    """`python -m copilot_driver.testing.demo` from the clone, as `make demo` runs it
    (`made`: MAKELEVEL set) or as a user runs the module."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEMO_", "MAKE"))}
    env.update(DEMO_OUTPUT=str(output), **settings)
    if made:
        env["MAKELEVEL"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "copilot_driver.testing.demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Demo(done, output)


@pytest.fixture(scope="module")
def shell_bin(tmp_path_factory: pytest.TempPathFactory, copilot_cli: Path) -> Path:
    """What a user's shell has on PATH besides the system's: `copilot` (the README's
    `npm install -g`), and a `make` that takes the demo's install as done."""
    folder = tmp_path_factory.mktemp("shell-bin")
    (folder / "copilot").symlink_to(copilot_cli)
    make = folder / "make"
    make.write_text(f'#!/bin/sh\nexec {shutil.which("make")} -o .venv/.demo-installed "$@"\n')
    make.chmod(0o755)
    return folder


def _pasted(command: str, shell_bin: Path, output: Path) -> subprocess.CompletedProcess[str]:
    """`command` as pasted into a fresh shell in the clone: bash -c, the user's basics
    (PATH without `.venv/bin`, HOME, the CLI's unpacked package), nothing of the test's."""
    env = {
        "PATH": f"{shell_bin}:{SYSTEM_PATH}",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "DEMO_OUTPUT": str(output),
    }
    if "XDG_CACHE_HOME" in os.environ:
        env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
    assert ".venv/bin" not in env["PATH"]
    return subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return _run_demo(tmp_path_factory.mktemp("demo"), made=False)


def test_the_demo_denies_the_rm_and_suggests_its_rule(first_run: Demo) -> None:
    out = first_run.done.stdout
    assert "notes.txt still there: True" in out
    assert "the rule that would allow it:" in out
    assert 'DEMO_ALLOW=\'["shell(ls:*)", "read", "shell(rm notes.txt)"]\'' in out
    assert "copilot-driver-report" in out


def test_each_printed_command_works_pasted_into_a_fresh_shell(
    first_run: Demo, shell_bin: Path, tmp_path: Path
) -> None:
    commands = first_run.commands
    assert len(commands) == 3, commands
    report, allow, token = commands
    assert report.startswith(".venv/bin/copilot-driver-report ")
    assert allow.endswith(" .venv/bin/python -m copilot_driver.testing.demo")
    assert token == "DEMO_AUTH=token .venv/bin/python -m copilot_driver.testing.demo"

    shown = _pasted(report, shell_bin, tmp_path / "unused")
    assert shown.returncode == 0, shown.stderr
    assert "rm notes.txt" in shown.stdout
    assert "```mermaid" in shown.stdout

    allowed = _pasted(allow, shell_bin, tmp_path / "allowed")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "approved shell(rm notes.txt)" in allowed.stdout
    assert "notes.txt still there: False" in allowed.stdout
    assert not (tmp_path / "allowed" / "workspace" / "notes.txt").exists()

    on_token = _pasted(token, shell_bin, tmp_path / "token")
    assert on_token.returncode == 0, on_token.stdout + on_token.stderr
    assert "--- what the Copilot CLI sent to GitHub" in on_token.stdout


def test_the_make_forms_work_pasted_into_a_fresh_shell(
    tmp_path_factory: pytest.TempPathFactory, shell_bin: Path
) -> None:
    demo = _run_demo(tmp_path_factory.mktemp("made"), made=True)
    report, allow, token = demo.commands
    assert report.startswith(".venv/bin/copilot-driver-report ")
    assert allow == 'DEMO_ALLOW=\'["shell(ls:*)", "read", "shell(rm notes.txt)"]\' make demo'
    assert token == "DEMO_AUTH=token make demo"
    out = tmp_path_factory.mktemp("made-out")

    allowed = _pasted(allow, shell_bin, out / "allowed")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    # The Makefile's recipe ran: the cache step, then the demo with the rule.
    assert "[copilot-driver-sdk-loading] github-copilot-sdk " in allowed.stdout
    assert "notes.txt still there: False" in allowed.stdout
    on_token = _pasted(token, shell_bin, out / "token")
    assert on_token.returncode == 0, on_token.stdout + on_token.stderr
    assert "POST   https://api.individual.githubcopilot.com/responses -> 200" in on_token.stdout


def test_a_run_without_the_sandbox_says_so_and_carries_it_into_the_suggestions(
    tmp_path: Path,
) -> None:
    demo = _run_demo(tmp_path, made=True, DEMO_SANDBOX="off")
    assert "sandbox: off" in demo.done.stdout
    assert "[copilot-driver-harness] warning: the OS sandbox is off (--sandbox off)" in (
        demo.done.stderr
    )
    assert "Sandbox: off" in demo.done.stdout  # the report's
    _, allow, token = demo.commands
    assert allow.endswith(" DEMO_SANDBOX=off make demo")
    assert token == "DEMO_SANDBOX=off DEMO_AUTH=token make demo"


@pytest.fixture
def bad_settings(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEMO_")}
    env["DEMO_OUTPUT"] = str(tmp_path / "never")
    yield env
    assert not (tmp_path / "never").exists(), "nothing starts on a setting it cannot read"


def test_the_old_space_separated_allow_form_is_one_error_naming_the_json_form(
    bad_settings: dict[str, str],
) -> None:
    bad_settings["DEMO_ALLOW"] = "shell(ls:*) shell(rm:*) read"
    done = subprocess.run(
        [sys.executable, "-m", "copilot_driver.testing.demo"],
        env=bad_settings,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "[copilot-driver-demo] error: DEMO_ALLOW='shell(ls:*) shell(rm:*) read' is not a "
        'JSON array of rules; give one, e.g. DEMO_ALLOW=\'["shell(ls:*)", "shell(rm '
        'notes.txt)", "read"]\' (a rule may hold spaces)'
    ]


def test_every_unreadable_setting_is_named_at_once(bad_settings: dict[str, str]) -> None:
    bad_settings.update(DEMO_ALLOW="[]", DEMO_AUTH="tokens", DEMO_SANDBOX="maybe")
    done = subprocess.run(
        [sys.executable, "-m", "copilot_driver.testing.demo"],
        env=bad_settings,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert [line.split(" is not ", 1)[0] for line in lines] == [
        "[copilot-driver-demo] error: DEMO_ALLOW='[]'",
        "[copilot-driver-demo] error: DEMO_AUTH='tokens'",
        "[copilot-driver-demo] error: DEMO_SANDBOX='maybe'",
    ]
    assert "give `provider`" in lines[1]
    assert "`off` (no bubblewrap needed)" in lines[2]
