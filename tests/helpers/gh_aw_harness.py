"""gh-aw's real Copilot harness, run offline, with our driver or gh-aw's own.

gh-aw's compiled agent step runs `node copilot_harness.cjs <runtime> <driver>
<copilot binary>`: the harness starts the Copilot CLI sidecar, makes the
connection token, builds the provider catalog from AWF's reflect data,
spawns the driver, classifies its exit and output, and retries. Running a
driver under that very file (vendored unchanged in `tests/data/gh-aw-harness`,
v0.82.10) is the closest thing to a real gh-aw job that works offline, and
running gh-aw's own Node driver under it in the same case gives the verdict
and the events our driver must match.

What the rig adds around the unchanged harness, and only in its process:

- a `node -r` preload that answers the one URL the harness fetches from AWF
  (`http://api-proxy:10000/reflect`) with a catalog whose only endpoint is a
  scripted model server on 127.0.0.1, so the harness builds the real
  multi-provider catalog itself;
- optionally, a different `COPILOT_SDK_URI` for the driver it spawns (and only
  the driver), so a test can put an `RpcProxy` between the driver and the
  harness's own sidecar.

Everything listens on 127.0.0.1; no GitHub token is in any environment. The
harness and everything it starts run in one process group of their own,
killed whole after each run, so no sidecar outlives a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.gh_aw import DEFAULT_PATH, write_driver_file
from copilot_driver.testing.environment import TEST_MODEL, sidecar_environment
from copilot_driver.testing.model_server import RecordedRequest, ScriptedModelServer
from copilot_driver.testing.script import Script

REPOSITORY = Path(__file__).resolve().parents[2]
HARNESS_SOURCE = REPOSITORY / "tests" / "data" / "gh-aw-harness" / "js"
"""gh-aw's harness and Node driver, vendored unchanged (see its README.md)."""
NODE_MODULES = REPOSITORY / ".cache" / "gh-aw-node" / "node_modules"
"""Where `make setup` installs the Node SDK gh-aw's driver needs (`GH_AW_NODE_MODULES`)."""
NODE_SDK = Path("@github") / "copilot-sdk" / "package.json"

REFLECT_URL = "http://api-proxy:10000/reflect"
DRIVER_URI_VARIABLE = "GH_AW_TEST_DRIVER_SDK_URI"
"""Read by the preload only: the `COPILOT_SDK_URI` the spawned driver gets instead."""
RUN_TIMEOUT_S = 150.0
SEND_TIMEOUT_MS = 15000
"""`COPILOT_SDK_SEND_TIMEOUT_MS` for every run (a case may override it). gh-aw's
v0.82.10 Node driver only ends at this timeout after its own denial guard or
idle watchdog disconnects the session (its SDK's `sendAndWait` does not return
on a disconnect), so it bounds how long those cases take with gh-aw's driver;
every scripted case otherwise finishes in a few seconds."""

PERMISSION_DENIED = re.compile(r"\b(?:permission denied|permissions denied|EACCES|EPERM)\b", re.I)
"""The harness's own pattern (permission_denied_helpers.cjs): three or more
matches in a driver's output classify a failure as `permission_denied`."""
CLASSIFYING_PATTERNS: dict[str, re.Pattern[str]] = {
    "capi_400": re.compile(r"CAPIError:\s*400"),
    "mcp_policy_blocked": re.compile(r"MCP servers were blocked by policy:"),
    "model_not_supported": re.compile(
        r"The requested model is not supported|No model available\b[^\n]*policy enablement", re.I
    ),
    "http_400": re.compile(
        r"Response status code does not indicate success:\s*400"
        r"|(?:^|\n)[ \t]*400 Bad Request[ \t]*(?=\n|$)"
        r"|400[^\n]*no model endpoints available given user constraints"
        r"|400[^\n]*stream_options:\s*Extra inputs are not permitted",
        re.I,
    ),
    "tool_call_id_schema_error": re.compile(
        r"400\s+Invalid ['\"]input\[\d+\]\.id['\"]:\s*['\"]ctc_call_", re.I
    ),
    "null_type_tool_call": re.compile(r"tool_calls\[.*?\]\.type.*null"),
    "no_auth_info": re.compile(
        r"No authentication information found"
        r"|Session was not created with authentication info or custom provider"
    ),
    "authentication_failed": re.compile(
        r"Authentication failed|authentication_failed|not logged in"
        r"|checking third-party user token:[^\n]*Personal Access Tokens are not supported",
        re.I,
    ),
    "inference_access": re.compile(r"Access denied by policy settings|invalid access to inference"),
    "engine_timeout": re.compile(r"signal=SIG(?:TERM|KILL|INT)"),
    "sdk_idle_timeout": re.compile(r"Timeout after \d+ms waiting for session\.idle"),
    "mcp_gateway_shutdown": re.compile(r'"message"\s*:\s*"Gateway shutdown initiated"'),
    "connection_refused": re.compile(r"connection refused|ECONNREFUSED", re.I),
    "permission_denied": PERMISSION_DENIED,
}
"""What gh-aw's newer harness looks for in a driver's output to classify a failed attempt
and decide whether to retry it, as `../shared/notes/gh-aw-engine-driver.md` ("Patterns
matched on driver output") records them from `copilot_harness.cjs` and its helpers."""
TOTAL_TOKENS = re.compile(r'"total_tokens"\s*:\s*(\d+)')
"""Summed by the harness: past its threshold a failure is classed `long_run_exit`."""

_SPAWNING = re.compile(r"^\[copilot-harness\] attempt (\d+): spawning: ")
_FAILED = re.compile(
    r"^\[copilot-harness\] attempt (\d+) failed: exitCode=(-?\d+) failureClass=(\S+)"
)
_NOT_RETRYING = re.compile(r"^\[copilot-harness\] attempt (\d+): .*not retrying")
_SUCCESS = re.compile(r"^\[copilot-harness\] success on attempt (\d+)")
_EXHAUSTED = re.compile(r"^\[copilot-harness\] all (\d+) retries exhausted")
_DONE = re.compile(r"^\[copilot-harness\] done: exitCode=(-?\d+)")

PRELOAD_TEMPLATE = r"""// Test rig preload (tests/helpers/gh_aw_harness.py), run by `node -r`
// into gh-aw's harness process only. It answers AWF's reflect URL, which has no
// server here, and can give the spawned driver another COPILOT_SDK_URI.
"use strict";
const REFLECT_URL = @REFLECT_URL@;
const reflect = process.env.GH_AW_TEST_REFLECT_JSON;
const realFetch = globalThis.fetch;
globalThis.fetch = async function (input, init) {
  const url = typeof input === "string" ? input : String(input && input.url ? input.url : input);
  if (url === REFLECT_URL && reflect) {
    const headers = { "content-type": "application/json" };
    return new Response(reflect, { status: 200, headers });
  }
  return realFetch(input, init);
};
const driverUri = process.env[@DRIVER_URI@];
const childProcess = require("child_process");
const realSpawn = childProcess.spawn;
childProcess.spawn = function (command, args, options) {
  // The driver is the harness's first argument (its runtime); the sidecar is not.
  if (driverUri && command === process.argv[2] && options && options.env) {
    options = { ...options, env: { ...options.env, COPILOT_SDK_URI: driverUri } };
  }
  return realSpawn.call(this, command, args, options);
};
"""
PRELOAD = PRELOAD_TEMPLATE.replace("@REFLECT_URL@", json.dumps(REFLECT_URL)).replace(
    "@DRIVER_URI@", json.dumps(DRIVER_URI_VARIABLE)
)


class HarnessUnavailableError(RuntimeError):
    """node, the vendored harness or gh-aw's Node SDK is missing here."""


def locate_node_modules() -> Path:
    """The node_modules folder holding gh-aw's Node SDK (`GH_AW_NODE_MODULES`, else the cache)."""
    configured = os.environ.get("GH_AW_NODE_MODULES")
    folder = Path(configured) if configured else NODE_MODULES
    if not (folder / NODE_SDK).is_file():
        raise HarnessUnavailableError(
            f"@github/copilot-sdk is not installed in {folder} (`make setup` installs it)"
        )
    return folder


def locate_node() -> str:
    node = shutil.which("node")
    if node is None:
        raise HarnessUnavailableError("node is not on PATH (gh-aw's harness is a Node program)")
    return node


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def tool_contract(
    *allowed: str, max_tool_calls: int | None = None, **capabilities: bool
) -> dict[str, Any]:
    """A version-1 tool contract (GH_AW_COPILOT_SDK_TOOL_CONFIG): everything off
    unless named, `read` plus `allowed` granted."""
    contract: dict[str, Any] = {
        "version": 1,
        "capabilities": {
            **dict.fromkeys(("bash", "edit", "webFetch", "webSearch", "mcp", "cliProxy"), False),
            **capabilities,
        },
        "permissions": {"allowedTools": ["read", *allowed]},
    }
    if max_tool_calls is not None:
        contract["maxToolCalls"] = max_tool_calls
    return contract


@dataclass(frozen=True)
class Attempt:
    """One attempt as the harness's verdict lines tell it."""

    number: int
    exit_code: int | None = None
    """None when the attempt succeeded (the harness logs no exit code for it)."""
    failure_class: str | None = None
    retried: bool = True


@dataclass
class HarnessRun:
    """What one harness run left behind."""

    driver: str
    exit_code: int
    output: str
    """The harness's stdout and stderr together: its own lines and the driver's."""
    events: list[dict[str, Any]]
    """Every events.jsonl record under the session-state folder, in file order."""
    requests: list[RecordedRequest]
    """Every request the scripted model server received."""
    workspace: Path
    took_s: float
    session_state: Path
    survivors: list[str] = field(default_factory=list)
    """Processes of the run's group still alive when the harness had exited
    (its sidecar, a driver), before the rig killed them: gh-aw's harness is
    meant to leave none."""
    attempts: list[Attempt] = field(default_factory=list)
    success_on: int | None = None
    exhausted: bool = False
    done_exit_code: int | None = None

    @property
    def failure_classes(self) -> list[str]:
        return [a.failure_class for a in self.attempts if a.failure_class is not None]

    @property
    def verdict(self) -> tuple[int | None, int, tuple[str, ...]]:
        """(final exit code, attempts, failure classes): what two drivers must share."""
        return (self.done_exit_code, len(self.attempts), tuple(self.failure_classes))

    @property
    def permission_denied_lines(self) -> list[str]:
        return [line for line in self.output.splitlines() if PERMISSION_DENIED.search(line)]

    @property
    def permission_denied_count(self) -> int:
        return len(PERMISSION_DENIED.findall(self.output))

    @property
    def total_tokens(self) -> int:
        return sum(int(value) for value in TOTAL_TOKENS.findall(self.output))

    def model_calls(self) -> list[RecordedRequest]:
        """The inference requests (Chat Completions or Responses), not model listings."""
        return [
            r
            for r in self.requests
            if r.method == "POST"
            and r.path.rstrip("/").endswith(("/chat/completions", "/responses"))
        ]

    def events_of(self, event_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("type") == event_type]

    def event_fields(self) -> dict[str, set[str]]:
        """Each event type, with the union of its records' data field names."""
        fields: dict[str, set[str]] = {}
        for event in self.events:
            data = event.get("data")
            names = set(data) if isinstance(data, dict) else set()
            fields.setdefault(str(event.get("type")), set()).update(names)
        return fields


def parse_verdict(run: HarnessRun) -> None:
    """Fill `run`'s attempts and verdict from the harness's `[copilot-harness]` lines."""
    attempts: dict[int, Attempt] = {}
    for line in run.output.splitlines():
        if match := _SPAWNING.match(line):
            number = int(match.group(1))
            attempts.setdefault(number, Attempt(number))
        elif match := _FAILED.match(line):
            number = int(match.group(1))
            attempts[number] = Attempt(number, int(match.group(2)), match.group(3))
        elif match := _NOT_RETRYING.match(line):
            number = int(match.group(1))
            if number in attempts:
                previous = attempts[number]
                attempts[number] = Attempt(
                    number, previous.exit_code, previous.failure_class, retried=False
                )
        elif match := _SUCCESS.match(line):
            run.success_on = int(match.group(1))
        elif _EXHAUSTED.match(line):
            run.exhausted = True
        elif match := _DONE.match(line):
            run.done_exit_code = int(match.group(1))
    run.attempts = [attempts[number] for number in sorted(attempts)]


@dataclass(frozen=True)
class HarnessCase:
    """One run's inputs: the prompt, what the model answers, the tool contract."""

    prompt: str
    script: Script
    contract: Mapping[str, Any] | str = field(default_factory=tool_contract)
    """The tool contract, as an object or as raw text (to send a broken one)."""
    max_tool_denials: int = 3
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra harness environment (e.g. GH_AW_SDK_IDLE_MS)."""
    workspace_setup: Callable[[Path], None] | None = None
    """Prepares the run's workspace (GITHUB_WORKSPACE) before the harness starts."""
    safe_outputs: str = ""
    """What the safe-outputs file (GH_AW_SAFE_OUTPUTS) holds when the run starts: a
    terminal output there arms the harness's post-result watchdog at once."""

    def allowed_tools(self) -> list[str]:
        """The contract's grants, which gh-aw also passes the sidecar as `--allow-tool`."""
        if isinstance(self.contract, str):
            return []
        permissions = self.contract.get("permissions")
        allowed = permissions.get("allowedTools") if isinstance(permissions, Mapping) else None
        return [str(tool) for tool in allowed] if isinstance(allowed, list) else []


class GhAwHarness:
    """gh-aw's harness copied once into `root`, ready to run either driver.

    Node resolves a module from the real path of the file that requires it,
    so the harness's files are copied (not linked) into `root/js`, with a
    `node_modules` link beside them to the installed Node SDK.
    """

    def __init__(
        self,
        root: Path,
        *,
        copilot_cli: Path,
        cache_home: Path | None = None,
        source: Path = HARNESS_SOURCE,
        node_modules: Path | None = None,
    ) -> None:
        self.node = locate_node()
        if not (source / "copilot_harness.cjs").is_file():
            raise HarnessUnavailableError(f"gh-aw's harness is not in {source}")
        self.root = root
        self.copilot_cli = copilot_cli
        self.cache_home = cache_home
        root.mkdir(parents=True, exist_ok=True)
        self.js = root / "js"
        shutil.copytree(source, self.js, dirs_exist_ok=True)
        link = root / "node_modules"
        if not link.exists():
            link.symlink_to(node_modules or locate_node_modules(), target_is_directory=True)
        self.preload = root / "rig-preload.cjs"
        self.preload.write_text(PRELOAD, encoding="utf-8")
        self.harness = self.js / "copilot_harness.cjs"
        self.node_driver = self.js / "copilot_sdk_driver.cjs"
        self._runs = 0

    def driver_command(self, driver: str, workspace: Path) -> tuple[str, str]:
        """(runtime, driver file) as gh-aw's compiled step names them: ours is
        the file `python -m copilot_driver.gh_aw` writes into the repository
        checkout, gh-aw's is the setup action's `copilot_sdk_driver.cjs`."""
        if driver == "ours":
            driver_file = workspace / DEFAULT_PATH
            write_driver_file(driver_file)
            return sys.executable, str(driver_file)
        if driver == "gh-aw":
            return self.node, str(self.node_driver)
        raise ValueError(f"driver is 'ours' or 'gh-aw', not {driver!r}")

    def run(
        self,
        driver: str,
        case: HarnessCase,
        *,
        driver_sdk_uri: str | None = None,
        sidecar_port: int | None = None,
        timeout: float = RUN_TIMEOUT_S,
    ) -> HarnessRun:
        """Run the harness once with `driver` ('ours' or 'gh-aw') on `case`.

        `sidecar_port` fixes the port the harness starts its sidecar on (a
        free one otherwise); `driver_sdk_uri` gives the driver another address
        (an `RpcProxy` in front of that port). The run is killed, its whole
        process group, after `timeout` seconds.
        """
        with ScriptedModelServer(case.script) as server:
            return self._run(driver, case, server, driver_sdk_uri, sidecar_port, timeout)

    def _run(
        self,
        driver: str,
        case: HarnessCase,
        server: ScriptedModelServer,
        driver_sdk_uri: str | None,
        sidecar_port: int | None,
        timeout: float,
    ) -> HarnessRun:
        self._runs += 1
        folder = Path(tempfile.mkdtemp(prefix=f"run{self._runs}-{driver}-", dir=self.root))
        workspace, home, state, runner_temp = (
            folder / name for name in ("workspace", "home", "state", "runner-temp")
        )
        for path in (workspace, home, state, runner_temp):
            path.mkdir()
        prompt = folder / "prompt.txt"
        prompt.write_text(case.prompt, encoding="utf-8")
        safe_outputs = folder / "safe-outputs.jsonl"
        safe_outputs.write_text(case.safe_outputs, encoding="utf-8")
        if case.workspace_setup is not None:
            case.workspace_setup(workspace)
        port = sidecar_port or free_port()
        origin = server.base_url.removesuffix("/v1")
        reflect = {
            "endpoints": [
                {
                    "provider": "copilot",
                    "configured": True,
                    "port": 10002,
                    "models_url": f"{origin}/v1/models",
                    "models": [TEST_MODEL],
                }
            ]
        }
        server_args = ["--headless", "--no-auto-update", "--port", str(port)]
        for tool in case.allowed_tools():
            server_args += ["--allow-tool", tool]
        contract = (
            case.contract if isinstance(case.contract, str) else json.dumps(dict(case.contract))
        )
        env = sidecar_environment(home, model_base_url=server.base_url, cache_home=self.cache_home)
        for name in ("GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN"):
            env.pop(name, None)
        env.update(
            GH_AW_PROMPT=str(prompt),
            COPILOT_SDK_URI=f"http://127.0.0.1:{port}",
            GH_AW_COPILOT_SDK_DRIVER="1",
            GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(server_args),
            GH_AW_COPILOT_SDK_TOOL_CONFIG=contract,
            GH_AW_MAX_TOOL_DENIALS=str(case.max_tool_denials),
            COPILOT_MODEL=f"copilot/{TEST_MODEL}",
            RUNNER_TEMP=str(runner_temp),
            GITHUB_WORKSPACE=str(workspace),
            GH_AW_SESSION_STATE_BASE_DIR=str(state),
            AWF_REFLECT_ENABLED="1",
            GH_AW_HARNESS_INITIAL_DELAY_MS="100",
            GH_AW_HARNESS_MAX_DELAY_MS="200",
            GH_AW_SAFE_OUTPUTS=str(safe_outputs),
            # AWF's config file, absent here: not whatever /tmp/gh-aw holds on this machine.
            GH_AW_AWF_CONFIG_PATH=str(folder / "awf-config.json"),
            COPILOT_SKIP_CLI_DOWNLOAD="1",
            COPILOT_SDK_SEND_TIMEOUT_MS=str(SEND_TIMEOUT_MS),
            GH_AW_TEST_REFLECT_JSON=json.dumps(reflect),
        )
        if driver_sdk_uri is not None:
            env[DRIVER_URI_VARIABLE] = driver_sdk_uri
        env.update(case.env)
        runtime, driver_file = self.driver_command(driver, workspace)
        argv: Sequence[str] = [
            self.node,
            "-r",
            str(self.preload),
            str(self.harness),
            runtime,
            driver_file,
            str(self.copilot_cli),
        ]
        log_path = folder / "harness-output.log"
        started = time.monotonic()
        with open(log_path, "wb") as log:
            # A file, not a pipe: a child that outlived the harness cannot hold a read open.
            process = subprocess.Popen(
                argv,
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            survivors: list[str] = []
            try:
                exit_code = process.wait(timeout=timeout)
                survivors = group_members(process.pid)
            except subprocess.TimeoutExpired:
                _kill_group(process.pid)
                exit_code = process.wait()
            finally:
                _kill_group(process.pid)
        took = time.monotonic() - started
        run = HarnessRun(
            driver=driver,
            exit_code=exit_code,
            output=log_path.read_text(encoding="utf-8", errors="replace"),
            events=read_events(state),
            requests=list(server.requests),
            workspace=workspace,
            took_s=took,
            session_state=state,
            survivors=survivors,
        )
        parse_verdict(run)
        return run


def _kill_group(pgid: int) -> None:
    """SIGKILL every process left in the run's process group (the sidecar, a driver)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def group_members(pgid: int) -> list[str]:
    """The command lines of the live processes in process group `pgid` (Linux /proc)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ")".
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(cmdline.replace(b"\0", b" ").decode(errors="replace").strip())
    return members


def read_events(state: Path) -> list[dict[str, Any]]:
    """Every record of every events.jsonl under `state` (invalid lines kept as `_invalid`)."""
    records: list[dict[str, Any]] = []
    for path in sorted(state.rglob("events.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                value = {"_invalid": line}
            records.append(value if isinstance(value, dict) else {"_invalid": line})
    return records
