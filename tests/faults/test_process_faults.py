"""Faults in the driver process itself: signals, its own files, its prompt.

Every case ends by itself within its bound, says what happened, exits with
the documented code, keeps the events it wrote (valid JSON Lines to the last
line), leaks no secret and leaves no process behind (`fault.check`).

Cases and bounds:

- SIGTERM and SIGINT at each lifecycle step (12 cases): exit 128+N (143 /
  130), one `error` entry with `errorKind` `interrupted` naming the signal,
  within `SIGNAL_BOUND_S` (5 s) of the signal. The steps, and how the test
  knows the driver is in them:
  - `startup`: the configuration is read, the lifecycle's handlers do not
    exist yet: the driver is frozen (SIGSTOP) while it imports
    `copilot_driver.driver.lifecycle`, seen in the interpreter's import log
    (`PYTHONPROFILEIMPORTTIME`), signalled, then continued;
  - `sdk-import`: the `connection.start` entry (the SDK import follows);
  - `connect`: a 127.0.0.1 listener that accepts and never answers has the
    driver's connection (the handshake waits);
  - `session`: a proxy to the real sidecar holds the `session.create` request;
  - `turn`: the scripted model has the request and answers in 300 s;
  - `cleanup`: the turn completed; the proxy holds the `session.detach`.
- The events folder cannot be created (its base is a regular file, which
  fails for root too): exit 1, `events_unwritable`, within `RUN_BOUND_S`.
- The file system fills up (`RLIMIT_FSIZE`; Python ignores SIGXFSZ, so writes
  past the limit fail with EFBIG): the session goes on, the loss is logged
  (`events.write_failed`), the events file holds whole lines only, and the
  run ends with exit 1, `events_unwritable` (the audit trail is incomplete;
  the answer is still on stdout), within `RUN_BOUND_S`.
- The prompt file deleted, or replaced by a rename, once the run started:
  the session gets the prompt the driver read, within `RUN_BOUND_S`.
- A 10 MB prompt: the runtime refuses it (over the model's prompt budget,
  `session_error`), or on a loaded machine stays busy with it past the
  watchdog's limit (`sidecar_lost`): exit 1, nothing huge echoed, within
  `BIG_PROMPT_BOUND_S`.
- Unusable prompts (invalid UTF-8, a single NUL byte, 10 MB ending in an
  invalid byte, a FIFO, a directory): exit 2 with one short line naming
  GH_AW_PROMPT, nothing started, within `CONFIG_BOUND_S`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.logs import read_json_entry
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar
from copilot_driver.testing.environment import driver_environment
from copilot_driver.testing.faults import BoundedProcess, Ended, FaultCase
from copilot_driver.testing.fixtures import DRIVER_COMMAND, DriverRunner, parse_log

pytestmark = pytest.mark.e2e

SIGNAL_BOUND_S = 5.0
"""From the signal to the exit. Every cleanup step is bounded (abort 2 s,
disconnect 3 s, client stop 3 s) but against a healthy or held sidecar the
whole cleanup takes well under a second; 5 s leaves room for a loaded CI
machine while still proving that a signal is not waited out."""
CLEANUP_SIGNAL_BOUND_S = SIGNAL_BOUND_S + 3.0
"""A signal during cleanup does not cut the cleanup short: the held
`session.detach` is given up after its own 3 s (DISCONNECT_TIMEOUT_S)."""
STEP_BOUND_S = 30.0
"""From the start until the driver reaches the step under test (the SDK
import alone takes ~0.7 s, several seconds on a loaded 2-CPU machine)."""
RUN_BOUND_S = 30.0
"""A whole short run against the real sidecar (start-up ~1-3 s, the turn
well under a second), with room for a loaded machine."""
BIG_PROMPT_BOUND_S = 60.0
"""A 10 MB prompt: read, sent over JSON-RPC, tokenised and refused by the
runtime (~5 s measured), and a 20 MB events file written and fsynced."""
CONFIG_BOUND_S = 5.0
"""A configuration error exits in milliseconds (before the SDK is imported);
5 s only absorbs the interpreter's start on a loaded machine."""
CONFIG_OUTPUT_MAX_CHARS = 2_000
"""An error line quotes paths and offsets, never the prompt: anything longer
means user input was echoed."""
BIG_PROMPT_BYTES = 10 * 1024 * 1024
FSIZE_LIMIT_BYTES = 3_000
"""Past the first events (session.start, ~400 bytes) and inside the next
batch (the system message alone is ~40 kB), so a write is cut mid-line."""

STARTUP_ATTEMPTS = 3
"""Tries at freezing the driver inside its start-up window (~30 ms; the test
reacts in well under a millisecond, so one try is the rule)."""

SIGNALS = [signal.SIGTERM, signal.SIGINT]
_IMPORT_LOG_PREFIX = "import time:"


# -- seeing where the driver is ------------------------------------------------


class StderrWatch:
    """Read a running driver's stderr up to a line, keeping what was read.

    Reads the raw descriptor (never the buffered `process.stderr`), so
    nothing is left in a Python buffer that `BoundedProcess.end()` would
    not see: the rest of the stream is read there, and `ended()` puts the
    two parts back together for the checks.
    """

    def __init__(self, process: BoundedProcess) -> None:
        assert process.process.stderr is not None
        self._fd = process.process.stderr.fileno()
        self._data = b""
        self._seen = 0

    @property
    def text(self) -> str:
        return self._data.decode("utf-8", "surrogateescape")

    def wait_for(self, matches: Callable[[str], bool], what: str, timeout: float) -> str:
        """Return the first line (complete, from the start) that `matches`."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self._data.split(b"\n")
            for raw in lines[self._seen : len(lines) - 1]:
                self._seen += 1
                line = raw.decode("utf-8", "surrogateescape")
                if matches(line):
                    return line
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {what} within {timeout:g}s; stderr: {self.text[-3000:]}"
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if ready:
                chunk = os.read(self._fd, 65536)
                assert chunk, f"the driver ended before {what}; stderr: {self.text[-3000:]}"
                self._data += chunk

    def drain(self) -> None:
        """Read what is written already (the driver is stopped, say)."""
        while select.select([self._fd], [], [], 0)[0]:
            chunk = os.read(self._fd, 65536)
            if not chunk:
                return
            self._data += chunk

    def wait_for_entry(self, event: str, timeout: float = STEP_BOUND_S) -> dict[str, Any]:
        line = self.wait_for(lambda text: _entry_event(text) == event, f"{event!r} entry", timeout)
        entry: dict[str, Any] = json.loads(line)
        return entry

    def ended(self, ended: Ended) -> Ended:
        """`ended` with the whole stderr, without the interpreter's import log."""
        stderr = self.text + ended.stderr
        kept = [line for line in stderr.splitlines(True) if not line.startswith(_IMPORT_LOG_PREFIX)]
        return dataclasses.replace(ended, stderr="".join(kept))


def _entry_event(line: str) -> str | None:
    entry = read_json_entry(line)
    return None if entry is None else entry.get("event")


class SilentListener:
    """A 127.0.0.1 port that accepts connections and never says a word."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.accepted = threading.Event()
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self._server.accept()
                self._connections.append(connection)
                self.accepted.set()

    def close(self) -> None:
        self._server.close()
        for connection in self._connections:
            connection.close()


class HoldingProxy:
    """Forwards 127.0.0.1 TCP to the sidecar until the driver sends `method`.

    From the frame that carries that JSON-RPC method on, nothing the driver
    sends reaches the sidecar (the sidecar's answers still flow back): the
    driver waits in the step that sent it, as with a sidecar that is slow
    to answer exactly that request.
    """

    def __init__(self, target_port: int, method: str) -> None:
        self._target = target_port
        self._pattern = f'"method":"{method}"'.encode()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.held = threading.Event()
        self._sockets: list[socket.socket] = [self._server]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def uri(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self._server.accept()
                upstream = socket.create_connection(("127.0.0.1", self._target))
                self._sockets += [client, upstream]
                for pump, args in (
                    (self._upstream, (client, upstream)),
                    (self._back, (upstream, client)),
                ):
                    threading.Thread(target=pump, args=args, daemon=True).start()

    def _upstream(self, source: socket.socket, target: socket.socket) -> None:
        tail = b""
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                if self.held.is_set():
                    continue  # read and dropped: the driver's writes never block
                if self._pattern in tail + chunk:
                    self.held.set()
                    continue
                target.sendall(chunk)
                tail = chunk[-len(self._pattern) :]

    @staticmethod
    def _back(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                target.sendall(chunk)
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()


# -- signals at each lifecycle step --------------------------------------------


def _offline_environment(
    fault: FaultCase, model: ScriptedModelServer, prompt: str, sdk_uri: str, **overrides: str
) -> dict[str, str]:
    """A driver environment for a sidecar that is not a real one (a fake listener)."""
    token = secrets.token_hex(32)
    fault.secrets.append(token)
    prompt_file = fault.tmp_path / "prompt.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    workspace = fault.tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return driver_environment(
        prompt_file=prompt_file,
        sdk_uri=sdk_uri,
        token=token,
        model_base_url=model.base_url,
        state_dir=fault.tmp_path / "state",
        workspace=workspace,
        **overrides,
    )


def _is_import_line(line: str, module: str | None = None) -> bool:
    if not line.startswith(_IMPORT_LOG_PREFIX):
        return False
    return module is None or line.rstrip().endswith(f"| {module}")


def _stopped_while_importing_the_driver(
    fault: FaultCase, env: dict[str, str]
) -> tuple[BoundedProcess, StderrWatch]:
    """Start the driver and freeze it (SIGSTOP) while it imports its lifecycle.

    The interpreter's import log (`PYTHONPROFILEIMPORTTIME`) is the only
    thing a driver writes before its lifecycle starts: once `copilot_driver.cli`
    is loaded and the configuration read, the next line comes from importing
    `copilot_driver.driver.lifecycle`. The driver is stopped at that line and kept only
    if the driver module is still loading (its own line not written yet),
    so the signal sent next is certainly handled before the lifecycle's
    handlers exist. A driver that was faster than the test is tried again.
    """
    for _attempt in range(STARTUP_ATTEMPTS):
        process = fault.start({**env, "PYTHONPROFILEIMPORTTIME": "1"})
        watch = StderrWatch(process)
        watch.wait_for(
            lambda line: _is_import_line(line, "copilot_driver.cli"),
            "import of copilot_driver.cli",
            STEP_BOUND_S,
        )
        watch.wait_for(_is_import_line, "the next import", STEP_BOUND_S)
        os.kill(process.pid, signal.SIGSTOP)
        watch.drain()
        written = watch.text.splitlines()
        if not any(_is_import_line(line, "copilot_driver.driver.lifecycle") for line in written):
            return process, watch
        process.kill()
    raise AssertionError(f"the driver left its start-up {STARTUP_ATTEMPTS} times before a stop")


@dataclasses.dataclass
class AtStep:
    process: BoundedProcess
    watch: StderrWatch
    state_dir: Path
    frozen: bool = False
    """Stopped with SIGSTOP: continue it once the signal is pending."""


@contextlib.contextmanager
def _at_step(
    step: str, fault: FaultCase, model: ScriptedModelServer, sidecar: TestSidecar | None
) -> Iterator[AtStep]:
    """Start the driver and return once it is in `step`."""
    info = {"COPILOT_SDK_LOG_LEVEL": "info"}
    if step in ("startup", "sdk-import", "connect"):
        listener = SilentListener()
        state_dir = fault.tmp_path / "state"
        try:
            env = _offline_environment(fault, model, "hello", f"127.0.0.1:{listener.port}", **info)
            if step == "startup":
                yield AtStep(*_stopped_while_importing_the_driver(fault, env), state_dir, True)
                return
            process = fault.start(env)
            watch = StderrWatch(process)
            if step == "sdk-import":
                watch.wait_for_entry("connection.start")
            else:
                assert listener.accepted.wait(STEP_BOUND_S), "the driver never connected"
            yield AtStep(process, watch, state_dir)
        finally:
            listener.close()
        return

    assert sidecar is not None
    fault.secrets.append(sidecar.token)
    runner = DriverRunner(fault.tmp_path, sidecar, model)
    if step == "turn":
        model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
        process = fault.start(runner.environment("HANG until stopped", **info))
        watch = StderrWatch(process)
        watch.wait_for_entry("prompt.dispatched")
        deadline = time.monotonic() + STEP_BOUND_S
        while not model.chat_requests():
            assert time.monotonic() < deadline, "the turn never reached the model"
            time.sleep(0.02)
        yield AtStep(process, watch, runner.tmp_path / "state")
        return

    method = {"session": "session.create", "cleanup": "session.detach"}[step]
    proxy = HoldingProxy(sidecar.port, method)
    try:
        process = fault.start(runner.environment("hello", COPILOT_SDK_URI=proxy.uri, **info))
        watch = StderrWatch(process)
        assert proxy.held.wait(STEP_BOUND_S), f"the driver never sent {method}"
        yield AtStep(process, watch, runner.tmp_path / "state")
    finally:
        proxy.close()


_PHASES = {
    "connect": "connect",
    "session": "session creation",
    "turn": "the turn",
    "cleanup": "cleanup",
}


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("step", ["startup", "sdk-import", "connect", "session", "turn", "cleanup"])
def test_a_signal_at_each_step_ends_the_run_cleanly(
    step: str,
    signum: int,
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
    request: pytest.FixtureRequest,
) -> None:
    """A harness or a runner cancelling the job may signal at any moment.

    Whatever the step, the driver must stop promptly, report the signal in
    one line and exit 128+N, so the caller tells a cancellation from a
    failure; a Python traceback or a death by the signal is neither.
    """
    sidecar = None
    if step in ("session", "turn", "cleanup"):
        sidecar = request.getfixturevalue("copilot_sidecar")
    name = signal.Signals(signum).name
    with _at_step(step, fault, scripted_model, sidecar) as at:
        at.process.send(signum)
        if at.frozen:
            os.kill(at.process.pid, signal.SIGCONT)
        bound_s = CLEANUP_SIGNAL_BOUND_S if step == "cleanup" else SIGNAL_BOUND_S
        ended = at.watch.ended(at.process.end(bound_s=bound_s))
    assert ended.seconds < bound_s
    assert "Traceback" not in ended.stderr, ended.stderr[-3000:]
    mentions = [name]
    if step in _PHASES:
        mentions.append(f"during {_PHASES[step]}")
    events = fault.check(
        ended,
        exit_code=128 + signum,
        error_kind="interrupted",
        mentions=mentions,
        state_dir=at.state_dir,
    )
    if step in ("turn", "cleanup"):
        # Everything written before the signal is kept.
        assert any(record["type"] == "user.message" for record in events)
    if step == "turn":
        # The turn was aborted, and the file shows it.
        assert any(record["type"] == "abort" for record in events)


# -- the driver's own files ----------------------------------------------------


def test_an_events_folder_that_cannot_be_created_stops_the_run(
    fault: FaultCase, driver: DriverRunner, copilot_sidecar: TestSidecar
) -> None:
    """Without a place for the audit trail the run must not go on silently.

    The base folder lies under a regular file, so creating it fails with
    ENOTDIR, for root as well (a chmod would not stop root).
    """
    fault.secrets.append(copilot_sidecar.token)
    blocker = fault.tmp_path / "not-a-folder"
    blocker.write_text("a regular file\n")
    env = driver.environment("hello", GH_AW_SESSION_STATE_BASE_DIR=str(blocker / "state"))
    ended = fault.run(env, bound_s=RUN_BOUND_S)
    fault.check(
        ended,
        exit_code=1,
        error_kind="events_unwritable",
        mentions=["GH_AW_SESSION_STATE_BASE_DIR", str(blocker)],
    )
    assert ended.stdout == ""
    assert not (blocker.parent / "state").exists()


def _with_file_size_limit(limit: int) -> list[str]:
    """The driver command, run with RLIMIT_FSIZE set to `limit` bytes.

    Set by a small Python that then execs the driver (same pid), rather than
    by `preexec_fn`, which is unsafe in this multithreaded test process.
    """
    program = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", program, *DRIVER_COMMAND]


@pytest.mark.parametrize("limit", [FSIZE_LIMIT_BYTES, 0], ids=["full-mid-run", "full-at-once"])
def test_a_full_file_system_keeps_whole_lines_and_says_so(
    limit: int, fault: FaultCase, driver: DriverRunner, copilot_sidecar: TestSidecar
) -> None:
    """A disk that fills up must not leave half a JSON line behind.

    What the driver does (events.py): the first failed write stops the file
    and is logged once as an `events.write_failed` error; the session goes
    on, and its summary says the audit trail is incomplete (exit 1,
    `events_unwritable`) while the answer is still printed. The file must
    end with the last whole line written before the failure.
    """
    fault.secrets.append(copilot_sidecar.token)
    # Under the limit the interpreter would cut the .pyc files it caches
    # (importlib renames a partly written file into place), breaking every
    # later run of the driver: no bytecode is written.
    env = driver.environment("hello", PYTHONDONTWRITEBYTECODE="1")
    process = fault.start(env, command=_with_file_size_limit(limit))
    ended = process.end(bound_s=RUN_BOUND_S)
    state_dir = driver.tmp_path / "state"
    events = fault.check(
        ended,
        exit_code=1,
        error_kind="events_unwritable",
        mentions=["events file is incomplete", "File too large"],
        state_dir=state_dir,
    )
    entries = parse_log(ended.stderr)
    failures = [entry for entry in entries if entry.get("event") == "events.write_failed"]
    assert len(failures) == 1, ended.stderr[-3000:]
    assert failures[0]["level"] == "error"
    assert "events.jsonl" in failures[0]["message"]
    assert "File too large" in failures[0]["message"]
    (events_file,) = state_dir.rglob("events.jsonl")
    assert events_file.stat().st_size <= limit
    if limit:
        # The first batch, written before the disk filled up, is kept.
        assert events, "nothing kept of what was written before the disk filled up"
        assert [event["type"] for event in events[:2]] == ["policy.in_force", "session.start"]
        (result_file,) = state_dir.rglob("result.json")
        assert json.loads(result_file.read_text())["exitCode"] == 1
    else:
        assert events == []
        assert any(entry.get("event") == "result.write_failed" for entry in entries)
    assert ended.stdout.strip() == "Hello from the scripted model."


# -- the prompt ----------------------------------------------------------------


def _replace_prompt(path: Path) -> None:
    other = path.with_name("other.md")
    other.write_text("REPLACEMENT prompt that must never be sent\n", encoding="utf-8")
    os.replace(other, path)


@pytest.mark.parametrize(
    "change", [Path.unlink, _replace_prompt], ids=["deleted", "replaced-by-rename"]
)
def test_the_prompt_read_at_start_is_the_one_sent(
    change: Callable[[Path], None],
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """The prompt is read once, with the configuration: a workflow step that
    removes or rewrites the file later cannot change (or break) the task."""
    fault.secrets.append(copilot_sidecar.token)
    prompt = "ORIGINAL prompt: list the files"
    env = driver.environment(prompt, COPILOT_SDK_LOG_LEVEL="info")
    process = fault.start(env)
    watch = StderrWatch(process)
    watch.wait_for_entry("connection.start")
    change(Path(env["GH_AW_PROMPT"]))
    ended = watch.ended(process.end(bound_s=RUN_BOUND_S))
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")
    (message,) = [record for record in events if record["type"] == "user.message"]
    assert message["data"] == {}, "the events file keeps no prompt text (as gh-aw's driver)"
    sent = json.dumps([request.body for request in scripted_model.chat_requests()])
    assert "ORIGINAL prompt" in sent
    assert "REPLACEMENT" not in sent
    assert ended.stdout.strip() == "Hello from the scripted model."


def test_a_10_mb_prompt_ends_with_a_clear_refusal(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    """A huge prompt (a log pasted into it, say) is a valid file: the driver
    sends it and the run ends by itself with exit 1, one short error line,
    and the prompt written nowhere (the events file's `user.message` is `{}`,
    as gh-aw's driver writes it), never echoed.

    Two outcomes are seen, depending on the machine's load: the runtime
    refuses the prompt as over the model's prompt budget (`session_error`),
    or it is busy with it for longer than the watchdog's silence limit
    (2.5 s) and the driver reports the sidecar as unresponsive
    (`sidecar_lost`). Either way the model never receives it.
    """
    fault.secrets.append(copilot_sidecar.token)
    prompt = ("all work and no play " * (BIG_PROMPT_BYTES // 21 + 1))[:BIG_PROMPT_BYTES]
    ended = fault.run(driver.environment(prompt), bound_s=BIG_PROMPT_BOUND_S)
    events = fault.check(ended, exit_code=1, state_dir=driver.tmp_path / "state")
    (error,) = [entry for entry in parse_log(ended.stderr) if entry.get("event") == "error"]
    expected = {"session_error": "prompt budget", "sidecar_lost": "stopped responding"}
    assert error["errorKind"] in expected, error
    assert expected[error["errorKind"]] in error["message"], error
    assert ended.stdout == ""
    assert len(ended.stderr) < 20_000, f"{len(ended.stderr)} characters on stderr"
    (message,) = [record for record in events if record["type"] == "user.message"]
    assert message["data"] == {}
    assert all(len(json.dumps(event)) < 100_000 for event in events), "no copy of the prompt"
    assert all(len(json.dumps(r.body)) < 1_000_000 for r in scripted_model.chat_requests())


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _bytes(data: bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(data)

    return write


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_bytes(b"fix the \xff\xfe bug\n"), "not valid UTF-8"),
        (_bytes(b"\x00"), "GH_AW_PROMPT"),
        (_bytes(b"a" * BIG_PROMPT_BYTES + b"\xff"), "not valid UTF-8"),
        (_fifo, "not a regular file"),
        (_directory, "a directory"),
    ],
    ids=["invalid-utf8", "single-nul", "10mb-invalid-utf8", "fifo", "directory"],
)
def test_an_unusable_prompt_is_a_configuration_error(
    make: Callable[[Path], None],
    words: str,
    fault: FaultCase,
    scripted_model: ScriptedModelServer,
) -> None:
    """A prompt that is not text (or not a file) is a mistake in the workflow:
    exit 2 at once with one short line, without blocking on a FIFO, without
    connecting, and without echoing any of its content."""
    env = _offline_environment(fault, scripted_model, "unused", "127.0.0.1:9")
    prompt_path = fault.tmp_path / "prompt.input"
    make(prompt_path)
    env["GH_AW_PROMPT"] = str(prompt_path)
    ended = fault.run(env, bound_s=CONFIG_BOUND_S)
    fault.check(ended, exit_code=2, mentions=["GH_AW_PROMPT", words, str(prompt_path)])
    assert ended.stdout == ""
    assert len(ended.stderr.splitlines()) == 1, ended.stderr
    assert len(ended.stderr) < CONFIG_OUTPUT_MAX_CHARS, f"{len(ended.stderr)} characters"
    assert not (fault.tmp_path / "state").exists()
