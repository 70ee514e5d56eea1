"""The sidecar failing under a running driver: the driver must notice by itself.

Whatever the send timeout (the default 10 minutes here), a sidecar that is
missing, mute, hostile, dies or freezes ends the run within seconds, with the
documented exit code, one error line naming the sidecar, the events written
before the fault kept and valid, no secret anywhere and no process left.

Cases, and the bound each must meet (counted from the fault):

- killed mid-turn (SIGKILL) / frozen mid-turn (SIGSTOP): exit 1
  `sidecar_lost` within `NOTICE_BOUND_S` (5 s, the issue's bound).
- not listening (a free port): exit 1 `sidecar_unreachable` within
  `UNREACHABLE_BOUND_S` of the start (start-up is all it costs; the kind
  shows it was the refusal, not the handshake bound, that ended it).
- listening but never answering the handshake: exit 1
  `sidecar_unresponsive` within `NOTICE_BOUND_S` of the connection
  (driver.START_TIMEOUT_S is 4 s).
- a wrong connection token: exit 1 `auth_failed` within `RUN_BOUND_S`; neither
  token appears anywhere.
- killed right after `client.started` / `session.created` (before the turn):
  exit 1 `sidecar_lost` within `NOTICE_BOUND_S`.
- killed / frozen after the turn, while the driver disconnects the session:
  the answer arrived, so exit 0 with it on stdout, within
  `AFTER_TURN_BOUND_S` (the bounded cleanup steps that can wait on it).
- the connection cut in the middle of a frame, mid-turn: exit 1
  `sidecar_lost` within `NOTICE_BOUND_S`.
- malformed frames mid-turn (a bad `Content-Length`, a body that is not JSON
  or not UTF-8, a JSON scalar): the SDK drops the connection, so exit 1
  `sidecar_lost` within `NOTICE_BOUND_S`; a JSON object that is not JSON-RPC
  is ignored by the SDK and the turn completes (exit 0) within `RUN_BOUND_S`.

The SDK's framing (copilot/_jsonrpc.py, 1.0.27): each message is
`Content-Length: N\\r\\n\\r\\n` and N bytes of UTF-8 JSON; the reader thread
ends on a header that is not `Content-Length:`, an unparsable length, a
short body, a body that does not decode or parse, or a falsy message, and
then fails pending requests and marks the client disconnected (which the
driver's watchdog turns into `sidecar_lost`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.driver.lifecycle import DISCONNECT_TIMEOUT_S, START_TIMEOUT_S, STOP_TIMEOUT_S
from copilot_driver.testing import Reply, Rule, Script, ScriptedModelServer, TestSidecar
from copilot_driver.testing.faults import BoundedProcess, Ended, FaultCase, HungError
from copilot_driver.testing.fixtures import DriverRunner, parse_log
from copilot_driver.testing.rpc_proxy import RpcProxy, frame, read_frame

pytestmark = pytest.mark.e2e

NOTICE_BOUND_S = 5.0
"""The issue's bound for noticing a lost, frozen or mute sidecar."""
RUN_BOUND_S = 20.0
"""Noticing, plus start-up and the bounded cleanup steps."""
UNREACHABLE_BOUND_S = 15.0
"""A refused connection is immediate; this is interpreter and SDK start-up on
a loaded 2-CPU machine (importing the SDK alone took 3-6 s there; the SDK's
own TCP connect timeout, 10 s, must not be what ends it)."""
AFTER_TURN_BOUND_S = DISCONNECT_TIMEOUT_S + STOP_TIMEOUT_S + 2.0
"""After the turn only the cleanup can wait on the sidecar: the session
disconnect (3 s) and the client stop (3 s), plus 2 s to flush and exit."""
assert START_TIMEOUT_S < NOTICE_BOUND_S, "the handshake bound must fit the notice bound"

ANSWER = "the answer arrived"


# -- helpers -------------------------------------------------------------------


def _start_slow_turn(
    fault: FaultCase, driver: DriverRunner, model: ScriptedModelServer, **env: str
) -> BoundedProcess:
    model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    return fault.start(driver.environment("HANG until the sidecar goes away", **env))


def _wait_until(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _wait_for_the_model_call(model: ScriptedModelServer, timeout: float = 30) -> None:
    _wait_until(model.chat_requests, "the turn to reach the model", timeout)


def _address(uri: str) -> str:
    return uri.split("://")[-1]


def _check_outcome(
    fault: FaultCase, process: BoundedProcess, sidecar: TestSidecar, state_dir: Path
) -> None:
    ended = process.end(bound_s=RUN_BOUND_S)
    assert ended.seconds < NOTICE_BOUND_S, f"took {ended.seconds:.1f}s after the fault"
    fault.secrets.append(sidecar.token)
    events = fault.check(
        ended,
        exit_code=1,
        error_kind="sidecar_lost",
        mentions=[_address(sidecar.uri)],
        state_dir=state_dir,
    )
    # Every event written before the fault is there.
    assert any(record["type"] == "user.message" for record in events)


def _free_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, read, released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class StderrFollower:
    """Reads a running process's stderr line by line, keeping every line.

    `BoundedProcess.end` would lose what a test already consumed (and what
    the text wrapper buffered ahead), so a case that waits for a log entry
    mid-run ends the process through `end` here instead.
    """

    def __init__(self, process: BoundedProcess) -> None:
        self.process = process
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.process.stderr
        assert stream is not None
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def wait_for(self, event: str, timeout: float = 60) -> dict[str, Any]:
        """The first log entry named `event` (AssertionError if the log ends or times out)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for entry in parse_log("".join(self.lines)):
                    if entry.get("event") == event:
                        return entry
                left = deadline - time.monotonic()
                tail = "".join(self.lines)[-3000:]
                assert not self._eof, f"the log ended without {event!r}: {tail}"
                assert left > 0, f"no {event!r} log entry in time: {tail}"
                self._changed.wait(min(left, 0.5))

    def end(self, bound_s: float) -> Ended:
        """Like `BoundedProcess.end`, with every stderr line kept."""
        process = self.process
        since = process.fault_at if process.fault_at is not None else process.started
        try:
            process.process.wait(max(0.1, since + bound_s - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.process.kill()
            process.process.wait()
            self._reader.join(5)
            raise HungError(
                f"still running {bound_s:g}s after the fault; stderr tail: "
                f"{''.join(self.lines)[-2000:]}"
            ) from None
        seconds = time.monotonic() - since
        self._reader.join(5)
        assert process.process.stdout is not None
        stdout = process.process.stdout.read()
        return Ended(process.process.returncode, stdout, "".join(self.lines), seconds)


class SilentServer:
    """Accepts connections on 127.0.0.1 and reads them, but never writes a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.accepted = threading.Event()
        self.received = bytearray()
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self.listener.accept()
                self._connections.append(connection)
                self.accepted.set()
                threading.Thread(target=self._drain, args=(connection,), daemon=True).start()

    def _drain(self, connection: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := connection.recv(65536):
                self.received += chunk

    def close(self) -> None:
        for sock in [self.listener, *self._connections]:
            with contextlib.suppress(OSError):
                sock.close()


CUT = "cut the frame"
"""`FramingProxy.arm(CUT)`: send half the next frame, then close the connection."""
FLOOD = "flood"
"""`FramingProxy.arm(FLOOD)`: from the next frame on, write `flood_frame` to the
driver nonstop, between the sidecar's own frames, as fast as it reads."""


class FramingProxy(RpcProxy):
    """A 127.0.0.1 TCP proxy between the driver and the real sidecar that
    reads the SDK's framing in both directions, to fault it precisely.

    - sidecar -> driver: `arm(CUT)` sends the header and half the body of the
      next frame, then closes both connections; `arm(bytes)` writes those
      bytes (a malformed frame) just before the next frame. The watchdog's
      pings make a frame come at least every second. `fault_at` is when it
      happened.
    - driver -> sidecar: `hold(method)` keeps the first request of that method
      from the sidecar until `release()`; `held` is set when it arrived.
    - when either side closes, the other is closed too (a dead sidecar shows
      to the driver as it would without the proxy).
    """

    def __init__(self, upstream_port: int) -> None:
        self.fault_at: float | None = None
        self.flood_frame = b""
        self.flooded = 0
        self._to_driver_lock = threading.Lock()
        self._closed = threading.Event()
        self.held = threading.Event()
        self.requests: list[str] = []
        self._action: str | bytes | None = None
        self._hold: str | None = None
        self._release = threading.Event()
        super().__init__(upstream_port)

    def arm(self, action: str | bytes) -> None:
        with self._lock:
            self._action = action

    def hold(self, method: str) -> None:
        self._hold = method

    def release(self) -> None:
        self._release.set()

    def wait_for_fault(self, timeout: float = 10) -> float:
        _wait_until(lambda: self.fault_at is not None, "the proxy to inject the fault", timeout)
        assert self.fault_at is not None
        return self.fault_at

    def close(self) -> None:
        self._closed.set()
        self._release.set()
        super().close()

    def _send_to_driver(self, downstream: socket.socket, data: bytes) -> None:
        with self._to_driver_lock:  # whole frames: the flood never splits the sidecar's
            downstream.sendall(data)

    def _flood(self, downstream: socket.socket) -> None:
        batch = self.flood_frame * 64
        with contextlib.suppress(OSError):
            while not self._closed.is_set():
                self._send_to_driver(downstream, batch)
                self.flooded += 64

    def _to_driver(self, downstream: socket.socket, upstream: socket.socket) -> None:
        reader = upstream.makefile("rb")
        try:
            while (message := read_frame(reader)) is not None:
                header, body = message
                with self._lock:
                    action, self._action = self._action, None
                if action == CUT:
                    downstream.sendall(header + body[: len(body) // 2])
                    self.fault_at = time.monotonic()
                    return
                if action == FLOOD:
                    threading.Thread(target=self._flood, args=(downstream,), daemon=True).start()
                    self.fault_at = time.monotonic()
                if isinstance(action, bytes):
                    downstream.sendall(action)
                    self.fault_at = time.monotonic()
                self._send_to_driver(downstream, header + body)
        except OSError:
            pass
        finally:
            _close_both(downstream, upstream)

    def _to_sidecar(self, downstream: socket.socket, upstream: socket.socket) -> None:
        reader = downstream.makefile("rb")
        try:
            while (message := read_frame(reader)) is not None:
                header, body = message
                try:
                    method = json.loads(body).get("method")
                except (ValueError, AttributeError):  # not ours to judge: pass it on
                    method = None
                if method:
                    self.requests.append(method)
                if self._hold is not None and method == self._hold and not self.held.is_set():
                    self.held.set()
                    self._release.wait(60)
                upstream.sendall(header + body)
        except OSError:
            pass
        finally:
            _close_both(downstream, upstream)


def _close_both(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()


@pytest.fixture
def proxy(copilot_sidecar: TestSidecar) -> Iterator[FramingProxy]:
    running = FramingProxy(copilot_sidecar.port)
    try:
        yield running
    finally:
        running.close()


# -- mid-turn: killed, frozen --------------------------------------------------


def test_a_sidecar_killed_mid_turn_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    process = _start_slow_turn(fault, driver, scripted_model)
    _wait_for_the_model_call(scripted_model)
    os.kill(copilot_sidecar.process.process.pid, signal.SIGKILL)
    process.mark_fault()
    _check_outcome(fault, process, copilot_sidecar, driver.tmp_path / "state")


def test_a_frozen_sidecar_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
) -> None:
    pid = copilot_sidecar.process.process.pid
    process = _start_slow_turn(fault, driver, scripted_model)
    try:
        _wait_for_the_model_call(scripted_model)
        os.kill(pid, signal.SIGSTOP)
        process.mark_fault()
        _check_outcome(fault, process, copilot_sidecar, driver.tmp_path / "state")
    finally:
        os.kill(pid, signal.SIGCONT)


# -- before the session: nothing there, a mute listener, a wrong token -----------


def test_a_sidecar_that_is_not_listening_fails_at_once(
    fault: FaultCase, tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """Nothing listens on the port: a refused connection, reported with the address."""
    address = f"127.0.0.1:{_free_port()}"
    runner = DriverRunner(tmp_path, None, scripted_model)
    env = runner.environment(
        "HELLO", COPILOT_SDK_URI=address, COPILOT_CONNECTION_TOKEN=os.urandom(32).hex()
    )
    fault.secrets.append(env["COPILOT_CONNECTION_TOKEN"])

    ended = fault.run(env, bound_s=UNREACHABLE_BOUND_S)

    fault.check(ended, exit_code=1, error_kind="sidecar_unreachable", mentions=[address])
    assert ended.stdout == ""
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_a_sidecar_that_never_answers_the_handshake_is_given_up(
    fault: FaultCase, tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """It accepts and reads, and never writes: the `connect` handshake is bounded."""
    server = SilentServer()
    try:
        address = f"127.0.0.1:{server.port}"
        runner = DriverRunner(tmp_path, None, scripted_model)
        env = runner.environment(
            "HELLO", COPILOT_SDK_URI=address, COPILOT_CONNECTION_TOKEN=os.urandom(32).hex()
        )
        fault.secrets.append(env["COPILOT_CONNECTION_TOKEN"])
        process = fault.start(env)
        assert server.accepted.wait(30), "the driver never connected"
        process.mark_fault()  # from here on, only the handshake's bound counts

        ended = process.end(bound_s=RUN_BOUND_S)

        assert ended.seconds < NOTICE_BOUND_S, f"took {ended.seconds:.1f}s after connecting"
        fault.check(ended, exit_code=1, error_kind="sidecar_unresponsive", mentions=[address])
        assert b'"method":"connect"' in bytes(server.received).replace(b" ", b"")
    finally:
        server.close()


def test_a_wrong_token_is_rejected_clearly_and_neither_token_leaks(
    fault: FaultCase, driver: DriverRunner, copilot_sidecar: TestSidecar
) -> None:
    wrong = "f" * 8 + os.urandom(28).hex()
    fault.secrets += [copilot_sidecar.token, wrong]

    ended = fault.run(
        driver.environment("HELLO", COPILOT_CONNECTION_TOKEN=wrong), bound_s=RUN_BOUND_S
    )

    fault.check(
        ended,
        exit_code=1,
        error_kind="auth_failed",
        mentions=[_address(copilot_sidecar.uri), "COPILOT_CONNECTION_TOKEN"],
    )
    assert ended.stdout == ""


# -- before the turn: killed as the session starts --------------------------------


@pytest.mark.parametrize("after", ["client.started", "session.created"])
def test_a_sidecar_killed_before_the_turn_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    after: str,
) -> None:
    """Killed as soon as the driver logs `after`: session creation or the
    prompt's dispatch is then under way, on a dead connection."""
    process = _start_slow_turn(fault, driver, scripted_model, COPILOT_SDK_LOG_LEVEL="info")
    log = StderrFollower(process)
    log.wait_for(after)
    os.kill(copilot_sidecar.process.process.pid, signal.SIGKILL)
    process.mark_fault()

    ended = log.end(bound_s=RUN_BOUND_S)

    assert ended.seconds < NOTICE_BOUND_S, f"took {ended.seconds:.1f}s after the fault"
    fault.secrets.append(copilot_sidecar.token)
    fault.check(
        ended,
        exit_code=1,
        error_kind="sidecar_lost",
        mentions=[_address(copilot_sidecar.uri)],
        state_dir=driver.tmp_path / "state",
    )
    # The lines read before the fault are part of what is checked.
    events = [entry["event"] for entry in parse_log(ended.stderr)]
    assert events[:3] == ["connection.start", "permissions.config", "client.started"]


# -- after the turn: the answer is in, the driver is disconnecting -------------------


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "frozen"])
def test_a_sidecar_lost_after_the_turn_still_delivers_the_answer(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
    signum: int,
) -> None:
    """The proxy holds the driver's `session.detach` (its first cleanup request,
    sent only once the answer arrived) until the sidecar is killed or frozen:
    the fault lands exactly after the turn, every time."""
    scripted_model.script = Script(rules=(Rule("ASK", (Reply(text=ANSWER),)),))
    proxy.hold("session.detach")
    process = fault.start(driver.environment("ASK for the answer", COPILOT_SDK_URI=proxy.address))
    pid = copilot_sidecar.process.process.pid
    try:
        assert proxy.held.wait(60), f"no session.detach; requests seen: {proxy.requests}"
        os.kill(pid, signum)
        process.mark_fault()
        proxy.release()

        ended = process.end(bound_s=RUN_BOUND_S)
    finally:
        if signum == signal.SIGSTOP:
            os.kill(pid, signal.SIGCONT)

    assert ended.seconds < AFTER_TURN_BOUND_S, f"took {ended.seconds:.1f}s after the fault"
    fault.secrets.append(copilot_sidecar.token)
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")
    assert ended.stdout == f"{ANSWER}\n"
    entries = parse_log(ended.stderr)
    assert entries[-1]["event"] == "session.completed", entries[-1]
    timeouts = [entry["message"] for entry in entries if entry["event"] == "cleanup.timeout"]
    if signum == signal.SIGSTOP:  # a frozen sidecar costs the disconnect's bound, no more
        assert timeouts == [f"could not disconnect the session within {DISCONNECT_TIMEOUT_S:g}s"]
    else:  # a dead one fails the disconnect at once
        assert timeouts == []
    assert [record["type"] for record in events].count("assistant.message") == 1
    (result,) = (driver.tmp_path / "state").glob("*/result.json")
    assert json.loads(result.read_text())["exitCode"] == 0


# -- the wire: a frame cut in half, malformed frames ------------------------------


def test_a_connection_cut_in_the_middle_of_a_frame_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
) -> None:
    scripted_model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    process = fault.start(driver.environment("HANG mid-frame", COPILOT_SDK_URI=proxy.address))
    _wait_for_the_model_call(scripted_model)
    proxy.arm(CUT)
    process.fault_at = proxy.wait_for_fault()

    _check_wire_fault(
        fault,
        process,
        copilot_sidecar,
        proxy,
        driver.tmp_path / "state",
        cause=CLOSED,
    )


UNREADABLE = "sent a message the SDK could not read"
CLOSED = "its connection was closed"
MALFORMED = {
    "content-length-not-a-number": (b"Content-Length: twelve\r\n\r\n{}", UNREADABLE),
    # The SDK takes a first header line other than Content-Length for the end
    # of the stream, without a word: all the driver can say is "closed".
    "no-content-length-header": (
        b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0"}',
        CLOSED,
    ),
    "body-not-json": (frame(b"this is not JSON at all"), UNREADABLE),
    "body-not-utf8": (frame(b'{"jsonrpc": "2.0", "method": "\xff\xfe"}'), UNREADABLE),
    "json-scalar-not-jsonrpc": (frame(b"42"), UNREADABLE),
}


@pytest.mark.parametrize(("garbage", "cause"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_frame_is_noticed_within_seconds(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
    garbage: bytes,
    cause: str,
) -> None:
    scripted_model.script = Script(rules=(Rule("HANG", (Reply(text="late", delay_s=300),)),))
    process = fault.start(driver.environment("HANG on garbage", COPILOT_SDK_URI=proxy.address))
    _wait_for_the_model_call(scripted_model)
    proxy.arm(garbage)
    process.fault_at = proxy.wait_for_fault()

    _check_wire_fault(
        fault,
        process,
        copilot_sidecar,
        proxy,
        driver.tmp_path / "state",
        cause=cause,
    )


def test_a_json_object_that_is_not_jsonrpc_is_ignored_and_the_turn_completes(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
) -> None:
    """Neither a request, a response nor a notification: the SDK skips it
    (as JSON-RPC peers usually do), so the turn goes on and ends normally."""
    scripted_model.script = Script(rules=(Rule("ASK", (Reply(text=ANSWER, delay_s=2),)),))
    process = fault.start(driver.environment("ASK through noise", COPILOT_SDK_URI=proxy.address))
    _wait_for_the_model_call(scripted_model)
    proxy.arm(frame(b'{"hello": "world", "params": [1, 2, 3]}'))
    process.fault_at = proxy.wait_for_fault()

    ended = process.end(bound_s=RUN_BOUND_S)

    fault.secrets.append(copilot_sidecar.token)
    events = fault.check(ended, exit_code=0, state_dir=driver.tmp_path / "state")
    assert ended.stdout == f"{ANSWER}\n"
    assert any(record["type"] == "assistant.message" for record in events)


def _check_wire_fault(
    fault: FaultCase,
    process: BoundedProcess,
    sidecar: TestSidecar,
    proxy: FramingProxy,
    state_dir: Path,
    *,
    cause: str,
    also: Sequence[str] = (),
) -> Ended:
    ended = process.end(bound_s=RUN_BOUND_S)
    assert ended.seconds < NOTICE_BOUND_S, f"took {ended.seconds:.1f}s after the fault"
    fault.secrets.append(sidecar.token)
    events = fault.check(
        ended,
        exit_code=1,
        error_kind="sidecar_lost",
        mentions=[proxy.address, cause, *also],
        state_dir=state_dir,
    )
    assert any(record["type"] == "user.message" for record in events)
    return ended


# -- a flood of notifications --------------------------------------------------

FLOOD_MEMORY_MIB = 64
"""How much the driver's resident memory may grow while it is flooded (it was
2.1 GB after 90 s when every frame queued a callback and a traceback)."""
FLOOD_LOG_LINES = 40
"""A run's whole log is a few lines; a traceback per frame would be thousands."""
FLOOD_SEND_TIMEOUT_MS = 1500
"""Short enough to come before the watchdog could give up on the sidecar (2.5 s
without an answer): its answers to pings wait behind the flood in the socket
buffers, so a longer timeout would make the outcome depend on the machine."""


class ResidentMemory:
    """Samples a process's resident set size (VmRSS) every 20 ms until it ends."""

    def __init__(self, pid: int) -> None:
        self._status = Path(f"/proc/{pid}/status")
        self.samples_kib: list[int] = []
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while True:
                for line in self._status.read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        self.samples_kib.append(int(line.split()[1]))
                time.sleep(0.02)

    def growth_mib(self, since_kib: int) -> float:
        self._thread.join(5)
        return (max(self.samples_kib) - since_kib) / 1024

    def now_kib(self) -> int:
        _wait_until(lambda: self.samples_kib, "a memory sample", 10)
        return self.samples_kib[-1]


def _flood(
    fault: FaultCase,
    driver: DriverRunner,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
    notification: dict[str, Any],
    **env: str,
) -> tuple[BoundedProcess, ResidentMemory, int]:
    """Start a turn that waits on the model, then flood the driver with `notification`."""
    process = _start_slow_turn(fault, driver, scripted_model, COPILOT_SDK_URI=proxy.address, **env)
    memory = ResidentMemory(process.pid)
    _wait_for_the_model_call(scripted_model)
    before_kib = memory.now_kib()
    proxy.flood_frame = frame(json.dumps(notification).encode())
    proxy.arm(FLOOD)
    process.fault_at = proxy.wait_for_fault()
    return process, memory, before_kib


def _check_flood_log(ended: Ended, proxy: FramingProxy) -> None:
    assert proxy.flooded > 1000, f"only {proxy.flooded} notifications went out"
    assert "Traceback" not in ended.stderr, ended.stderr[-2000:]
    lines = ended.stderr.splitlines()
    assert len(lines) <= FLOOD_LOG_LINES, f"{len(lines)} log lines: {ended.stderr[-2000:]}"


UNREADABLE_NOTIFICATIONS = {
    # The SDK's general handler raises on it, as an event-loop callback.
    "session-event-without-session-id": (
        {"jsonrpc": "2.0", "method": "session.event", "params": {"event": {}}},
        "session.event: KeyError: 'sessionId'",
    ),
    # A method-specific SDK handler raises on it, in a task the SDK logs.
    "telemetry-without-fields": (
        {"jsonrpc": "2.0", "method": "gitHubTelemetry.event", "params": {}},
        "a notification: ",
    ),
}


@pytest.mark.parametrize(
    ("notification", "named"),
    UNREADABLE_NOTIFICATIONS.values(),
    ids=UNREADABLE_NOTIFICATIONS.keys(),
)
def test_a_flood_of_notifications_the_sdk_cannot_read_ends_the_run_with_one_line(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
    notification: dict[str, Any],
    named: str,
) -> None:
    """Notifications the SDK cannot handle, nonstop: the driver gives the sidecar
    up as broken within seconds, with one warning and one error line that say
    why (not a traceback per message), and its memory stays flat meanwhile."""
    process, memory, before_kib = _flood(fault, driver, scripted_model, proxy, notification)

    ended = _check_wire_fault(
        fault,
        process,
        copilot_sidecar,
        proxy,
        driver.tmp_path / "state",
        cause="sent 100 notifications the SDK could not read",
        also=[named],
    )
    _check_flood_log(ended, proxy)
    warnings = [
        entry
        for entry in parse_log(ended.stderr)
        if entry.get("event") == "sidecar.unreadable_notification"
    ]
    assert len(warnings) == 1, ended.stderr
    assert named in warnings[0]["message"]
    assert memory.growth_mib(before_kib) < FLOOD_MEMORY_MIB


def test_a_flood_of_wellformed_notifications_still_ends_at_the_send_timeout(
    fault: FaultCase,
    driver: DriverRunner,
    copilot_sidecar: TestSidecar,
    scripted_model: ScriptedModelServer,
    proxy: FramingProxy,
) -> None:
    """Valid session events for a session the driver does not have: the SDK drops
    each one; the flood must not starve the driver's own deadline (the send
    timeout) nor fill its memory while it waits."""
    stranger = {
        "jsonrpc": "2.0",
        "method": "session.event",
        "params": {
            "sessionId": "not-this-session",
            "event": {
                "id": "00000000-0000-4000-8000-000000000001",
                "type": "session.idle",
                "timestamp": "2026-01-01T00:00:00Z",
                "parentId": None,
                "data": {},
            },
        },
    }
    process, memory, before_kib = _flood(
        fault,
        driver,
        scripted_model,
        proxy,
        stranger,
        COPILOT_SDK_SEND_TIMEOUT_MS=str(FLOOD_SEND_TIMEOUT_MS),
    )

    ended = process.end(bound_s=RUN_BOUND_S)

    fault.secrets.append(copilot_sidecar.token)
    fault.check(
        ended,
        exit_code=124,
        error_kind="send_timeout",
        state_dir=driver.tmp_path / "state",
    )
    _check_flood_log(ended, proxy)
    assert memory.growth_mib(before_kib) < FLOOD_MEMORY_MIB
