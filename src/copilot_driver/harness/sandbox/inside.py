"""The sandbox's first process: the sidecar's parent and its two doors.

Run by bubblewrap as `python -I inside.py --secrets-fd N --listen-fd N
--control-fd N --sidecar-port P --proxy-port X [--stdout-fd N --stderr-fd N]
-- COPILOT ARGS...`, with the standard library only (nothing else may be
importable in there). It

1. makes itself non-dumpable, so no tool can read its memory or environment,
   and takes the harness's output pipes (`--stdout-fd`, `--stderr-fd`) as its
   and the CLI's stdout and stderr: bubblewrap's own init, pid 1 inside and
   open to tools through /proc, has only /dev/null (it closes every other
   descriptor it inherits), so no tool can write into what the harness reads;
2. reads the sidecar's credentials from a pipe (never an argument or its own
   environment) and starts the CLI with them in the CLI's environment only;
   the CLI binary is an execute-only copy, so the kernel makes the CLI
   non-dumpable too and `/proc/<pid>/environ` stays closed to its tools;
3. the door in: accepts the driver's connections on a listening socket made
   by the harness in the host's network namespace and relays each to the
   sidecar on the sandbox's loopback;
4. the door out: listens on the sandbox's loopback (`HTTP(S)_PROXY`) and hands
   each connection, as a descriptor, to the harness's egress proxy;
5. exits with the CLI's status; SIGTERM and SIGINT are passed on to the CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
HOME_FILES_INSIDE = "/run/copilot-driver/home"
"""Where the host's files of $HOME's writable folders are bound read-only; $HOME holds
a link to each, which `private_home_files` turns into a private, writable copy."""
MAX_HOME_FILE_BYTES = 1 << 20
"""A larger file of $HOME stays a link to the host's, read-only."""
CONNECT_PATIENCE_S = 600.0
"""How long a driver's connection waits for the sidecar to listen inside."""


def main(argv: list[str]) -> int:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="copilot-driver-sandbox")
    for name in ("--secrets-fd", "--listen-fd", "--control-fd", "--sidecar-port", "--proxy-port"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--stdout-fd", "--stderr-fd"):
        parser.add_argument(name, type=int)
    options = parser.parse_args(argv[:split])
    # The harness's pipes become this helper's (and so the CLI's) stdout and stderr; being
    # non-dumpable, no tool can open them through /proc/<pid>/fd.
    for given, standard in ((options.stdout_fd, 1), (options.stderr_fd, 2)):
        if given is not None:
            os.dup2(given, standard)
            os.close(given)
    command = argv[split + 1 :]
    private_home_files(os.environ.get("HOME", ""))
    with os.fdopen(options.secrets_fd, "rb") as pipe:
        credentials = json.loads(pipe.read() or b"{}")
    control = socket.socket(fileno=options.control_fd)
    listener = socket.socket(fileno=options.listen_fd)
    proxy = socket.create_server(("127.0.0.1", options.proxy_port))  # listening before the CLI
    # The PID namespace ends every process with the sandbox; the parent-death signal is
    # the CLI's own guarantee should the helper die first. The CLI starts before any
    # thread does, so nothing holds a lock across the fork.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    sidecar = subprocess.Popen(
        command,
        env={**os.environ, **credentials},
        preexec_fn=lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0),
    )
    threading.Thread(target=_hand_out, args=(proxy, control), daemon=True).start()
    threading.Thread(target=_let_in, args=(listener, options.sidecar_port), daemon=True).start()
    del credentials
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, _frame: sidecar.send_signal(number))
    status = sidecar.wait()
    if status < 0:  # die the same way, so bubblewrap reports 128 + N as for the CLI
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


def private_home_files(home: str) -> None:
    """Each link in $HOME to a host file under HOME_FILES_INSIDE becomes a copy of it:
    $HOME is private and writable, so a tool may rewrite `~/.gitconfig` (git writes
    through a link, to the read-only host file, so a link would not do)."""
    if not home.startswith("/"):
        return
    for folder, _, names in os.walk(HOME_FILES_INSIDE):
        for name in names:
            source = os.path.join(folder, name)
            target = os.path.join(home, os.path.relpath(source, HOME_FILES_INSIDE))
            with contextlib.suppress(OSError):
                found = os.stat(source)
                if os.readlink(target) != source or not stat.S_ISREG(found.st_mode):
                    continue
                if found.st_size > MAX_HOME_FILE_BYTES:
                    continue
                copy = f"{target}.copilot-driver-copy"
                with open(source, "rb") as original, open(copy, "wb") as private:
                    private.write(original.read())
                os.chmod(copy, found.st_mode & 0o7777)
                os.replace(copy, target)


def _hand_out(proxy: socket.socket, control: socket.socket) -> None:
    """Every connection to the sandbox's proxy port goes to the harness's egress proxy."""
    while True:
        connection, _ = proxy.accept()
        with connection:
            try:
                socket.send_fds(control, [b"c"], [connection.fileno()])
            except OSError:
                return  # the harness is gone


def _let_in(listener: socket.socket, port: int) -> None:
    """Every connection the driver makes is relayed to the sidecar inside."""
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay_to_sidecar, args=(client, port), daemon=True).start()


def _relay_to_sidecar(client: socket.socket, port: int) -> None:
    with client:
        deadline = time.monotonic() + CONNECT_PATIENCE_S
        while True:
            try:
                sidecar = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
        with sidecar:
            for end in (client, sidecar):
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            relay(client, sidecar)


def relay(one: socket.socket, other: socket.socket) -> None:
    """Copy both ways until both sides have finished sending (the egress proxy uses it too)."""
    peers = {one: other, other: one}
    open_ends = [one, other]
    while open_ends:
        readable, _, _ = select.select(open_ends, [], [])
        for source in readable:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if data:
                try:
                    peers[source].sendall(data)
                    continue
                except OSError:
                    return
            open_ends.remove(source)
            with contextlib.suppress(OSError):
                peers[source].shutdown(socket.SHUT_WR)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
