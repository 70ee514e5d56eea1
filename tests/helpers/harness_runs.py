"""Runs of `python -m copilot_driver.harness` with a hermetic environment, for e2e tests.

Every harness started here carries a unique marker variable, inherited by the
sidecar, the driver and anything they start, so "no orphans" is checked by
scanning /proc/*/environ for it after the run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
    harness_environment,
)
from helpers import runtime_record

REPOSITORY = Path(__file__).resolve().parents[2]

CANARIES = {
    "GITHUB_TOKEN": "ghs_canaryHarnessGITHUB000000000000000",
    "GH_TOKEN": "gho_canaryHarnessGH0000000000000000000",
    "COPILOT_GITHUB_TOKEN": "github_pat_canaryHarnessCOPILOT000000",
}


# A stand-in driver that records what it was given: its environment, its argv,
# and (from the process table) the environment and argv of the Copilot CLI (its
# sibling, or, in the sandbox, that sibling's descendant) and of the sibling itself.
RECORDING_DRIVER = textwrap.dedent(
    """
    import json, os, sys
    def children(pid):
        found = []
        for task in os.listdir(f"/proc/{pid}/task"):
            found += open(f"/proc/{pid}/task/{task}/children").read().split()
        return [int(child) for child in found]
    def environ(pid):
        raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        return dict(item.decode().split("=", 1) for item in raw if b"=" in item)
    def argv(pid):
        return open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\\0")
    parent = os.getppid()
    sibling = [pid for pid in children(parent) if pid != os.getpid()]
    sidecar = list(sibling)
    while True:  # down to the CLI itself: the last process whose argv says --headless
        below = [pid for pid in children(sidecar[0]) if "--headless" in argv(pid)]
        if not below:
            break
        sidecar = below
    json.dump({"env": dict(os.environ), "argv": argv(os.getpid()),
               "sidecar_env": environ(sidecar[0]), "sidecar_argv": argv(sidecar[0]),
               "launcher_env": environ(sibling[0]), "launcher_argv": argv(sibling[0])},
              open(sys.argv[1], "w"))
    """
)


class HarnessHarness:
    """Runs `python -m copilot_driver.harness` with a hermetic environment."""

    def __init__(self, tmp: Path, model: ScriptedModelServer, cli: Path, cache: Path) -> None:
        self.tmp = tmp
        self.model = model
        self.cli = cli
        self.marker = uuid.uuid4().hex
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        (self.workspace / "victim.txt").write_text("still here\n")
        self.state = tmp / "state"
        self.stderr = ""
        """The last `run_calls` run's stderr."""
        prompt = tmp / "prompt.md"
        prompt.write_text("CLEANUP please\n")
        self.env = harness_environment(
            tmp / "home",
            model_base_url=model.base_url,
            prompt_file=prompt,
            workspace=self.workspace,
            state_dir=self.state,
            cache_home=cache,
            HARNESS_TEST_MARKER=self.marker,
            GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(["--allow-tool", "shell(git:*)"]),
            **CANARIES,
        )

    def command(self, *args: str, driver: list[str] | None = None) -> list[str]:
        # The marker reaches the sandboxed sidecar only by name, as any variable would.
        argv = [sys.executable, "-m", "copilot_driver.harness", "--copilot", str(self.cli)]
        argv += ["--pass-env", "HARNESS_TEST_MARKER", *args]
        return argv + (["--", *driver] if driver else [])

    def run(
        self,
        *args: str,
        driver: list[str] | None = None,
        timeout: float = 120,
        extra_env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        **env: str,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args, driver=driver),
            env={**self.env, **(extra_env or {}), **env},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, *args: str, driver: list[str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(*args, driver=driver),
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def recording_driver(self, name: str) -> tuple[list[str], Path]:
        script = self.tmp / "record.py"
        script.write_text(RECORDING_DRIVER)
        record = self.tmp / f"{name}.json"
        return [sys.executable, str(script), str(record)], record

    def processes(self) -> list[tuple[int, str]]:
        """Live processes carrying this test's marker (zombies excluded)."""
        found = []
        needle = f"HARNESS_TEST_MARKER={self.marker}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if needle not in (entry / "environ").read_bytes():
                    continue
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if state != "Z":
                found.append((int(entry.name), cmdline))
        return found

    def assert_no_orphans(self, within: float = 10.0) -> None:
        deadline = time.monotonic() + within
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert self.processes() == []

    def everything_written(self, *outputs: str) -> str:
        files = [p.read_text(errors="replace") for p in self.state.rglob("*") if p.is_file()]
        return "\n".join([*outputs, *files])

    def run_calls(
        self, commands: dict[str, str], *args: str, cwd: Path | None = None, **env: str
    ) -> dict[str, str]:
        """One run whose model asks for each command as a bash call (all in one reply),
        then answers "all done": what the model was told of each, by name. The run's
        stderr is kept in `self.stderr`."""
        calls = tuple(
            ToolCall("bash", {"command": command, "description": call_id}, call_id=call_id)
            for call_id, command in commands.items()
        )
        self.model.script = Script(
            rules=(Rule("RUN CALLS", (Reply(tool_calls=calls), Reply(text="all done"))),)
        )
        (self.tmp / "prompt.md").write_text("RUN CALLS: run the commands\n")
        completed = self.run(*args, timeout=180, cwd=cwd, extra_env=env)
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert completed.stdout == "all done\n"
        self.stderr = completed.stderr
        results = runtime_record.tool_results(self.model)
        assert set(results) == set(commands), "a command did not run"
        return results


@contextmanager
def killing_leftovers(runner: HarnessHarness) -> Iterator[HarnessHarness]:
    """`runner`; afterwards every process carrying its marker is killed, so a failed
    test never leaves a harness, sidecar or driver behind."""
    try:
        yield runner
    finally:
        for pid, _ in runner.processes():
            os.kill(pid, signal.SIGKILL)


@contextmanager
def host_folder() -> Iterator[Path]:
    """A folder of the host outside the workspace and outside the host's /tmp (which the
    sandbox makes private): anything that lands here landed on the host."""
    folder = REPOSITORY / ".cache" / "sandbox-victims" / uuid.uuid4().hex
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
