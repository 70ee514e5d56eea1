"""The helper inside the sandbox: the relay, and the helper run as a process (without
bubblewrap, on 127.0.0.1): credentials, its two doors, the CLI's status and signals."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from copilot_driver.harness.sandbox import inside
from copilot_driver.harness.sandbox.inside import relay

TIMEOUT = 5.0
LOOPBACK = "127.0.0.1"


def receive_exactly(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        assert chunk, f"closed after {len(data)} of {size} bytes"
        data += chunk
    return data


@dataclass
class Relayed:
    """Two ends joined by `relay` running on the inner ends of two socket pairs."""

    left: socket.socket
    right: socket.socket
    thread: threading.Thread

    def finished(self) -> bool:
        self.thread.join(TIMEOUT)
        return not self.thread.is_alive()


@pytest.fixture
def relayed() -> Iterator[Relayed]:
    left, left_inner = socket.socketpair()
    right_inner, right = socket.socketpair()
    for end in (left, right):
        end.settimeout(TIMEOUT)
    thread = threading.Thread(target=relay, args=(left_inner, right_inner), daemon=True)
    thread.start()
    yield Relayed(left, right, thread)
    left.close()  # the relay sees both ends finish, and returns before its sockets close
    right.close()
    thread.join(TIMEOUT)
    left_inner.close()
    right_inner.close()


def test_bytes_go_both_ways(relayed: Relayed) -> None:
    relayed.left.sendall(b"to the right")
    assert receive_exactly(relayed.right, 12) == b"to the right"
    relayed.right.sendall(b"to the left")
    assert receive_exactly(relayed.left, 11) == b"to the left"


def test_a_large_transfer_arrives_whole(relayed: Relayed) -> None:
    payload = os.urandom(3 * 1024 * 1024 + 17)
    sender = threading.Thread(target=relayed.left.sendall, args=(payload,), daemon=True)
    sender.start()
    assert receive_exactly(relayed.right, len(payload)) == payload
    sender.join(TIMEOUT)


def test_a_half_close_passes_through_and_the_other_way_stays_open(relayed: Relayed) -> None:
    relayed.left.sendall(b"last words")
    relayed.left.shutdown(socket.SHUT_WR)
    assert receive_exactly(relayed.right, 10) == b"last words"
    assert relayed.right.recv(1) == b""  # the end of the left side's data
    relayed.right.sendall(b"an answer")
    assert receive_exactly(relayed.left, 9) == b"an answer"
    assert relayed.thread.is_alive()
    relayed.right.shutdown(socket.SHUT_WR)
    assert relayed.left.recv(1) == b""
    assert relayed.finished()


def test_a_peer_gone_for_good_ends_the_relay(relayed: Relayed) -> None:
    relayed.right.close()
    assert relayed.left.recv(1) == b""  # its end, passed on
    relayed.left.sendall(b"into the void")
    assert relayed.finished()


# -- the helper as a process ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Helper:
    process: subprocess.Popen[str]
    argv: list[str]
    door: int
    """The public listening socket's port (the driver's way in)."""
    proxy_port: int
    control: socket.socket
    """The harness's end of the control pair: connections to the proxy port arrive here."""

    def line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def finish(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(TIMEOUT)


def start_helper(
    cli_code: str, *, credentials: dict[str, str] | None = None, sidecar_port: int = 1
) -> Helper:
    """inside.py running `python -c cli_code` as the CLI."""
    secrets_read, secrets_write = os.pipe()
    os.write(secrets_write, json.dumps(credentials or {}).encode())
    os.close(secrets_write)
    listener = socket.create_server((LOOPBACK, 0))
    control, control_inside = socket.socketpair()
    control.settimeout(TIMEOUT)
    proxy_port = free_port()
    fds = (secrets_read, listener.fileno(), control_inside.fileno())
    argv = [
        sys.executable, "-I", str(Path(inside.__file__).resolve()),
        "--secrets-fd", str(secrets_read),
        "--listen-fd", str(listener.fileno()),
        "--control-fd", str(control_inside.fileno()),
        "--sidecar-port", str(sidecar_port),
        "--proxy-port", str(proxy_port),
        "--", sys.executable, "-c", cli_code,
    ]  # fmt: skip
    process = subprocess.Popen(
        argv, pass_fds=fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    door: int = listener.getsockname()[1]
    os.close(secrets_read)
    listener.close()
    control_inside.close()
    return Helper(process, argv, door, proxy_port, control)


@pytest.fixture
def helpers() -> Iterator[list[Helper]]:
    started: list[Helper] = []
    yield started
    for helper in started:
        if helper.process.poll() is None:
            helper.process.kill()
            helper.process.wait(TIMEOUT)
        for stream in (helper.process.stdin, helper.process.stdout):
            if stream is not None:
                stream.close()
        helper.control.close()


READY_THEN_WAIT = "import sys; print('ready', flush=True); sys.stdin.read()"


def test_the_credentials_reach_the_cli_and_its_status_comes_back(helpers: list[Helper]) -> None:
    code = "import os, sys; print(os.environ.get('COPILOT_GITHUB_TOKEN'), flush=True); sys.exit(3)"
    helper = start_helper(code, credentials={"COPILOT_GITHUB_TOKEN": "canary-9e4b"})
    helpers.append(helper)
    assert helper.line() == "canary-9e4b"
    assert helper.finish() == 3
    assert not any("canary" in arg for arg in helper.argv)


def test_a_connection_to_the_proxy_port_is_handed_to_the_harness(helpers: list[Helper]) -> None:
    helper = start_helper(READY_THEN_WAIT)
    helpers.append(helper)
    assert helper.line() == "ready"  # the proxy port listens before the CLI starts
    with socket.create_connection((LOOPBACK, helper.proxy_port), timeout=TIMEOUT) as client:
        _, fds, _, _ = socket.recv_fds(helper.control, 1, 4)
        assert len(fds) == 1
        with socket.socket(fileno=fds[0]) as handed:
            assert handed.getpeername() == client.getsockname()
            client.sendall(b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
            handed.settimeout(TIMEOUT)
            assert receive_exactly(handed, 33) == b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n"
    assert helper.finish() == 0


def test_a_connection_to_the_door_is_relayed_to_the_cli(helpers: list[Helper]) -> None:
    with socket.create_server((LOOPBACK, 0)) as sidecar:
        sidecar.settimeout(TIMEOUT)
        helper = start_helper(READY_THEN_WAIT, sidecar_port=sidecar.getsockname()[1])
        helpers.append(helper)
        with socket.create_connection((LOOPBACK, helper.door), timeout=TIMEOUT) as driver:
            driver.sendall(b"hello sidecar")
            accepted, _ = sidecar.accept()
            with accepted:
                accepted.settimeout(TIMEOUT)
                assert receive_exactly(accepted, 13) == b"hello sidecar"
                accepted.sendall(b"hello driver")
                assert receive_exactly(driver, 12) == b"hello driver"
    assert helper.finish() == 0


def catches(pid: int, signum: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def test_sigterm_is_passed_on_and_the_cli_death_is_repeated(helpers: list[Helper]) -> None:
    helper = start_helper("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()")
    helpers.append(helper)
    cli = int(helper.line())
    # The helper sets its handler just after starting the CLI: wait until it has.
    deadline = time.monotonic() + TIMEOUT
    while not catches(helper.process.pid, signal.SIGTERM):
        assert time.monotonic() < deadline, "the helper never handled SIGTERM"
        time.sleep(0.01)
    helper.process.send_signal(signal.SIGTERM)
    assert helper.process.wait(TIMEOUT) == -signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(cli, 0)  # the CLI got the signal and is gone (reaped by the helper)


def test_a_cli_killed_outright_is_repeated_as_a_kill(helpers: list[Helper]) -> None:
    """SIGKILL has no handler to reset: the helper still dies the same way, so the harness
    reads the CLI's own death from bubblewrap's 128 + 9."""
    helper = start_helper("import os, sys; print(os.getpid(), flush=True); sys.stdin.read()")
    helpers.append(helper)
    os.kill(int(helper.line()), signal.SIGKILL)
    assert helper.process.wait(TIMEOUT) == -signal.SIGKILL


def test_home_links_to_the_hosts_files_become_private_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beside, home = tmp_path / "beside", tmp_path / "home"
    (beside / ".config").mkdir(parents=True)
    home.mkdir()
    (home / ".config").mkdir()
    (beside / ".gitconfig").write_text("[user]\n\tname = host\n")
    (beside / ".gitconfig").chmod(0o600)
    (beside / ".config" / "big").write_bytes(b"x" * 100)
    (beside / "other").write_text("not linked from home")
    for name in (".gitconfig", ".config/big"):
        (home / name).symlink_to(beside / name)
    (home / "other").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setattr(inside, "HOME_FILES_INSIDE", str(beside))
    monkeypatch.setattr(inside, "MAX_HOME_FILE_BYTES", 50)
    inside.private_home_files(str(home))
    copy = home / ".gitconfig"
    assert not copy.is_symlink()
    assert copy.read_text() == "[user]\n\tname = host\n"
    assert copy.stat().st_mode & 0o777 == 0o600
    assert (home / ".config" / "big").is_symlink()  # too large: stays the host's
    assert (home / "other").is_symlink()  # a link of the host's own
