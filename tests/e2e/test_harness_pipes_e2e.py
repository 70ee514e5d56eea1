"""The pipes the harness reads: out of the tools' reach, and bounded.

On the real CLI through the harness, with the scripted model and an allow-all
policy. The oracle is what the harness wrote (`sidecar.log`, its stderr) and
its own peak memory, read from /proc while it runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from copilot_driver.harness.bounded_lines import MAX_ANSWER_BYTES, MAX_LINE_BYTES, MAX_LOG_BYTES
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, ToolCall
from helpers import runtime_record
from helpers.harness_runs import HarnessHarness

pytestmark = pytest.mark.e2e

FORGED = "FORGED-LINE-7f3c"


def forge(marker: str) -> str:
    """Write a line into every pipe a tool can open through /proc of every process in the
    sandbox (its PID namespace holds this run's only); without the sandbox, into the
    stdout and stderr of each process of this run only (never another's on the host, and
    not the run's own channels, which would break the run)."""
    mine = f"grep -qz 'HARNESS_TEST_MARKER={marker}' $d/environ 2>/dev/null"
    return textwrap.dedent(
        f"""
        inside=no; [ "$(cat /proc/1/comm)" = bwrap ] && inside=yes
        for d in /proc/[0-9]*; do
          fds="$d/fd/*"
          [ "$inside" = yes ] || {{ {mine} && fds="$d/fd/1 $d/fd/2"; }} || continue
          for f in $fds; do
            [ -p "$f" ] || continue
            timeout 2 sh -c 'echo {FORGED} > "$1"' _ "$f" 2>/dev/null && echo "wrote $f"
          done
        done
        echo "pid 1: $(cat /proc/1/comm)"
        ls -l /proc/1/fd 2>&1 | tail -n +2
        echo done
        """
    )


@pytest.fixture
def harness(
    tmp_path: Path, scripted_model: ScriptedModelServer, copilot_cli: Path, copilot_cache_home: Path
) -> HarnessHarness:
    run = HarnessHarness(tmp_path, scripted_model, copilot_cli, copilot_cache_home)
    run.env["GH_AW_COPILOT_SDK_SERVER_ARGS"] = json.dumps(["--allow-all-tools"])
    return run


def run_forger(run: HarnessHarness, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    call = ToolCall("bash", {"command": forge(run.marker), "description": "forge"}, call_id="f")
    run.model.script = Script(rules=(Rule("FORGE", (Reply(tool_calls=(call,)), Reply(text="ok"))),))
    (run.tmp / "prompt.md").write_text("FORGE: write into the harness's pipes\n")
    completed = run.run(*args, timeout=180)
    return completed, runtime_record.tool_results(run.model)["f"]


def forged_lines(run: HarnessHarness, completed: subprocess.CompletedProcess[str]) -> list[str]:
    """Lines of what the harness wrote that are the forged line and nothing else."""
    written = [completed.stderr, completed.stdout]
    written += [log.read_text() for log in run.state.rglob("sidecar-*.log")]
    return [
        line
        for text in written
        for line in text.splitlines()
        if line.strip() in (FORGED, f"stdout: {FORGED}", f"stderr: {FORGED}")
    ]


def test_no_tool_reaches_the_pipes_the_harness_reads(harness: HarnessHarness) -> None:
    completed, said = run_forger(harness)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "pid 1: bwrap" in said, said
    assert "done" in said, said
    assert "wrote /proc/" in said, said  # it does write where it can: the tool's own pipes
    assert forged_lines(harness, completed) == []
    # bubblewrap's own process (pid 1 inside) holds nothing of the harness's.
    assert "pipe:" not in said, said


def test_with_the_sandbox_off_a_tool_does_forge_lines(harness: HarnessHarness) -> None:
    """The oracle can fail: outside the sandbox the CLI's pipes are open to its tools."""
    completed, said = run_forger(harness, "--sandbox", "off")
    assert "wrote" in said, said
    assert forged_lines(harness, completed) != []


def peak_memory_kb(process: subprocess.Popen[bytes], timeout: float) -> int:
    """The harness's peak resident memory (VmHWM), polled until it exits."""
    peak = 0
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            peak = max(peak, int(status.split("VmHWM:")[1].split()[0]))
        except (OSError, IndexError):
            break
        time.sleep(0.02)
    process.wait(timeout=60)
    return peak


def start(
    run: HarnessHarness, *args: str, driver: list[str] | None = None
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """The harness started with its stdout and stderr in files."""
    out, err = run.tmp / "harness-stdout.txt", run.tmp / "harness-stderr.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            run.command(*args, driver=driver), env=run.env, stdout=stdout, stderr=stderr
        )
    return process, out, err


MB = 1_000_000
# Without the sandbox a tool reaches the CLI's stderr (as a tool in the sandbox reached
# bubblewrap's before): one 200 MB line without a newline, then 70 MB of shorter lines.
CLI_FLOOD = textwrap.dedent(
    f"""
    for d in /proc/[0-9]*; do
      grep -qz 'HARNESS_TEST_MARKER={{marker}}' $d/environ 2>/dev/null || continue
      case "$(readlink $d/exe)" in */copilot) [ -p $d/fd/2 ] && cli=$d ;; esac
    done
    head -c {200 * MB} /dev/zero | tr '\\0' x > $cli/fd/2
    echo > $cli/fd/2
    yes "$(head -c 16383 /dev/zero | tr '\\0' y)" | head -c {70 * MB} > $cli/fd/2
    echo "flooded $cli"
    """
)


def test_a_tool_that_floods_the_clis_stderr_leaves_the_harness_bounded(
    harness: HarnessHarness,
) -> None:
    run = harness
    command = CLI_FLOOD.replace("{marker}", run.marker)
    call = ToolCall("bash", {"command": command, "description": "flood"}, call_id="f")
    run.model.script = Script(rules=(Rule("FLOOD", (Reply(tool_calls=(call,)), Reply(text="ok"))),))
    (run.tmp / "prompt.md").write_text("FLOOD the CLI's stderr\n")
    process, _, err = start(run, "--sandbox", "off")
    peak_kb = peak_memory_kb(process, timeout=240)
    assert process.returncode == 0, err.read_text()[-3000:]
    assert "flooded /proc/" in runtime_record.tool_results(run.model)["f"]
    assert 0 < peak_kb < 200_000, f"the harness peaked at {peak_kb} kB for 270 MB written"
    (log,) = run.state.rglob("sidecar*.log")
    assert log.stat().st_size < MAX_LOG_BYTES * 1.1
    said = log.read_text()
    cut = f"stderr: {'x' * MAX_LINE_BYTES} [... {200 * MB - MAX_LINE_BYTES} more bytes"
    assert cut in said
    assert len(re.findall(r"stderr: \[\.\.\. \d+ more bytes in \d+ line\(s\) not kept", said)) == 1


# A stand-in driver that floods its log (stderr) and its answer (stdout).
DRIVER_FLOOD = textwrap.dedent(
    """
    import os, sys, time
    line = b"x" * (1 << 20)
    for _ in range(200):  # 200 MiB of log without a newline
        os.write(2, line)
    os.write(2, b"\\n")
    for _ in range(70):  # then 70 MiB of shorter lines: past the total
        os.write(2, (b"y" * 16383 + b"\\n") * 64)
    for _ in range(40):  # a 40 MiB answer
        os.write(1, line)
    open(sys.argv[1], "w").close()
    time.sleep(0.5)  # the harness has read everything while its peak is polled
    """
)


def test_a_driver_that_floods_its_pipes_leaves_the_harness_bounded(
    harness: HarnessHarness,
) -> None:
    run = harness
    script, written = run.tmp / "flood.py", run.tmp / "written"
    script.write_text(DRIVER_FLOOD)
    driver = [sys.executable, str(script), str(written)]
    process, out, err = start(run, "--sandbox", "off", driver=driver)
    peak_kb = peak_memory_kb(process, timeout=120)
    assert written.exists()
    assert 0 < peak_kb < 200_000, f"the harness peaked at {peak_kb} kB for 310 MiB written"
    said = err.read_text()
    assert f"[... {200 * (1 << 20) - MAX_LINE_BYTES} more bytes of this line not kept]" in said
    assert len(said) < MAX_LOG_BYTES * 1.1
    assert len(re.findall(r"\[\.\.\. \d+ more bytes in \d+ line\(s\) not kept", said)) == 1
    answer = out.read_bytes()
    assert len(answer) < MAX_ANSWER_BYTES + 1000
    assert answer.count(b"more bytes of the answer not kept") == 1
