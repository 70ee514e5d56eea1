"""What the compliance kit observes, and how: only what the spec makes visible.

A driver under test is a command line. The kit gives it environment
variables, then reads its exit status, its stderr (JSON or plain-text log
lines, whichever it writes), its stdout, the events file, and what the
Copilot CLI sidecar did: the model requests it sent to the kit's scripted
model, and the tools it really ran.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot_driver.testing import ScriptedModelServer, TestSidecar
from copilot_driver.testing.environment import driver_environment

FEEDBACK_WORDS = "not allowed by workflow tool permissions"

# Lifecycle markers (spec 6.2), as 6.5 JSON events or as words in a text line. The kit
# checks any driver against the spec, so it spells the spec's names itself rather than
# reading this project's `vocabulary.LogEvent`.
LIFECYCLE_MARKERS = {
    "connection": ("connection.start", r"\bconnect(ing|ion)\b"),
    "session": ("session.created", r"\bsession\b.*\bcreated\b|\bcreated session\b"),
    "prompt": (
        "prompt.dispatched",
        r"\bprompt\b.*\b(dispatch|send|sent)|\bsend(ing)? (the )?prompt",
    ),
    "completion": ("session.completed", r"\b(session )?completed?\b|\bcompletion\b"),
    "failure": ("error", r"\berror\b|\bfail(ed|ure)\b"),
}


@dataclass
class LogLine:
    form: str  # "json" or "text"
    text: str
    entry: dict[str, Any] = field(default_factory=dict)

    def field_value(self, name: str) -> Any:
        """A field of the entry: a JSON key, or `name=value` in a text line."""
        if self.form == "json":
            return self.entry.get(name)
        match = re.search(rf"\b{re.escape(name)}=(\"(?:[^\"\\\\]|\\\\.)*\"|\S+)", self.text)
        if not match:
            return None
        value = match.group(1)
        return json.loads(value) if value.startswith('"') else value


def read_log(stderr: str) -> list[LogLine]:
    lines = []
    for raw in stderr.splitlines():
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("{"):
            try:
                entry = json.loads(stripped)
            except ValueError:
                entry = None
            if isinstance(entry, dict):
                lines.append(LogLine("json", stripped, entry))
                continue
        lines.append(LogLine("text", stripped))
    return lines


def find_marker(log: Sequence[LogLine], marker: str) -> LogLine | None:
    """The first line carrying a lifecycle marker, in either form."""
    event, words = LIFECYCLE_MARKERS[marker]
    for line in log:
        if line.form == "json" and line.entry.get("event") == event:
            return line
        if line.form == "text" and (event in line.text or re.search(words, line.text, re.I)):
            return line
    return None


def find_denials(log: Sequence[LogLine]) -> list[LogLine]:
    """Permission-denial diagnostics (spec 6.3) in either form."""
    found = []
    for line in log:
        if (line.form == "json" and line.entry.get("event") == "permission.denied") or (
            line.form == "text"
            and re.search(r"permission\.denied|permission denied", line.text, re.I)
        ):
            found.append(line)
    return found


def summary_of(line: LogLine) -> str:
    """The compact request summary a denial line carries."""
    if line.form == "json":
        for key in ("requestSummary", "summary", "message"):
            value = line.entry.get(key)
            if isinstance(value, str) and "(" in value:
                return value
        return json.dumps(line.entry)
    return line.text


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    state_dir: Path
    workspace: Path

    @property
    def log(self) -> list[LogLine]:
        return read_log(self.stderr)

    def forms(self) -> set[str]:
        return {line.form for line in self.log}

    def events(self) -> list[dict[str, Any]]:
        files = sorted(self.state_dir.glob("*/events.jsonl"))
        if not files:
            return []
        return [json.loads(line) for line in files[-1].read_text().splitlines() if line.strip()]

    def files_text(self) -> str:
        return "\n".join(
            path.read_text(errors="replace") for path in self.state_dir.rglob("*") if path.is_file()
        )


class Kit:
    """Runs the driver under test against the kit's sidecar and scripted model."""

    def __init__(self, command: Sequence[str], model: ScriptedModelServer, tmp: Path) -> None:
        self.command = list(command)
        self.model = model
        self.tmp = tmp

    def environment(
        self, sidecar: TestSidecar | None, prompt: str, **overrides: str | None
    ) -> tuple[dict[str, str], Path, Path]:
        run_dir = Path(tempfile.mkdtemp(dir=self.tmp, prefix="run-"))
        workspace = run_dir / "workspace"
        workspace.mkdir()
        prompt_file = run_dir / "prompt.md"
        prompt_file.write_text(prompt + "\n")
        env = driver_environment(
            prompt_file=prompt_file,
            sdk_uri=sidecar.uri if sidecar else "http://127.0.0.1:9",
            token=sidecar.token if sidecar else "0" * 64,
            model_base_url=self.model.base_url,
            state_dir=run_dir / "state",
            workspace=workspace,
        )
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env, run_dir / "state", workspace

    def run(
        self,
        sidecar: TestSidecar | None,
        prompt: str,
        *,
        timeout: float = 120,
        prepare: Any = None,
        **overrides: str | None,
    ) -> Run:
        env, state, workspace = self.environment(sidecar, prompt, **overrides)
        if prepare is not None:
            prepare(workspace)
        started = time.monotonic()
        completed = subprocess.run(
            self.command, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        return Run(
            completed.returncode,
            completed.stdout,
            completed.stderr,
            time.monotonic() - started,
            state,
            workspace,
        )

    def tool_results(self, since: int = 0) -> list[str]:
        """What the tools returned to the model, from the model requests after `since`."""
        results = []
        for request in self.model.chat_requests()[since:]:
            for message in request.body.get("messages", []):
                if message.get("role") == "tool":
                    results.append(str(message.get("content")))
        return results


@contextmanager
def custom_tool_provider(sidecar: TestSidecar, name: str) -> Iterator[list[str]]:
    """A second SDK client that joins the next new session and defines tool `name`.

    In the runtime's broadcast protocol every client sees a permission request;
    this one never answers (PermissionNoResult), so the driver's handler alone
    decides, exactly as for a tool the driver defined itself. Yields the
    invocations of the tool (a list that grows when the tool really runs).
    """
    calls: list[str] = []
    ready = threading.Event()
    stop = threading.Event()

    async def serve() -> None:
        from copilot import CopilotClient, RuntimeConnection
        from copilot.session import PermissionNoResult
        from copilot.tools import Tool, ToolResult

        client = CopilotClient(
            connection=RuntimeConnection.for_uri(sidecar.uri, connection_token=sidecar.token)
        )
        await client.start()
        known = {s.session_id for s in await client.list_sessions()}
        ready.set()

        async def handler(invocation: Any) -> ToolResult:
            calls.append(json.dumps(invocation.arguments))
            return ToolResult(text_result_for_llm="custom tool ran: the answer is 42")

        try:
            while not stop.is_set():
                fresh = [
                    s.session_id for s in await client.list_sessions() if s.session_id not in known
                ]
                if fresh:
                    await client.resume_session(
                        fresh[0],
                        tools=[
                            Tool(
                                name=name,
                                description="A kit-defined custom tool",
                                handler=handler,
                                parameters={"type": "object", "properties": {}},
                            )
                        ],
                        on_permission_request=lambda _r, _i: PermissionNoResult(),
                    )
                    break
                await asyncio.sleep(0.05)
            while not stop.is_set():
                await asyncio.sleep(0.05)
        finally:
            await client.stop()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield calls
    finally:
        stop.set()
        thread.join(10)


def sidecar_home_with_mcp(home: Path, python: str) -> None:
    """The sidecar's own MCP configuration: any driver's session gets the `fake` server."""
    config = home / ".copilot"
    config.mkdir(parents=True, exist_ok=True)
    server = {
        "type": "local",
        "command": python,
        "args": ["-m", "copilot_driver.testing.mcp_server"],
        "tools": ["*"],
    }
    (config / "mcp-config.json").write_text(json.dumps({"mcpServers": {"fake": server}}))
