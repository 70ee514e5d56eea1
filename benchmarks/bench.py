"""`make bench`: how fast the driver is, measured on the real runtime.

One real Copilot CLI sidecar and the scripted model serve every run. For
each driver command (this project's, plus any `--driver "CMD"`), runs are
interleaved (driver A, driver B, A, B, ...) so ratios hold on a noisy
machine, after `--warmup` unmeasured rounds. Reported as medians with the
spread (min-max):

- whole-process wall time of a plain turn and of a one-tool turn;
- after the SDK import: wall time minus the median cost of starting Python
  and importing the SDK (`python -c "import copilot"`), this project only;
- the lifecycle phases, from the driver's own log timestamps;
- peak RSS of the driver process (`wait4` rusage, what `/usr/bin/time -v` reports);
- the exit time of a configuration error;
- the events sink: events per second for 100k synthetic events, and the
  memory it holds meanwhile;
- permission decisions per second (a three-segment shell command, a write,
  an MCP tool); the target is checked on the slowest kind;
- the decision time of long shell commands (4, 16 and 64 KiB, in shapes that
  stress each part of the reader: many words, one quoted word, brace-laden
  revisions, a long chain, continuations, an unclosed-brace run, a long sed
  script, many quoted or escaped words, many tiny commands, an unterminated
  quote): the slowest 64 KiB decision, and how much slower 64 KiB is than
  4 KiB (16 when linear; the target allows 32; lines over the reader's limits
  are refused early, which only lowers the ratio).
- the tool loop's `edit_file` on 10k and 80k lines, every line a match:
  how much slower 80k is (x8 when linear; the target allows x10).

- the harness's whole run (a plain turn through `copilot-driver-harness`:
  the sidecar started, the driver run, the sidecar stopped) beside the sum of
  its parts measured in the same rounds: a sidecar's start-up alone (spawn to
  "listening") plus the driver's plain turn on a running sidecar; and beside
  the same harness run with the start-up not overlapped (this driver given
  after `--`, so it starts once the sidecar listens); and beside the same run
  with `--sandbox off`: the OS sandbox's cost as a ratio (target <= 1.10).
- the sidecar's peak memory (the CLI process's VmHWM after a plain turn) in
  the sandbox and out of it, interleaved: unchanged within 10%.

- the compatibility check: one `status.get` round trip and the version
  decision on a connected SDK client, beside session creation
  (`client.started` to `session.created` in this driver's plain turns); the
  driver asks for the version beside `session.create`, so the check adds no
  time while it is the shorter of the two.

Prints a markdown table; `--json FILE` also writes every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from copilot_driver.adapters.tool_loop.sandbox import resolve_root
from copilot_driver.adapters.tool_loop.tools import Toolbox
from copilot_driver.compatibility import untested_versions
from copilot_driver.driver.config import load_config
from copilot_driver.driver.connection import create_client
from copilot_driver.driver.sink import EventsSink
from copilot_driver.harness.environment import sidecar_environment as split_sidecar_environment
from copilot_driver.harness.sandbox import Sandbox, SandboxSettings, sandbox_cache_home
from copilot_driver.harness.sidecar import Sidecar, locate_copilot_cli
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Policy
from copilot_driver.redaction import Redactor
from copilot_driver.testing import (
    Reply,
    Rule,
    Script,
    ScriptedModelServer,
    ToolCall,
    driver_environment,
    harness_environment,
    sidecar_environment,
    start_test_sidecar,
)
from copilot_driver.vocabulary import LogEvent

OURS = "copilot-driver"
PHASES = (
    LogEvent.CONNECTION_START,
    LogEvent.CLIENT_STARTED,
    LogEvent.SESSION_CREATED,
    LogEvent.PROMPT_DISPATCHED,
)
SCRIPT = Script(
    rules=(
        Rule(
            "RUNTOOL",
            (
                Reply(
                    tool_calls=(ToolCall("bash", {"command": "echo bench", "description": "echo"}),)
                ),
                Reply(text="done"),
            ),
        ),
    ),
    default=Reply(text="Hello from the scripted model."),
)
TARGETS = {
    "plain_wall_ms": ("<=", 1000.0),
    "after_import_ms": ("<=", 195.0),
    "config_error_ms": ("<=", 100.0),
    "peak_rss_mb": ("<=", 80.0),
    "sink_events_per_s": (">=", 50_000.0),
    "decision_us": ("<", 50.0),
    "long_command_ms": ("<=", 10.0),
    "oversized_command_ms": ("<=", 1.0),
    "long_command_growth": ("<=", 32.0),
    "edit_file_growth": ("<=", 10.0),
    "harness_whole_to_sequential": ("<", 1.0),
    "harness_sandboxed_to_off": ("<=", 1.10),
    "sidecar_memory_sandboxed_to_off": ("<=", 1.10),
    "version_check_to_session_create": ("<", 1.0),
}
LONG_COMMAND_KIB = (4, 16, 64)
LONG_COMMAND_SHAPES = {
    "words": ("git log ", "x "),
    "quoted": ("git commit -m '", "a b "),
    "revisions": ("git log ", "HEAD@{1} "),
    "chain": ("git status", " && git status"),
    "continuations": ("git log", " \\\n  -5"),
    "unclosed-braces": ("git log ", "{a"),
    "sed-script": ("sed -n '", "s/a/b/g;"),
    "quoted-words": ("git log ", "'a' "),
    "escaped-words": ("git log ", "\\a "),
    "tiny-commands": ("ls", ";ls"),
    "unterminated-quote": ('git log "x', "a"),
    "single-quoted": ("git commit -m '", "a"),
    "double-quoted": ('git commit -m "', "Done! "),
    "ranges": ("git log ", "HEAD@{1}..HEAD "),
    "nested-braces": ("git log x", "{"),
    "sed-open-braces": ("sed -e '", "{"),
    "sed-close-braces": ("sed -n '", "}"),
    "awk-program": ("awk '", "$3 > 100 {print $1} "),
    "sed-branches": ("sed -n '", "b;"),
    "sed-negations": ("sed -n '1", "!"),
    "sed-appends": ("sed '", "a\n"),
    "awk-fields": ("awk '{print ", "$"),
    "awk-comparisons": ("awk '", "$1>"),
    "awk-parentheses": ("awk 'BEGIN{x=", "(a"),
}
"""Shape -> (head, piece repeated up to the size); a quote the head opens is closed at the end,
then a file operand follows. The hunt's `{{{` and long quotes are here: lines the policy once
took 40-90 ms to decide at 64 KiB."""
OVERSIZED_COMMAND_KIB = 1024
"""A line over the 64 KiB limit: refused before it is read, so in microseconds."""


def _run(argv: Sequence[str], env: dict[str, str], timeout: float = 120) -> dict[str, Any]:
    """Run once: wall time, peak RSS (from wait4), exit code, stderr."""
    spawned_at = time.time()
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out: dict[str, str] = {}

    def drain(name: str, stream: Any) -> None:
        out[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=(name, stream))
        for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
    ]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    for reader in readers:
        reader.join(timeout)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_ms": wall * 1000,
        "rss_mb": usage.ru_maxrss / 1024,
        "exit_code": process.returncode,
        "stderr": out.get("stderr", ""),
        "spawned_at": spawned_at,
    }


def _phases(stderr: str, spawned_at: float) -> dict[str, float]:
    """Milliseconds from the process's spawn to each lifecycle entry and to the last one."""
    stamps: dict[str, datetime] = {}
    last: datetime | None = None
    for line in stderr.splitlines():
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
            stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
        except (ValueError, KeyError):
            continue
        stamps.setdefault(entry.get("event", ""), stamp)
        last = stamp
    if last is None:
        return {}
    phases: dict[str, float] = {
        name: (stamps[name].timestamp() - spawned_at) * 1000 for name in PHASES if name in stamps
    }
    phases["last entry"] = (last.timestamp() - spawned_at) * 1000
    return phases


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def bench_sink(events: int = 100_000) -> dict[str, float]:
    """The events sink on a synthetic stream: throughput and memory held."""

    class Event:
        def __init__(self, index: int) -> None:
            self.type = "tool.execution_partial_result"
            self.ephemeral = False
            self._index = index

        def to_dict(self) -> dict[str, Any]:
            return {
                "type": self.type,
                "id": f"evt-{self._index}",
                "timestamp": "2026-11-21T00:00:00.000Z",
                "data": {"toolCallId": "call-1", "partialOutput": f"line {self._index}\n"},
            }

    def feed(traced: bool) -> tuple[float, int, float]:
        with tempfile.TemporaryDirectory() as folder:
            sink = EventsSink(Path(folder), Redactor(["not-in-the-stream-secret"]))
            sink.attach("bench-session")
            if traced:
                tracemalloc.start()
            started = time.perf_counter()
            for index in range(events):
                sink.handle(Event(index))  # type: ignore[arg-type]
            sink.close(60)
            elapsed = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1] if traced else 0
            tracemalloc.stop()
            return elapsed, sink.lines_written, peak

    elapsed, written, _ = feed(traced=False)  # throughput, untraced
    _, _, peak = feed(traced=True)  # memory held (tracing slows it down)
    return {
        "events": events,
        "written": written,
        "events_per_s": events / elapsed,
        "peak_traced_mb": peak / 1024 / 1024,
    }


def bench_policy(rounds: int = 20_000) -> dict[str, float]:
    config = PermissionConfig(allowed_tools=("shell(git:*)", "shell(ls)", "write", "github"))
    policy = Policy(config)
    requests: list[dict[str, Any]] = [
        {"kind": "shell", "fullCommandText": "git status && ls -la | git log --oneline",
         "commands": [{"identifier": "git"}, {"identifier": "ls"}, {"identifier": "git"}]},
        {"kind": "write", "fileName": "src/app.py"},
        {"kind": "mcp", "serverName": "github", "toolName": "list_issues"},
    ]  # fmt: skip
    per_kind: dict[str, float] = {}
    for request in requests:
        policy.decide(request)  # warm caches
        started = time.perf_counter()
        for _ in range(rounds):
            policy.decide(request)
        per_kind[str(request["kind"])] = (time.perf_counter() - started) / rounds * 1e6
    worst = max(per_kind.values())
    return {
        "decisions_per_s": 1e6 * len(per_kind) / sum(per_kind.values()),
        "decision_us": worst,
        **{f"{kind}_us": value for kind, value in per_kind.items()},
    }


def long_command(shape: str, kib: int) -> str:
    head, piece = LONG_COMMAND_SHAPES[shape]
    end = head[-1] + " F" if head[-1] in "'\"" else ""
    return head + piece * ((kib * 1024 - len(head) - len(end)) // len(piece)) + end


def bench_long_commands(rounds: int = 5) -> dict[str, Any]:
    """Decision time per shape and size (the slowest of `rounds`: every decision counts),
    the 64 vs 4 KiB growth, and the time to refuse a line over the limit."""
    rules = ("shell(git:*)", "shell(sed:*)", "shell(awk:*)")
    policy = Policy(PermissionConfig(allowed_tools=rules))

    def slowest(text: str) -> float:
        request = {"kind": "shell", "fullCommandText": text}
        policy.decide(request)  # warm caches
        worst = 0.0
        for _ in range(rounds):
            started = time.perf_counter()
            policy.decide(request)
            worst = max(worst, time.perf_counter() - started)
        return worst * 1000

    times = {
        shape: {kib: slowest(long_command(shape, kib)) for kib in LONG_COMMAND_KIB}
        for shape in LONG_COMMAND_SHAPES
    }
    small, large = LONG_COMMAND_KIB[0], LONG_COMMAND_KIB[-1]
    return {
        "ms": times,
        "slowest_64kib_ms": max(t[large] for t in times.values()),
        "growth": max(t[large] / t[small] for t in times.values()),
        "oversized_ms": max(
            slowest(long_command(shape, OVERSIZED_COMMAND_KIB)) for shape in LONG_COMMAND_SHAPES
        ),
    }


def bench_edit_file_growth(
    rounds: int = 3, sizes: tuple[int, int] = (10_000, 80_000)
) -> dict[str, Any]:
    """The tool loop's `edit_file` on files of `sizes` lines, every line a match (refused
    as ambiguous, naming the lines): the fastest of `rounds` each, and the large/small
    ratio (x8 when linear; it was quadratic, x70 and more)."""
    times: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="copilot-bench-edit-") as folder:
        box = Toolbox(resolve_root(Path(folder)), max_result_chars=20_000)
        arguments = json.dumps({"path": "rows.py", "old_str": "x = ", "new_str": "y = "})
        for lines in sizes:
            (Path(folder) / "rows.py").write_text("".join(f"x = {n}\n" for n in range(lines)))
            best = float("inf")
            for _ in range(rounds):
                started = time.perf_counter()
                box.execute("edit_file", arguments)
                best = min(best, time.perf_counter() - started)
            times[lines] = best * 1000
    small, large = sizes
    return {"ms": times, "growth": times[large] / times[small]}


def bench_harness(work: Path, model: ScriptedModelServer, runs: int) -> dict[str, Any]:
    """Whole harness runs (overlapped start-up, and the same run with this driver given
    after `--`, which starts it only once the sidecar listens) and lone sidecar
    start-ups, interleaved; one warm-up round."""
    binary = locate_copilot_cli()
    prompt = work / "harness-prompt.md"
    prompt.write_text("say hello")
    sequential_driver = ["--", sys.executable, "-m", "copilot_driver"]
    variants: tuple[tuple[str, list[str]], ...] = (
        ("whole_ms", []),
        ("sequential_ms", sequential_driver),
        ("off_ms", ["--sandbox", "off"]),
    )
    samples: dict[str, list[float]] = {key: [] for key, _ in variants}
    samples["sidecar_start_ms"] = []
    for round_number in range(runs + 1):
        for key, extra in variants:
            home = work / f"harness-{key}-{round_number}"
            env = harness_environment(
                home, model_base_url=model.base_url, prompt_file=prompt, workspace=work,
                state_dir=home / "state",
            )  # fmt: skip
            started = time.perf_counter()
            completed = subprocess.run(
                [sys.executable, "-m", "copilot_driver.harness", *extra],
                env=env, capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            elapsed = (time.perf_counter() - started) * 1000
            if completed.returncode != 0:
                raise RuntimeError(f"a harness run failed: {completed.stderr[-2000:]}")
            if round_number:  # the first round warms the CLI's caches
                samples[key].append(elapsed)
        home = work / f"harness-lone-{round_number}"
        started = time.perf_counter()
        lone = Sidecar.start(
            binary, token=secrets.token_hex(16),
            env=sidecar_environment(home, model_base_url=model.base_url),
            ready_timeout=60,
        )  # fmt: skip
        booted = (time.perf_counter() - started) * 1000
        lone.stop()
        if round_number:
            samples["sidecar_start_ms"].append(booted)
    return {key: _summary(values) for key, values in samples.items()}


def bench_sidecar_memory(work: Path, model: ScriptedModelServer, runs: int) -> dict[str, Any]:
    """The CLI's peak resident memory (VmHWM) after a plain turn, in the sandbox and out
    of it, interleaved; MB."""
    binary = locate_copilot_cli()
    prompt = work / "memory-prompt.md"
    prompt.write_text("say hello")
    samples: dict[str, list[float]] = {"off_mb": [], "sandboxed_mb": []}
    for round_number in range(runs + 1):
        for key in samples:
            home = work / f"memory-{key}-{round_number}"
            env = sidecar_environment(home, model_base_url=model.base_url)
            plain, credentials = split_sidecar_environment(env)
            sandbox = None
            if key == "sandboxed_mb":
                sandbox = Sandbox.prepare(
                    binary, env, SandboxSettings(), workspace=work, state_base=home / "state",
                    cache_home=sandbox_cache_home(env),
                )  # fmt: skip
            token = secrets.token_hex(16)
            sidecar = Sidecar.start(
                binary, token=token, env=plain, credentials=credentials, sandbox=sandbox,
                ready_timeout=60,
            )  # fmt: skip
            try:
                driver_env = driver_environment(
                    prompt_file=prompt, sdk_uri=sidecar.uri, token=token,
                    model_base_url=model.base_url, state_dir=home / "state",
                )  # fmt: skip
                turn = _run([sys.executable, "-m", "copilot_driver"], driver_env)
                if turn["exit_code"] != 0:
                    raise RuntimeError(f"a memory run failed: {turn['stderr'][-2000:]}")
                peak = _vm_hwm_mb(_cli_process(sidecar.process.pid))
            finally:
                sidecar.stop()
                if sandbox is not None:
                    sandbox.close()
            if round_number:
                samples[key].append(peak)
    return {key: _summary(values) for key, values in samples.items()}


def _cli_process(pid: int) -> int:
    """The Copilot CLI itself: `pid`, or in the sandbox its descendant that runs it."""
    while True:
        below = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            below += (task / "children").read_text().split()
        headless = [
            int(c) for c in below if b"--headless" in Path(f"/proc/{c}/cmdline").read_bytes()
        ]
        if not headless:
            return pid
        pid = headless[0]


def _vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def bench_version_check(env: dict[str, str], work: Path, rounds: int = 20) -> dict[str, float]:
    """Milliseconds of the compatibility check on a connected client (`env` is a driver's)."""

    async def measure() -> list[float]:
        import copilot

        client = create_client(load_config(env, cwd=work))
        await client.start()
        costs = []
        try:
            for _ in range(rounds):
                started = time.perf_counter()
                status = await client.get_status()
                untested_versions(status.version, copilot.__version__)
                costs.append((time.perf_counter() - started) * 1000)
        finally:
            await asyncio.wait_for(client.stop(), 10)
        return costs

    return _summary(asyncio.run(measure()))


def _session_creation_ms(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """`client.started` to `session.created` in each run, from the driver's log."""
    phases = [_phases(r["stderr"], r["spawned_at"]) for r in runs]
    return _summary(
        [
            p[LogEvent.SESSION_CREATED] - p[LogEvent.CLIENT_STARTED]
            for p in phases
            if LogEvent.SESSION_CREATED in p
        ]
    )


def _median_ms(argv: Sequence[str], env: dict[str, str], runs: int) -> dict[str, float]:
    return _summary([_run(argv, env)["wall_ms"] for _ in range(runs)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument(
        "--driver", action="append", default=[], metavar="CMD",
        help="another driver command to time alongside (e.g. 'node ref/driver.cjs')",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, default=Path("bench-results.json"))
    args = parser.parse_args(argv)

    drivers: dict[str, list[str]] = {OURS: [sys.executable, "-m", "copilot_driver"]}
    for command in args.driver:
        drivers[command] = shlex.split(command)
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "runs": args.runs, "warmup": args.warmup, "drivers": {},
    }  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="copilot-bench-") as folder:
        work = Path(folder)
        with ScriptedModelServer(SCRIPT) as model:
            sidecar = start_test_sidecar(work, model_base_url=model.base_url)
            try:
                samples = _drive(drivers, sidecar, model, work, args.runs, args.warmup)
                env = driver_environment(
                    prompt_file=work / "missing-prompt.md", sdk_uri="", token="",
                    model_base_url=None, state_dir=work / "state",
                )  # fmt: skip
                config_error = _median_ms(drivers[OURS], env, args.runs)
                prompt = work / "version-check-prompt.md"
                prompt.write_text("say hello")
                env = driver_environment(
                    prompt_file=prompt, sdk_uri=sidecar.uri, token=sidecar.token,
                    model_base_url=model.base_url, state_dir=work / "state",
                )  # fmt: skip
                version_check = bench_version_check(env, work)
            finally:
                sidecar.stop()
            harness = bench_harness(work, model, args.runs)
            memory = bench_sidecar_memory(work, model, args.runs)
        plain_env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
        import_only = _median_ms([sys.executable, "-c", "import copilot"], plain_env, args.runs)
        interpreter = _median_ms([sys.executable, "-c", "pass"], plain_env, args.runs)

    for name, runs in samples.items():
        entry: dict[str, Any] = {}
        for turn in ("plain", "tool"):
            measured = runs[turn]
            failures = [r for r in measured if r["exit_code"] != 0]
            entry[turn] = {
                "wall_ms": _summary([r["wall_ms"] for r in measured]),
                "rss_mb": _summary([r["rss_mb"] for r in measured]),
                "failures": len(failures),
            }
            phases = [_phases(r["stderr"], r["spawned_at"]) for r in measured]
            keys = sorted(
                {k for p in phases for k in p}, key=lambda k: min(p.get(k, 1e9) for p in phases)
            )
            entry[turn]["phases_ms"] = {k: _summary([p[k] for p in phases if k in p]) for k in keys}
        results["drivers"][name] = entry
    ours = results["drivers"][OURS]
    results["import_copilot_ms"] = import_only
    results["interpreter_ms"] = interpreter
    results["after_import_ms"] = ours["plain"]["wall_ms"]["median"] - import_only["median"]
    results["config_error_ms"] = config_error
    harness["driver_ms"] = ours["plain"]["wall_ms"]
    harness["parts_ms"] = harness["sidecar_start_ms"]["median"] + harness["driver_ms"]["median"]
    harness["whole_to_parts"] = harness["whole_ms"]["median"] / harness["parts_ms"]
    harness["whole_to_sequential"] = (
        harness["whole_ms"]["median"] / harness["sequential_ms"]["median"]
    )
    harness["sandboxed_to_off"] = harness["whole_ms"]["median"] / harness["off_ms"]["median"]
    results["harness"] = harness
    memory["sandboxed_to_off"] = memory["sandboxed_mb"]["median"] / memory["off_mb"]["median"]
    results["sidecar_memory"] = memory
    creation = _session_creation_ms(samples[OURS]["plain"])
    results["version_check"] = {
        "check_ms": version_check,
        "session_create_ms": creation,
        "check_to_create": version_check["median"] / creation["median"],
    }
    results["sink"] = bench_sink()
    results["policy"] = bench_policy()
    results["long_commands"] = bench_long_commands()
    results["edit_file"] = bench_edit_file_growth()
    results["targets"] = _check_targets(results)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(_markdown(results))
    return 0


def _drive(
    drivers: dict[str, list[str]],
    sidecar: Any,
    model: ScriptedModelServer,
    work: Path,
    runs: int,
    warmup: int,
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {
        name: {"plain": [], "tool": []} for name in drivers
    }
    counter = 0
    for round_number in range(warmup + runs):
        for name, argv in drivers.items():
            for turn, prompt in (("plain", "say hello"), ("tool", "please RUNTOOL now")):
                counter += 1
                prompt_file = work / f"prompt-{counter}.md"
                prompt_file.write_text(prompt)
                env = driver_environment(
                    prompt_file=prompt_file, sdk_uri=sidecar.uri, token=sidecar.token,
                    model_base_url=model.base_url, state_dir=work / "state",
                    workspace=work,
                )  # fmt: skip
                result = _run(argv, env)
                if round_number >= warmup:
                    samples[name][turn].append(result)
    return samples


def _check_targets(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    ours = results["drivers"][OURS]["plain"]
    measured = {
        "plain_wall_ms": ours["wall_ms"]["median"],
        "after_import_ms": results["after_import_ms"],
        "config_error_ms": results["config_error_ms"]["median"],
        "peak_rss_mb": max(results["drivers"][OURS][t]["rss_mb"]["max"] for t in ("plain", "tool")),
        "sink_events_per_s": results["sink"]["events_per_s"],
        "decision_us": results["policy"]["decision_us"],
        "long_command_ms": results["long_commands"]["slowest_64kib_ms"],
        "long_command_growth": results["long_commands"]["growth"],
        "oversized_command_ms": results["long_commands"]["oversized_ms"],
        "edit_file_growth": results["edit_file"]["growth"],
        "harness_whole_to_sequential": results["harness"]["whole_to_sequential"],
        "harness_sandboxed_to_off": results["harness"]["sandboxed_to_off"],
        "sidecar_memory_sandboxed_to_off": results["sidecar_memory"]["sandboxed_to_off"],
        "version_check_to_session_create": results["version_check"]["check_to_create"],
    }
    checked = {}
    for name, value in measured.items():
        op, bound = TARGETS[name]
        met = value <= bound if op == "<=" else value >= bound if op == ">=" else value < bound
        checked[name] = {"value": value, "target": f"{op} {bound:g}", "met": met}
    return checked


def _fmt(summary: dict[str, float], unit: str = "ms") -> str:
    return f"{summary['median']:.0f} {unit} ({summary['min']:.0f}-{summary['max']:.0f})"


def _harness_line(harness: dict[str, Any]) -> str:
    return (
        f"Harness, whole run (plain turn): {_fmt(harness['whole_ms'])}; its parts: sidecar "
        f"start-up {_fmt(harness['sidecar_start_ms'])} + driver turn "
        f"{_fmt(harness['driver_ms'])} = {harness['parts_ms']:.0f} ms (whole/parts "
        f"{harness['whole_to_parts']:.2f}); the same run with the driver started only once "
        f"the sidecar listens: {_fmt(harness['sequential_ms'])} (whole/that "
        f"{harness['whole_to_sequential']:.2f}); the same run with `--sandbox off`: "
        f"{_fmt(harness['off_ms'])} (sandboxed/off {harness['sandboxed_to_off']:.2f})."
    )


def _memory_line(memory: dict[str, Any]) -> str:
    return (
        f"Sidecar peak memory after a plain turn (VmHWM): sandboxed "
        f"{_fmt(memory['sandboxed_mb'], 'MB')}, off {_fmt(memory['off_mb'], 'MB')} "
        f"(sandboxed/off {memory['sandboxed_to_off']:.3f})."
    )


def _version_check_line(check: dict[str, Any]) -> str:
    return (
        f"Compatibility check (`status.get` and the decision): "
        f"{check['check_ms']['median']:.2f} ms ({check['check_ms']['min']:.2f}-"
        f"{check['check_ms']['max']:.2f}), beside session creation "
        f"{_fmt(check['session_create_ms'])} (check/creation {check['check_to_create']:.3f})."
    )


def _markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Medians of {results['runs']} runs after {results['warmup']} warm-up rounds "
        f"(min-max); Python {results['machine']['python']}, {results['machine']['cpus']} CPUs.",
        "",
        "| driver | plain turn | one-tool turn | peak RSS | failures |",
        "|---|---|---|---|---|",
    ]
    for name, entry in results["drivers"].items():
        failures = entry["plain"]["failures"] + entry["tool"]["failures"]
        rss = max(entry[t]["rss_mb"]["max"] for t in ("plain", "tool"))
        lines.append(
            f"| `{name}` | {_fmt(entry['plain']['wall_ms'])} | {_fmt(entry['tool']['wall_ms'])} "
            f"| {rss:.0f} MB | {failures} |"
        )
    phases = results["drivers"][OURS]["plain"]["phases_ms"]
    lines += [
        "",
        f"Lifecycle of `{OURS}` (plain turn, ms after the process was spawned, from its log): "
        + ", ".join(f"{name} {summary['median']:.0f}" for name, summary in phases.items()),
        f"Python start {results['interpreter_ms']['median']:.0f} ms; "
        f"`import copilot` (with start) {results['import_copilot_ms']['median']:.0f} ms.",
        "",
        _harness_line(results["harness"]),
        "",
        _memory_line(results["sidecar_memory"]),
        "",
        _version_check_line(results["version_check"]),
        "",
        "| target | measured | bound | met |",
        "|---|---|---|---|",
    ]
    for name, check in results["targets"].items():
        met = "yes" if check["met"] else "NO"
        lines.append(f"| {name} | {check['value']:.1f} | {check['target']} | {met} |")
    sink, policy = results["sink"], results["policy"]
    lines.append(
        f"\nEvents sink: {sink['events_per_s']:.0f} events/s for {sink['events']} events "
        f"({sink['written']} written), {sink['peak_traced_mb']:.1f} MB peak traced; "
        f"policy: {policy['decisions_per_s']:.0f} decisions/s (shell {policy['shell_us']:.1f} us, "
        f"write {policy['write_us']:.1f} us, mcp {policy['mcp_us']:.1f} us)."
    )
    long = results["long_commands"]["ms"]
    lines += [
        "",
        "| long shell command | " + " | ".join(f"{k} KiB" for k in LONG_COMMAND_KIB) + " |",
    ]
    lines.append("|---|" + "---|" * len(LONG_COMMAND_KIB))
    for shape, by_size in long.items():
        cells = " | ".join(f"{by_size[k]:.2f} ms" for k in LONG_COMMAND_KIB)
        lines.append(f"| {shape} | {cells} |")
    oversized = results["long_commands"]["oversized_ms"]
    lines.append(f"\nA {OVERSIZED_COMMAND_KIB} KiB line is refused in {oversized:.3f} ms.")
    edit = results["edit_file"]
    lines.append(
        "\nTool loop `edit_file`, every line a match: "
        + ", ".join(f"{n} lines {ms:.1f} ms" for n, ms in edit["ms"].items())
        + f" (x{edit['growth']:.1f})."
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
