"""`make bench`: how fast the driver is, measured on the real runtime.

One real Copilot CLI sidecar and the scripted model serve every run. For
each driver command (this project's, the same with the SDK imported eagerly,
gh-aw's Node driver, plus any `--driver "CMD"`), runs are interleaved
(driver A, driver B, A, B, ...) so ratios hold on a noisy machine, after
`--warmup` unmeasured rounds; a run fails when it exits non-zero or (for the
drivers whose output is known) does not show the model's reply. Reported as
medians with the spread (min-max):

- whole-process wall time of a plain turn and of a one-tool turn;
- gh-aw's own Node driver (`copilot_sdk_driver.cjs`, vendored in
  tests/data/gh-aw-harness) timed in the same interleaved rounds against the
  same sidecar and model: this driver's plain turn over the reference's, as a
  ratio of medians (target <= 1.5); when node or its SDK (`make setup`) is
  missing, a line says so and the ratio is "not measured";
- this driver's plain turn as it runs by default (the SDK's generated modules
  loaded lazily, when `copilot_driver.sdk_loading` has its cache) and with
  `COPILOT_DRIVER_SDK_LOADING=eager`, interleaved; and `import copilot` in
  fresh processes, eager and through the lazy loader (target: lazy < eager);
  without the loader, a line says why it was not measured;
- after the SDK import: the eager plain turn's wall time minus the median
  cost of starting Python and importing the SDK eagerly (`python -c "import
  copilot"`), this project only;
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
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from copilot_driver.testing.environment import TEST_MODEL
from copilot_driver.vocabulary import LogEvent

OURS = "copilot-driver"
OURS_EAGER = "copilot-driver, eager SDK import"
"""This driver again, told to import the SDK eagerly: beside OURS, the lazy loader's saving."""
EAGER_LOADING_ENV = {"COPILOT_DRIVER_SDK_LOADING": "eager"}
NODE_REFERENCE = "gh-aw copilot_sdk_driver.cjs"
REPOSITORY = Path(__file__).resolve().parents[1]
NODE_DRIVER = REPOSITORY / "tests" / "data" / "gh-aw-harness" / "js" / "copilot_sdk_driver.cjs"
"""gh-aw's own Node driver (v0.82.10, vendored unchanged): the reference a turn is held to."""
NODE_MODULES = REPOSITORY / ".cache" / "gh-aw-node" / "node_modules"
"""Where `make setup` installs the Node SDK that driver loads (`GH_AW_NODE_MODULES` overrides)."""
NODE_SDK_PACKAGE = Path("@github") / "copilot-sdk" / "package.json"
NODE_PROVIDER = "copilot"
"""The provider name gh-aw's harness gives the driver for AWF's Copilot endpoint."""
EAGER_IMPORT = "import copilot"
LAZY_IMPORT = (
    "from copilot_driver.sdk_loading import install; l = install(); "
    "assert l.lazy, l.reason; import copilot"
)
LOADER_STATUS = (
    "import json; from copilot_driver.sdk_loading import install; l = install(); "
    "print(json.dumps({'lazy': l.lazy, 'reason': l.reason}))"
)
"""Asked once, in a fresh process (install() must come before `import copilot`, and the
bench itself imports the SDK): whether the lazy loader exists and is lazy here."""
LOADER_BUILD = "python -m copilot_driver.sdk_loading build"
PLAIN_REPLY = "Hello from the scripted model."
TOOL_REPLY = "The tool ran; done."
TURNS = {"plain": ("say hello", PLAIN_REPLY), "tool": ("please RUNTOOL now", TOOL_REPLY)}
"""Each turn's prompt, and the reply its run must show to count as a success."""
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
                Reply(text=TOOL_REPLY),
            ),
        ),
    ),
    default=Reply(text=PLAIN_REPLY),
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
    "plain_to_node_reference": ("<=", 1.5),
    "import_lazy_to_eager": ("<", 1.0),
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


def _same_sources(env: Mapping[str, str]) -> dict[str, str]:
    """`env` plus the bench's own PYTHONPATH, when it has one: a checkout run with
    `PYTHONPATH=src` then times its own sources in every process, not the venv's install."""
    python_path = os.environ.get("PYTHONPATH")
    return {**env, "PYTHONPATH": python_path} if python_path else dict(env)


def _run(argv: Sequence[str], env: dict[str, str], timeout: float = 120) -> dict[str, Any]:
    """Run once: wall time, peak RSS (from wait4), exit code, stdout, stderr."""
    spawned_at = time.time()
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=_same_sources(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
        "stdout": out.get("stdout", ""),
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


def _summary_or_none(values: Sequence[float]) -> dict[str, float] | None:
    return _summary(values) if values else None


@dataclass(frozen=True)
class Driver:
    """A driver command to time, and what its runs need besides the spec's environment."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Added to each run's driver environment."""
    checks_reply: bool = False
    """A run counts as a success only if the model's reply is in its output: exit code 0
    alone is also what a driver that gave up quietly shows. Off for `--driver` commands,
    whose output this bench does not know."""


class NodeReferenceMissingError(RuntimeError):
    """node, or the Node SDK gh-aw's driver loads, is not installed here."""


def locate_node_reference(environ: Mapping[str, str]) -> tuple[str, Path]:
    """node and the node_modules holding `@github/copilot-sdk`, or an error naming the fix."""
    node = shutil.which("node", path=environ.get("PATH"))
    if node is None:
        raise NodeReferenceMissingError(
            "node is not on PATH (install Node 20 or later, then run `make setup`)"
        )
    configured = environ.get("GH_AW_NODE_MODULES")
    modules = Path(configured) if configured else NODE_MODULES
    if not (modules / NODE_SDK_PACKAGE).is_file():
        raise NodeReferenceMissingError(
            f"@github/copilot-sdk is not installed in {modules} (`make setup` installs it)"
        )
    if not NODE_DRIVER.is_file():
        raise NodeReferenceMissingError(f"gh-aw's Node driver is not at {NODE_DRIVER}")
    return node, modules


def node_reference_env(node_modules: Path, model_base_url: str) -> dict[str, str]:
    """What gh-aw's harness adds for its driver, on top of the spec variables both drivers
    read (checked against the harness's own run in tests/helpers/gh_aw_harness.py): the
    provider catalog it builds from AWF's reflect data, here naming the scripted model, and
    the model as `copilot/<id>`."""
    provider = {
        "name": NODE_PROVIDER,
        "type": "openai",
        # The harness gives the origin of the endpoint's models URL, without `/v1`.
        "baseUrl": model_base_url.removesuffix("/v1"),
        "wireApi": "completions",
    }
    catalog = {
        "model": TEST_MODEL,
        "providers": [provider],
        "models": [{"id": TEST_MODEL, "provider": NODE_PROVIDER}],
    }
    return {
        # gh-aw's setup action puts the SDK beside the driver; NODE_PATH finds the same
        # package for the vendored copy without copying it.
        "NODE_PATH": str(node_modules),
        "COPILOT_MODEL": f"{NODE_PROVIDER}/{TEST_MODEL}",
        "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": json.dumps(catalog),
    }


def node_reference(model_base_url: str) -> tuple[Driver | None, dict[str, Any]]:
    """gh-aw's Node driver as a Driver, or None, and what to report about it."""
    try:
        node, modules = locate_node_reference(os.environ)
    except NodeReferenceMissingError as missing:
        return None, {"measured": False, "reason": str(missing)}
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    sdk = json.loads((modules / NODE_SDK_PACKAGE).read_text()).get("version", "?")
    env = node_reference_env(modules, model_base_url)
    driver = Driver([node, str(NODE_DRIVER)], env, checks_reply=True)
    return driver, {"measured": True, "node": version, "sdk": sdk}


def reference_ratio(ours: dict[str, Any], node: dict[str, Any]) -> tuple[float | None, str]:
    """Our plain turn's median over the Node reference's, and what to say beside it; None
    when no run of the reference succeeded (a fast failure is no reference)."""
    failed, runs = node["failures"], node["wall_ms"]["n"]
    if failed == runs:
        return None, f"every one of the reference's {runs} plain turns failed"
    ratio = ours["wall_ms"]["median"] / node["wall_ms"]["median"]
    note = f"ours {ours['wall_ms']['median']:.0f} ms / Node {node['wall_ms']['median']:.0f} ms"
    return ratio, note + (f"; {failed} of its {runs} runs failed" if failed else "")


@dataclass(frozen=True)
class LoaderStatus:
    """What `copilot_driver.sdk_loading.install()` says in a fresh process."""

    available: bool
    lazy: bool
    reason: str

    def describe(self) -> str:
        if not self.available:
            return f"lazy loader not available: {self.reason}"
        if self.lazy:
            return f"lazy loader active: {self.reason}"
        hint = "" if "build" in self.reason else f" (`{LOADER_BUILD}` builds its cache)"
        return f"lazy loader not lazy here: {self.reason}{hint}"


def parse_loader_status(exit_code: int, stdout: str, stderr: str) -> LoaderStatus:
    """The LOADER_STATUS probe's answer: its JSON line, else the error it died of."""
    if exit_code != 0:
        lines = stderr.strip().splitlines()
        return LoaderStatus(False, False, lines[-1] if lines else f"exit code {exit_code}")
    try:
        answer = json.loads(stdout.strip().splitlines()[-1])
        return LoaderStatus(True, bool(answer["lazy"]), str(answer["reason"]))
    except (ValueError, KeyError, IndexError, TypeError):
        return LoaderStatus(False, False, f"unreadable answer from install(): {stdout!r}")


def lazy_loader_status(env: dict[str, str]) -> LoaderStatus:
    completed = subprocess.run(
        [sys.executable, "-c", LOADER_STATUS],
        env=_same_sources(env), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return parse_loader_status(completed.returncode, completed.stdout, completed.stderr)


def bench_sdk_import(
    env: dict[str, str], loader: LoaderStatus, runs: int, warmup: int
) -> dict[str, Any]:
    """`import copilot` in fresh processes (Python's start included), eager and through the
    lazy loader, interleaved; the lazy one only when the loader is lazy here."""
    commands = {"eager_ms": EAGER_IMPORT}
    if loader.lazy:
        commands["lazy_ms"] = LAZY_IMPORT
    samples: dict[str, list[float]] = {key: [] for key in commands}
    failures = dict.fromkeys(commands, 0)
    for round_number in range(warmup + runs):
        for key, code in commands.items():
            result = _run([sys.executable, "-c", code], env)
            if round_number < warmup:
                continue
            if result["exit_code"] != 0:
                failures[key] += 1
            else:
                samples[key].append(result["wall_ms"])
    eager = _summary_or_none(samples["eager_ms"])
    lazy = _summary_or_none(samples.get("lazy_ms", []))
    if lazy and eager:
        ratio: float | None = lazy["median"] / eager["median"]
        note = f"lazy {lazy['median']:.0f} ms / eager {eager['median']:.0f} ms"
    else:
        ratio = None
        note = loader.describe() if not loader.lazy else "every lazy import failed"
    return {
        "loader": {"available": loader.available, "lazy": loader.lazy, "reason": loader.reason},
        "eager_ms": eager,
        "lazy_ms": lazy,
        "lazy_to_eager": ratio,
        "note": note,
        "failures": failures,
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


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument(
        "--driver", action="append", default=[], metavar="CMD",
        help="another driver command to time alongside (e.g. 'node ref/driver.cjs')",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, default=Path("bench-results.json"))
    return parser.parse_args(argv)


def _drivers(
    extra: Sequence[str], model_base_url: str, loader: LoaderStatus
) -> tuple[dict[str, Driver], dict[str, Any]]:
    """Every driver to time, in their interleaving order, and what to say of the reference."""
    ours = [sys.executable, "-m", "copilot_driver"]
    drivers = {OURS: Driver(ours, checks_reply=True)}
    if loader.available:  # without the loader the variable changes nothing: one run twice
        drivers[OURS_EAGER] = Driver(ours, EAGER_LOADING_ENV, checks_reply=True)
    reference, about = node_reference(model_base_url)
    if reference is not None:
        drivers[NODE_REFERENCE] = reference
    for command in extra:
        drivers[command] = Driver(shlex.split(command))
    return drivers, about


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "load_start": os.getloadavg()[0]},
        "runs": args.runs, "warmup": args.warmup, "drivers": {},
    }  # fmt: skip
    plain_env = {
        k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "XDG_CACHE_HOME")
    }
    # The lazy-loading cache is the user's (XDG_CACHE_HOME, which `make` puts in the
    # checkout); a run trusts none in its workspace, the current directory by default.
    plain_env["GITHUB_WORKSPACE"] = tempfile.gettempdir()
    loader = lazy_loader_status(plain_env)

    with tempfile.TemporaryDirectory(prefix="copilot-bench-") as folder:
        work = Path(folder)
        with ScriptedModelServer(SCRIPT) as model:
            drivers, reference = _drivers(args.driver, model.base_url, loader)
            sidecar = start_test_sidecar(work, model_base_url=model.base_url)
            try:
                samples = _drive(drivers, sidecar, model, work, args.runs, args.warmup)
                env = driver_environment(
                    prompt_file=work / "missing-prompt.md", sdk_uri="", token="",
                    model_base_url=None, state_dir=work / "state",
                )  # fmt: skip
                config_error = _median_ms(drivers[OURS].argv, env, args.runs)
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
        sdk_import = bench_sdk_import(plain_env, loader, args.runs, args.warmup)
        interpreter = _median_ms([sys.executable, "-c", "pass"], plain_env, args.runs)

    results["drivers"] = {
        name: _driver_entry(runs, drivers[name]) for name, runs in samples.items()
    }
    ours = results["drivers"][OURS]
    results["node_reference"] = _reference_entry(reference, results["drivers"])
    results["sdk_loading"] = {
        "import": sdk_import,
        "turn": _loading_turn(results["drivers"], samples),
    }
    results["import_copilot_ms"] = sdk_import["eager_ms"]
    results["interpreter_ms"] = interpreter
    # The driver's cost beyond its SDK import, both eager: a lazy turn loads part of the SDK
    # after its start, so its wall time minus an import it did not do would say too little.
    eager_turn = results["drivers"].get(OURS_EAGER, ours)
    results["after_import_ms"] = (
        eager_turn["plain"]["wall_ms"]["median"] - sdk_import["eager_ms"]["median"]
    )
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
    # Other work on the machine skews every absolute figure (ratios less): say how busy it was.
    results["machine"]["load_end"] = os.getloadavg()[0]
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(_markdown(results))
    return 0


def _drive(
    drivers: dict[str, Driver],
    sidecar: Any,
    model: ScriptedModelServer,
    work: Path,
    runs: int,
    warmup: int,
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {
        name: {turn: [] for turn in TURNS} for name in drivers
    }
    counter = 0
    for round_number in range(warmup + runs):
        for name, driver in drivers.items():
            for turn, (prompt, _) in TURNS.items():
                counter += 1
                prompt_file = work / f"prompt-{counter}.md"
                prompt_file.write_text(prompt)
                env = driver_environment(
                    prompt_file=prompt_file, sdk_uri=sidecar.uri, token=sidecar.token,
                    model_base_url=model.base_url, state_dir=work / "state",
                    workspace=work, **driver.env,
                )  # fmt: skip
                result = _run(driver.argv, env)
                if round_number >= warmup:
                    samples[name][turn].append(result)
    return samples


def run_failed(result: dict[str, Any], driver: Driver, reply: str) -> bool:
    """A non-zero exit, or (for a driver whose output is known) no model reply in it."""
    if result["exit_code"] != 0:
        return True
    return driver.checks_reply and reply not in result["stdout"] + result["stderr"]


def _driver_entry(runs: dict[str, list[dict[str, Any]]], driver: Driver) -> dict[str, Any]:
    """Each turn's wall time, peak RSS, failures and lifecycle phases."""
    entry: dict[str, Any] = {}
    for turn, measured in runs.items():
        failures = [r for r in measured if run_failed(r, driver, TURNS[turn][1])]
        entry[turn] = {
            "wall_ms": _summary([r["wall_ms"] for r in measured]),
            "rss_mb": _summary([r["rss_mb"] for r in measured]),
            "failures": len(failures),
        }
        if failures:  # what went wrong, for whoever reads the JSON
            entry[turn]["last_failure"] = {
                "exit_code": failures[-1]["exit_code"],
                "stderr_tail": failures[-1]["stderr"][-2000:],
            }
        phases = [_phases(r["stderr"], r["spawned_at"]) for r in measured]
        keys = sorted(
            {k for p in phases for k in p}, key=lambda k: min(p.get(k, 1e9) for p in phases)
        )
        entry[turn]["phases_ms"] = {k: _summary([p[k] for p in phases if k in p]) for k in keys}
    return entry


def _reference_entry(about: dict[str, Any], drivers: dict[str, Any]) -> dict[str, Any]:
    """What is known of the Node reference, with its ratio (None when not measured)."""
    if not about["measured"]:
        return {**about, "ratio": None, "note": about["reason"]}
    ratio, note = reference_ratio(drivers[OURS]["plain"], drivers[NODE_REFERENCE]["plain"])
    return {**about, "plain_ms": drivers[NODE_REFERENCE]["plain"]["wall_ms"], "ratio": ratio,
            "note": note}  # fmt: skip


def logged_sdk_loading(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct `sdkLoading` values the driver's log entries carry (none from a driver
    that does not log it): what each run really did, beside what it was asked."""
    seen: set[str] = set()
    for run in runs:
        for line in run["stderr"].splitlines():
            if '"sdkLoading"' not in line:
                continue
            try:
                value = json.loads(line)["sdkLoading"]
            except (ValueError, KeyError, TypeError):
                continue
            seen.add(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
    return sorted(seen)


def _loading_turn(
    drivers: dict[str, Any], samples: dict[str, dict[str, list[dict[str, Any]]]]
) -> dict[str, Any] | None:
    """This driver's plain turn by default and with the eager import; None without the loader."""
    if OURS_EAGER not in drivers:
        return None
    default, eager = drivers[OURS]["plain"]["wall_ms"], drivers[OURS_EAGER]["plain"]["wall_ms"]
    return {
        "default_ms": default,
        "eager_ms": eager,
        "default_to_eager": default["median"] / eager["median"],
        "logged": {name: logged_sdk_loading(samples[name]["plain"]) for name in (OURS, OURS_EAGER)},
    }


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
        "plain_to_node_reference": results["node_reference"]["ratio"],
        "import_lazy_to_eager": results["sdk_loading"]["import"]["lazy_to_eager"],
    }
    notes = {
        "plain_to_node_reference": results["node_reference"]["note"],
        "import_lazy_to_eager": results["sdk_loading"]["import"]["note"],
    }
    checked: dict[str, dict[str, Any]] = {}
    for name, value in measured.items():
        op, bound = TARGETS[name]
        checked[name] = {"value": value, "target": f"{op} {bound:g}", "met": _met(value, op, bound)}
        if name in notes:
            checked[name]["note"] = notes[name]
    return checked


def _met(value: float | None, op: str, bound: float) -> bool | None:
    """Whether `value` keeps its bound; None when it was not measured."""
    if value is None:
        return None
    return value <= bound if op == "<=" else value >= bound if op == ">=" else value < bound


def _fmt(summary: dict[str, float], unit: str = "ms") -> str:
    return f"{summary['median']:.0f} {unit} ({summary['min']:.0f}-{summary['max']:.0f})"


def _number(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def _target_row(name: str, check: dict[str, Any]) -> str:
    note = check.get("note")
    if check["value"] is None:
        return f"| {name} | not measured: {note} | {check['target']} | - |"
    measured = _number(check["value"]) + (f" ({note})" if note else "")
    return f"| {name} | {measured} | {check['target']} | {'yes' if check['met'] else 'NO'} |"


def _reference_line(reference: dict[str, Any]) -> str:
    if reference["ratio"] is None:
        return f"Node reference (`{NODE_REFERENCE}`) not measured: {reference['note']}."
    return (
        f"Node reference, gh-aw's `copilot_sdk_driver.cjs` (node {reference['node']}, "
        f"@github/copilot-sdk {reference['sdk']}) on the same sidecar and model, interleaved: "
        f"plain turn {_fmt(reference['plain_ms'])}; ours/Node {reference['ratio']:.2f} "
        f"({reference['note']})."
    )


def _import_line(results: dict[str, Any]) -> str:
    probe = results["sdk_loading"]["import"]
    start = f"Python start {results['interpreter_ms']['median']:.0f} ms; `import copilot` "
    start += f"in fresh processes (with the start): eager {_fmt(probe['eager_ms'])}"
    if probe["lazy_to_eager"] is None:
        return f"{start}; lazy not measured: {probe['note']}."
    return f"{start}, lazy {_fmt(probe['lazy_ms'])} (lazy/eager {probe['lazy_to_eager']:.2f})."


def _loading_turn_line(results: dict[str, Any]) -> str:
    turn = results["sdk_loading"]["turn"]
    if turn is None:  # only without the loader, which the import line's note then names
        note = results["sdk_loading"]["import"]["note"]
        return f"Plain turn, lazy vs eager SDK import, not measured: {note}."
    logged = "; ".join(
        f"{name}: {', '.join(values) or 'not logged'}" for name, values in turn["logged"].items()
    )
    return (
        f"Plain turn by default {_fmt(turn['default_ms'])} vs with "
        f"`COPILOT_DRIVER_SDK_LOADING=eager` {_fmt(turn['eager_ms'])}, interleaved "
        f"(default/eager {turn['default_to_eager']:.2f}; sdkLoading in the logs: {logged})."
    )


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
        f"(min-max); Python {results['machine']['python']}, {results['machine']['cpus']} CPUs, "
        f"load average {results['machine']['load_start']:.2f} at the start, "
        f"{results['machine']['load_end']:.2f} at the end.",
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
        "",
        _reference_line(results["node_reference"]),
        "",
        _import_line(results),
        "",
        _loading_turn_line(results),
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
    lines += [_target_row(name, check) for name, check in results["targets"].items()]
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
