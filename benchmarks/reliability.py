"""`make reliability`: the fault suite's figures and a soak run, for docs/reliability.md.

Two parts, both on the real runtime:

- the fault-injection suite (`tests/faults/`), run in a subprocess with
  `COPILOT_DRIVER_FAULTS_REPORT` set: cases run, faults survived, bytes of
  artefacts scanned for secrets, orphan checks made;
- a soak: `--runs` (200) consecutive driver runs against ONE sidecar and the
  scripted model, cycling through a plain turn, an allowed tool, and a
  denied tool, reporting failures (must be 0), the driver's peak RSS per run
  (`wait4` rusage; a child's peak starts from its parent's at the fork, so
  it is only meaningful from a process smaller than the driver, like this
  script), and the file descriptors the sidecar holds before and after (a
  leak there would grow with every session).

Prints docs/reliability.md as markdown and writes every figure
to `--json` (reliability-results.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
    driver_environment,
    start_test_sidecar,
)

ROOT = Path(__file__).resolve().parents[1]
DRIVER = [sys.executable, "-m", "copilot_driver"]
RUN_TIMEOUT_S = 60.0
SETTLE_S = 1.0
"""Time the sidecar gets to close a finished session's files before its fds are counted."""


def _shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": command})


SOAK_SCRIPT = Script(
    rules=(
        Rule("ALLOWED", (Reply(tool_calls=(_shell("echo soak"),)), Reply(text="ran echo"))),
        Rule("DENIED", (Reply(tool_calls=(_shell("rm -rf soak"),)), Reply(text="was denied"))),
    ),
    default=Reply(text="Hello from the scripted model."),
)
SOAK_PROMPTS = ("say hello", "please run ALLOWED", "please run DENIED")
SOAK_ALLOWLIST = json.dumps(["--allow-tool", "shell(echo)"])


@dataclass
class SoakRun:
    exit_code: int
    wall_ms: float
    rss_mb: float
    stderr_tail: str


@dataclass
class SoakReport:
    runs: list[SoakRun] = field(default_factory=list)
    sidecar_fds: list[int] = field(default_factory=list)
    """Open fds of the sidecar: before the first run, after every run, and once
    more after a pause. The first session opens the sidecar's session store (a
    database, its journal files and a socket): the growth that matters is from
    after the first run to the end."""

    @property
    def failures(self) -> list[SoakRun]:
        return [run for run in self.runs if run.exit_code != 0]

    def as_dict(self) -> dict[str, Any]:
        rss = [run.rss_mb for run in self.runs]
        wall = [run.wall_ms for run in self.runs]
        return {
            "runs": len(self.runs),
            "failures": len(self.failures),
            "failureTails": [run.stderr_tail for run in self.failures[:5]],
            "peakRssMb": {"median": statistics.median(rss), "max": max(rss), "min": min(rss)},
            "wallMs": {"median": statistics.median(wall), "max": max(wall)},
            "sidecarFds": {
                "before": self.sidecar_fds[0],
                "afterFirstRun": self.sidecar_fds[1],
                "after": self.sidecar_fds[-1],
                "max": max(self.sidecar_fds),
                "leftOpen": self.sidecar_fds[-1] - self.sidecar_fds[1],
            },
        }


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _run_driver(env: dict[str, str]) -> SoakRun:
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(DRIVER, env=env, stdout=out, stderr=err)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:  # wait4 for the rusage, polled so a hung run is bounded
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.005)
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode(errors="replace")[-1500:]
    return SoakRun(
        exit_code=process.returncode,
        wall_ms=(time.perf_counter() - started) * 1000,
        rss_mb=usage.ru_maxrss / 1024,
        stderr_tail=tail,
    )


def soak(
    runs: int, work: Path, *, progress: Callable[[int, SoakRun], None] | None = None
) -> SoakReport:
    """`runs` consecutive driver runs against one sidecar; see the module docstring."""
    report = SoakReport()
    with ScriptedModelServer(SOAK_SCRIPT) as model:
        sidecar = start_test_sidecar(work, model_base_url=model.base_url)
        try:
            pid = sidecar.process.process.pid
            report.sidecar_fds.append(_open_fds(pid))
            for number in range(runs):
                prompt_file = work / "prompt.md"
                prompt_file.write_text(SOAK_PROMPTS[number % len(SOAK_PROMPTS)])
                env = driver_environment(
                    prompt_file=prompt_file,
                    sdk_uri=sidecar.uri,
                    token=sidecar.token,
                    model_base_url=model.base_url,
                    state_dir=work / "state",
                    workspace=work,
                    GH_AW_COPILOT_SDK_SERVER_ARGS=SOAK_ALLOWLIST,
                    GH_AW_MAX_TOOL_DENIALS="10",
                )
                run = _run_driver(env)
                report.runs.append(run)
                report.sidecar_fds.append(_open_fds(pid))
                if progress:
                    progress(number, run)
            time.sleep(SETTLE_S)
            report.sidecar_fds.append(_open_fds(pid))
        finally:
            sidecar.stop()
    return report


def fault_suite() -> dict[str, Any]:
    """Run tests/faults in a subprocess; its figures, its exit status and its duration."""
    with tempfile.TemporaryDirectory(prefix="faults-report-") as folder:
        target = Path(folder) / "faults.json"
        started = time.monotonic()
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", "tests/faults", "-q", "-p", "no:cacheprovider"],
            cwd=ROOT,
            env={**os.environ, "COPILOT_DRIVER_FAULTS_REPORT": str(target)},
            check=False,
        )
        figures: dict[str, Any] = json.loads(target.read_text()) if target.exists() else {}
    figures["exitStatus"] = completed.returncode
    figures["seconds"] = round(time.monotonic() - started)
    return figures


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Latest run (`make reliability`, {results['machine']['cpus']} CPUs, "
        f"Python {results['machine']['python']}):",
        "",
        "| figure | measured |",
        "|---|---|",
    ]
    suite = results.get("suite")
    if suite:
        lines += [
            f"| fault cases run (`tests/faults/`) | {suite.get('cases', 0)} |",
            f"| faults survived (bounded end, documented exit, one error line, "
            f"events kept, clean) | {suite.get('survived', 0)} |",
            f"| bytes of artefacts scanned for secrets | {suite.get('bytesScanned', 0):,} "
            f"({suite.get('filesScanned', 0):,} files) |",
            f"| orphan-process checks | {suite.get('orphanChecks', 0)} (none found) |",
            f"| suite wall time | {suite['seconds']} s |",
        ]
    soaked = results.get("soak")
    if soaked:
        rss, fds = soaked["peakRssMb"], soaked["sidecarFds"]
        lines += [
            f"| runs soaked against one sidecar | {soaked['runs']} |",
            f"| soak failures | {soaked['failures']} |",
            f"| driver peak RSS per run | {rss['median']:.0f} MB median, {rss['max']:.0f} MB max |",
            f"| driver wall time per run | {soaked['wallMs']['median']:.0f} ms median, "
            f"{soaked['wallMs']['max']:.0f} ms max |",
            f"| sidecar open fds: before / after run 1 / after the last | {fds['before']} / "
            f"{fds['afterFirstRun']} / {fds['after']} (max {fds['max']}) |",
            f"| fds left open in the sidecar by runs 2..{soaked['runs']} | {fds['leftOpen']} |",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=200, help="soak runs (0: no soak)")
    parser.add_argument("--no-suite", action="store_true", help="skip the fault suite")
    parser.add_argument("--json", type=Path, default=Path("reliability-results.json"))
    args = parser.parse_args(argv)

    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        }
    }
    if not args.no_suite:
        results["suite"] = fault_suite()
    if args.runs > 0:

        def progress(number: int, run: SoakRun) -> None:
            if run.exit_code != 0 or (number + 1) % 50 == 0:
                print(f"soak: run {number + 1}/{args.runs} exit {run.exit_code}", file=sys.stderr)

        with tempfile.TemporaryDirectory(prefix="copilot-soak-") as folder:
            results["soak"] = soak(args.runs, Path(folder), progress=progress).as_dict()
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    suite_ok = results.get("suite", {}).get("exitStatus", 0) == 0
    soak_ok = results.get("soak", {}).get("failures", 0) == 0
    return 0 if suite_ok and soak_ok else 1


if __name__ == "__main__":
    sys.exit(main())
