"""What the codex adapter tests share, handed out as fixtures.

pytest runs with `--import-mode=importlib`, so test modules cannot import
this file: they get its helpers through the fixtures below (and import the
classes only under TYPE_CHECKING, for annotations).

- `codex_schemas`: the generated protocol schema (tests/data/codex-app-server/
  schema) as validators for what the client sends and what the server sends.
- `codex_transcripts`: the real app-server transcripts, split into turns.
- `fake_codex`: a fake `codex app-server`, a small Python script that runs
  a scenario (a list of steps) given in a file: it waits for the client's
  requests, answers them, sends notifications and server requests, and
  records everything it received (and its pid, cwd, argv and
  CODEX_API_KEY) in a JSON Lines log.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from copilot_driver.adapters.codex import CodexAdapter
from copilot_driver.adapters.core.agent_events import AgentEvent, EventType
from copilot_driver.adapters.core.session import DEFAULT_READ_TIMEOUT_MS, AdapterConfig
from copilot_driver.adapters.core.ssh import SshSettings
from copilot_driver.adapters.core.tools import DynamicTool

DATA = Path(__file__).resolve().parents[3] / "data" / "codex-app-server"
SCHEMA = DATA / "schema"

TRANSCRIPT_NAMES = (
    "full-session-hi-dynamic-tool-shell",
    "shell-command-nonzero-exit",
    "model-http-500-default-retries",
    "model-server-down-no-retries",
    "model-server-down-default-retries-interrupted",
    "no-auth-builtin-openai-provider",
    "provider-env-key-missing",
)

REPLY_SCHEMAS = {
    "item/tool/call": "DynamicToolCallResponse.json",
    "item/commandExecution/requestApproval": "CommandExecutionRequestApprovalResponse.json",
    "item/fileChange/requestApproval": "FileChangeRequestApprovalResponse.json",
}
"""The response schema of each server request the adapter answers with a result."""


# -- the protocol schema -----------------------------------------------------


@cache
def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA / name).read_text(encoding="utf-8"))
    return loaded


def _problems(schema: Mapping[str, Any], instance: Any) -> list[str]:
    validator = jsonschema.Draft7Validator(schema)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"[:500]
        for error in validator.iter_errors(instance)
    ]


class CodexSchemas:
    """Validators for the generated schema files (problems as readable strings)."""

    def _branch(self, file: str, method: str) -> dict[str, Any]:
        """The `oneOf` member of `file` for `method`, with the file's definitions."""
        document = _load(file)
        for branch in document["oneOf"]:
            if method in branch["properties"]["method"]["enum"]:
                return {**branch, "definitions": document.get("definitions", {})}
        raise AssertionError(f"{method!r} is not a method of {file}")

    def definition(self, file: str, name: str) -> dict[str, Any]:
        document = _load(file)
        assert name in document["definitions"], f"{name} is not defined in {file}"
        return {"$ref": f"#/definitions/{name}", "definitions": document["definitions"]}

    def problems_with_definition(self, file: str, name: str, instance: Any) -> list[str]:
        return _problems(self.definition(file, name), instance)

    def problems_with_client_message(self, message: Mapping[str, Any]) -> list[str]:
        """A request or notification the client sent, against ClientRequest/ClientNotification.

        Checked against the member for its method (clear messages), and the
        request also against the whole `oneOf` (exactly one member matches).
        """
        method = message.get("method")
        if not isinstance(method, str):
            return [f"not a request or notification: {message!r}"[:300]]
        file = "ClientRequest.json" if "id" in message else "ClientNotification.json"
        problems = _problems(self._branch(file, method), message)
        if not problems:
            problems = _problems(_load(file), message)
        return problems

    def problems_with_server_message(self, message: Mapping[str, Any]) -> list[str]:
        method = message.get("method")
        assert isinstance(method, str), message
        file = "ServerRequest.json" if "id" in message else "ServerNotification.json"
        return _problems(self._branch(file, method), message)

    def problems_with_reply(self, method: str, result: Any) -> list[str]:
        return _problems(_load(REPLY_SCHEMAS[method]), result)


@pytest.fixture(scope="session")
def codex_schemas() -> CodexSchemas:
    return CodexSchemas()


# -- the real transcripts ------------------------------------------------------


@dataclass(frozen=True)
class Transcript:
    name: str
    rows: tuple[tuple[str, dict[str, Any]], ...]
    """(direction, message): "out" = client to app-server, "in" = from it."""
    meta: Mapping[str, Any]

    def turns(self) -> list[list[tuple[str, Any]]]:
        """Each turn's notifications: (method, params) of the "in" messages with a
        method and no id, from a turn/start request to that turn's turn/completed."""
        turns: list[list[tuple[str, Any]]] = []
        current: list[tuple[str, Any]] | None = None
        for direction, message in self.rows:
            if direction == "out" and message.get("method") == "turn/start":
                current = []
                turns.append(current)
            elif current is not None and direction == "in" and _is_notification(message):
                current.append((message["method"], message.get("params")))
                if message["method"] == "turn/completed":
                    current = None
        return turns

    def replies_to_server(self) -> list[dict[str, Any]]:
        return [m for d, m in self.rows if d == "out" and "id" in m and "method" not in m]

    def first(self, direction: str, method: str) -> dict[str, Any]:
        for row_direction, message in self.rows:
            if row_direction == direction and message.get("method") == method:
                return message
        raise AssertionError(f"no {direction} {method} in {self.name}")

    def result_of(self, method: str) -> Any:
        """The result the app-server gave to the client's first `method` request."""
        request_id = self.first("out", method)["id"]
        for direction, message in self.rows:
            if direction == "in" and message.get("id") == request_id and "method" not in message:
                return message.get("result")
        raise AssertionError(f"no answer to {method} in {self.name}")


def _is_notification(message: Mapping[str, Any]) -> bool:
    return isinstance(message.get("method"), str) and "id" not in message


def load_transcript(name: str) -> Transcript:
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = tuple((row["dir"], row["msg"]) for row in map(json.loads, lines))
    meta = json.loads((DATA / f"{name}.meta.json").read_text(encoding="utf-8"))
    return Transcript(name, rows, meta)


@pytest.fixture(scope="session")
def codex_transcripts() -> dict[str, Transcript]:
    on_disk = {path.name.removesuffix(".jsonl") for path in DATA.glob("*.jsonl")}
    assert on_disk == set(TRANSCRIPT_NAMES), "a transcript was added or removed: update the tests"
    return {name: load_transcript(name) for name in TRANSCRIPT_NAMES}


# -- events ------------------------------------------------------------------


@dataclass
class Recorder:
    """An `on_event` callback that keeps every event."""

    events: list[AgentEvent] = field(default_factory=list)

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def types(self) -> list[EventType]:
        return [event.type for event in self.events]

    def of(self, type_: EventType) -> list[AgentEvent]:
        return [event for event in self.events if event.type is type_]

    def messages(self, type_: EventType | None = None) -> list[str]:
        return [e.message for e in self.events if type_ is None or e.type is type_]

    async def wait_for(
        self, predicate: Callable[[list[AgentEvent]], bool], timeout_s: float = 5.0
    ) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate(self.events):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; events so far: {self.types()}")
            await asyncio.sleep(0.01)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


# -- the fake app-server --------------------------------------------------------

THREAD_ID = "01a1fcc7-01df-72a1-948b-eab62c1c102c"
TURN_ID = "01a1fcc7-01f7-78d2-a31f-a3a44820af92"
API_KEY = "sk-test-key-do-not-leak-7f3a"

FAKE_APP_SERVER = r"""
import json, os, subprocess, sys, time

steps = json.load(open(os.environ["FAKE_CODEX_SCRIPT"]))
log = open(os.environ["FAKE_CODEX_LOG"], "a", buffering=1)


def record(entry):
    entry["t"] = time.monotonic()
    log.write(json.dumps(entry) + "\n")


record({"start": {"pid": os.getpid(), "cwd": os.getcwd(), "argv": sys.argv,
                  "api_key": os.environ.get("CODEX_API_KEY")}})


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive():
    while True:
        line = sys.stdin.readline()
        if not line:
            record({"eof": True})
            return None
        try:
            message = json.loads(line)
        except ValueError:
            record({"raw": line})
            continue
        record({"received": message})
        return message


def mismatch(step, got):
    record({"mismatch": step, "got": got})
    sys.stderr.write(f"fake app-server: expected {step}, got {got}\n")
    sys.stderr.flush()
    sys.exit(3)


ids = {}
for step in steps:
    op = step["op"]
    if op == "expect":
        message = receive()
        if message is None or message.get("method") != step["method"]:
            mismatch(step, message)
        if "id" in message:
            ids["last"] = ids[step.get("as") or "last"] = message["id"]
    elif op == "respond":
        send({"id": ids[step.get("to") or "last"], "result": step["result"]})
    elif op == "fail":
        send({"id": ids[step.get("to") or "last"], "error": step["error"]})
    elif op == "send":
        send(step["message"])
    elif op == "expect_reply":
        wanted = list(step["ids"])
        while wanted:
            message = receive()
            if message is None or "method" in message or message.get("id") not in wanted:
                mismatch(step, message)
            wanted.remove(message["id"])
    elif op == "raw":
        sys.stdout.write(step["text"] + "\n")
        sys.stdout.flush()
    elif op == "stderr":
        sys.stderr.write(step["text"])
        sys.stderr.flush()
    elif op == "sleep":
        time.sleep(step["seconds"])
    elif op == "spawn_child":
        child = subprocess.Popen(["sleep", "60"])
        record({"child": child.pid})
    elif op == "exit":
        sys.stderr.write(step["stderr"])
        sys.stderr.flush()
        time.sleep(step["linger"])
        os._exit(step["code"])
    elif op == "hang":
        while receive() is not None:
            pass
        while True:
            time.sleep(1)
    else:
        raise SystemExit(f"unknown op {op}")

while receive() is not None:
    pass
"""

FAKE_SSH = r"""
import json, os, sys

with open(os.environ["FAKE_SSH_ARGV"], "a") as out:
    out.write(json.dumps(sys.argv) + "\n")
# OpenSSH forwards no environment: the remote shell sees only its own.
remote_env = {k: v for k, v in os.environ.items() if k.startswith("FAKE_") or k in ("PATH", "LANG")}
os.execve("/bin/sh", ["sh", "-c", sys.argv[-1]], remote_env)
"""


def turn_object(
    turn_id: str, status: str = "inProgress", error: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A `Turn` in the shape the real app-server sends."""
    return {
        "id": turn_id,
        "rootTurnId": turn_id,
        "items": [],
        "itemsView": "notLoaded",
        "status": status,
        "error": dict(error) if error is not None else None,
        "startedAt": 1795242263,
        "completedAt": None if status == "inProgress" else 1795242264,
        "durationMs": None if status == "inProgress" else 88,
    }


def turn_error(message: str, info: Any = "other") -> dict[str, Any]:
    return {
        "message": message,
        "codexErrorInfo": info,
        "additionalDetails": None,
        "misalignment": None,
    }


@dataclass
class Script:
    """The fake app-server's scenario, built step by step."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    thread_result: Mapping[str, Any] = field(default_factory=dict)

    def _add(self, op: str, **fields: Any) -> Script:
        self.steps.append({"op": op, **fields})
        return self

    # the primitive steps
    def expect(self, method: str, as_: str | None = None) -> Script:
        """Wait for the client's next message; it must be `method`."""
        return self._add("expect", method=method, **({"as": as_} if as_ else {}))

    def respond(self, result: Any, to: str | None = None) -> Script:
        """Answer the last expected request (or the one expected `as_=to`)."""
        return self._add("respond", result=result, **({"to": to} if to else {}))

    def fail(self, code: int, message: str, to: str | None = None) -> Script:
        error = {"code": code, "message": message}
        return self._add("fail", error=error, **({"to": to} if to else {}))

    def send(self, message: Mapping[str, Any], *, checked: bool = True) -> Script:
        return self._add("send", message=dict(message), checked=checked)

    def notify(self, method: str, params: Any, *, checked: bool = True) -> Script:
        return self.send({"method": method, "params": params}, checked=checked)

    def request(self, request_id: int, method: str, params: Any) -> Script:
        return self.send({"id": request_id, "method": method, "params": params})

    def expect_reply(self, *ids: int) -> Script:
        """Wait for the client's replies to these server requests (any order)."""
        return self._add("expect_reply", ids=list(ids))

    def raw(self, text: str) -> Script:
        return self._add("raw", text=text)

    def stderr(self, text: str) -> Script:
        return self._add("stderr", text=text)

    def sleep(self, seconds: float) -> Script:
        return self._add("sleep", seconds=seconds)

    def spawn_child(self) -> Script:
        return self._add("spawn_child")

    def exit(self, code: int, stderr: str = "", linger_s: float = 0.0) -> Script:
        return self._add("exit", code=code, stderr=stderr, linger=linger_s)

    def hang(self) -> Script:
        """Ignore stdin EOF: only a signal ends the fake."""
        return self._add("hang")

    # the usual conversation
    def handshake(self, account: Mapping[str, Any] | None = None) -> Script:
        self.expect("initialize").respond(
            {
                "userAgent": "copilot_driver/0.169.0",
                "codexHome": "/HOME/.codex",
                "platformFamily": "unix",
                "platformOs": "linux",
            }
        )
        self.expect("initialized")
        return self.expect("account/read").respond(
            {
                "account": dict(account) if account is not None else None,
                "userId": None,
                "requiresOpenaiAuth": account is None,
                "workspaceRouting": None,
            }
        )

    def thread(self, thread_id: str = THREAD_ID, method: str = "thread/start") -> Script:
        self.expect(method)
        result = json.loads(json.dumps(self.thread_result))
        result["thread"]["id"] = result["thread"]["sessionId"] = thread_id
        return self.respond(result)

    def start(self, thread_id: str = THREAD_ID) -> Script:
        """Handshake (an API-key account) and a new thread."""
        return self.handshake({"type": "apiKey"}).thread(thread_id)

    def turn_started(self, turn_id: str = TURN_ID, thread_id: str = THREAD_ID) -> Script:
        self.expect("turn/start", as_=f"turn {turn_id}")
        self.respond({"turn": turn_object(turn_id)}, to=f"turn {turn_id}")
        return self.notify("turn/started", {"threadId": thread_id, "turn": turn_object(turn_id)})

    @staticmethod
    def turn_error(message: str, info: Any = "other") -> dict[str, Any]:
        """A `TurnError`, as in `turn/completed` and `error` notifications."""
        return turn_error(message, info)

    def turn_completed(
        self,
        turn_id: str = TURN_ID,
        status: str = "completed",
        error: Mapping[str, Any] | None = None,
        thread_id: str = THREAD_ID,
    ) -> Script:
        turn = turn_object(turn_id, status, error)
        return self.notify("turn/completed", {"threadId": thread_id, "turn": turn})

    def agent_message(self, text: str, item_id: str = "msg_1", turn_id: str = TURN_ID) -> Script:
        item = {"type": "agentMessage", "id": item_id, "text": text}
        return self.notify(
            "item/completed",
            {"item": item, "threadId": THREAD_ID, "turnId": turn_id, "completedAtMs": 1},
        )

    def token_usage(self, input_tokens: int, output_tokens: int, cached: int = 0) -> Script:
        total = {
            "totalTokens": input_tokens + output_tokens,
            "inputTokens": input_tokens,
            "cachedInputTokens": cached,
            "outputTokens": output_tokens,
            "reasoningOutputTokens": 0,
        }
        usage = {"total": total, "last": total, "modelContextWindow": 258400}
        return self.notify(
            "thread/tokenUsage/updated",
            {"threadId": THREAD_ID, "turnId": TURN_ID, "tokenUsage": usage},
        )

    def replay(self, transcript: Transcript) -> Script:
        """The app-server's side of a real transcript: wait for each of the
        client's messages, answer with what the real server sent."""
        for direction, message in transcript.rows:
            method = message.get("method")
            if direction == "out" and method is not None:
                key = f"fixture {message['id']}" if "id" in message else None
                self.expect(method, as_=key)
            elif direction == "out":
                self.expect_reply(message["id"])
            elif method is not None:
                self.send(message)
            elif "error" in message:
                self._add("fail", error=message["error"], to=f"fixture {message['id']}")
            else:
                self.respond(message.get("result"), to=f"fixture {message['id']}")
        return self


@dataclass
class FakeCodex:
    """A fake app-server in a temporary directory, and its workspace."""

    root: Path
    workspace: Path
    schemas: CodexSchemas
    thread_result: Mapping[str, Any]
    thread_id: str = THREAD_ID
    turn_id: str = TURN_ID
    api_key: str = API_KEY
    last_script: Script | None = None

    @property
    def log_path(self) -> Path:
        return self.root / "app-server.log.jsonl"

    @property
    def server_script(self) -> Path:
        return self.root / "bin" / "fake_app_server.py"

    def script(self) -> Script:
        return Script(thread_result=self.thread_result)

    def env(self, script: Script, **extra: str) -> dict[str, str]:
        """The fake's environment with `script` written out (its sent messages
        checked against the schema first, so the fake says what Codex says)."""
        for step in script.steps:
            if step["op"] == "send" and step.get("checked", True):
                problems = self.schemas.problems_with_server_message(step["message"])
                assert problems == [], f"the fake would send an invalid message: {problems}"
        self.last_script = script
        scenario = self.root / "scenario.json"
        scenario.write_text(json.dumps(script.steps), encoding="utf-8")
        self.server_script.parent.mkdir(parents=True, exist_ok=True)
        self.server_script.write_text(FAKE_APP_SERVER, encoding="utf-8")
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "FAKE_CODEX_SCRIPT": str(scenario),
            "FAKE_CODEX_LOG": str(self.log_path),
            **extra,
        }

    def config(
        self,
        script: Script,
        *,
        options: Mapping[str, Any] | None = None,
        tools: Sequence[DynamicTool] = (),
        env: Mapping[str, str] | None = None,
        read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS,
        ssh: SshSettings | None = None,
    ) -> AdapterConfig:
        return AdapterConfig(
            command=f"{sys.executable} {self.server_script}",
            options=dict(options or {}),
            ssh=ssh,
            read_timeout_ms=read_timeout_ms,
            environment=self.env(script, **dict(env or {})),
            tools=tuple(tools),
        )

    def adapter(self, script: Script, **config: Any) -> CodexAdapter:
        return CodexAdapter(self.config(script, **config))

    def install_ssh(self) -> Path:
        """A fake `ssh` on a private PATH directory: it records its argv in
        `ssh_argv.jsonl` and runs the remote command locally with `sh -c`."""
        bin_dir = self.root / "ssh-bin"
        bin_dir.mkdir(exist_ok=True)
        ssh = bin_dir / "ssh"
        ssh.write_text(f"#!{sys.executable}\n{FAKE_SSH}", encoding="utf-8")
        ssh.chmod(0o755)
        return bin_dir

    def ssh_argvs(self) -> list[list[str]]:
        path = self.root / "ssh_argv.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    # what the fake recorded
    def log(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def started(self) -> dict[str, Any]:
        starts = [entry["start"] for entry in self.log() if "start" in entry]
        assert starts, "the fake app-server never started"
        start: dict[str, Any] = starts[-1]
        return start

    def received(self) -> list[dict[str, Any]]:
        return [entry["received"] for entry in self.log() if "received" in entry]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            m
            for m in self.received()
            if "id" in m and "method" in m and (method is None or m["method"] == method)
        ]

    def replies(self) -> dict[Any, dict[str, Any]]:
        """The client's replies to server requests, by id."""
        return {m["id"]: m for m in self.received() if "method" not in m}

    def saw_eof(self) -> bool:
        return any(entry.get("eof") for entry in self.log())

    def assert_script_followed(self) -> None:
        mismatches = [entry for entry in self.log() if "mismatch" in entry]
        raws = [entry["raw"] for entry in self.log() if "raw" in entry]
        assert mismatches == [], "the client did not follow the scenario"
        assert raws == [], "the client wrote lines that are not JSON"

    def server_requests(self) -> list[dict[str, Any]]:
        """The requests the fake's scenario sends to the client."""
        assert self.last_script is not None
        return [
            step["message"]
            for step in self.last_script.steps
            if step["op"] == "send" and "id" in step["message"] and "method" in step["message"]
        ]

    def assert_messages_match_the_schema(
        self, server_requests: Iterable[dict[str, Any]] | None = None
    ) -> None:
        """Every request and notification the client sent against ClientRequest /
        ClientNotification, every result it gave to `server_requests` (default:
        the scenario's) against that method's response schema."""
        if server_requests is None:
            server_requests = self.server_requests()
        for message in self.received():
            if "method" in message:
                problems = self.schemas.problems_with_client_message(message)
                assert problems == [], f"{message['method']}: {problems}"
        replies = self.replies()
        for request in server_requests:
            reply = replies[request["id"]]
            if request["method"] in REPLY_SCHEMAS and "result" in reply:
                problems = self.schemas.problems_with_reply(request["method"], reply["result"])
                assert problems == [], f"reply to {request['method']}: {problems}"


@pytest.fixture
def fake_codex(
    tmp_path: Path, codex_schemas: CodexSchemas, codex_transcripts: dict[str, Transcript]
) -> FakeCodex:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    full = codex_transcripts["full-session-hi-dynamic-tool-shell"]
    return FakeCodex(tmp_path, workspace, codex_schemas, full.result_of("thread/start"))
