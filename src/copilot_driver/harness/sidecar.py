"""The Copilot CLI in server mode: find the binary, start it, know when it is ready.

A sidecar is `copilot --headless --no-auto-update [LOGIN] --port N` with the
per-run COPILOT_CONNECTION_TOKEN in its environment; LOGIN says how it signs
in to GitHub (`--no-auto-login` unless told otherwise: no GitHub sign-in at
all, as a bring-your-own-model provider needs; the harness names the token's
variable with `--auth-token-env`, see `environment.login_arguments`). It prints
`CLI server listening on port N` when ready and binds 127.0.0.1. It runs in
its own process group so stopping it (SIGTERM, then SIGKILL after a grace
period) also stops anything it spawned.

Both output streams are drained by threads from the start (a full pipe would
stall the CLI), bounded per line and in total (`bounded_lines`), kept as a
short tail for error messages, and optionally copied to a log file with the
token masked.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TypedDict, Unpack

from copilot_driver import processes
from copilot_driver.compatibility import RECOMMENDED_CLI_VERSION
from copilot_driver.env_commands import COPILOT_CLI_PATH
from copilot_driver.errors import CopilotDriverError
from copilot_driver.harness.bounded_lines import MAX_LINE_BYTES, MAX_LOG_BYTES, bounded_lines
from copilot_driver.harness.sandbox.launch import Sandbox
from copilot_driver.redaction import Redactor

PROVISIONED_CLI = Path(".cache/copilot-cli/node_modules/@github/copilot-linux-x64/copilot")
"""Where `make setup` puts the pinned CLI, relative to the repository root."""

_INSTALL_ADVICE = (
    f"install the tested Copilot CLI (`npm install -g @github/copilot@{RECOMMENDED_CLI_VERSION}`)"
)
_BINARY_IN_FOLDER = ("copilot", "bin/copilot")
"""Where a folder given instead of the binary may hold it (an npm prefix has bin/)."""
_READY_LINE = re.compile(r"listening on port (\d+)")
_TAIL_LINES = 40


class SidecarError(CopilotDriverError, RuntimeError):
    """The sidecar could not be found or did not become ready."""


class SidecarStartStoppedError(SidecarError):
    """A stop was requested (a signal) while the sidecar was starting."""


def locate_copilot_cli(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The copilot binary: `explicit`, else COPILOT_CLI_PATH, else the one
    `make setup` provisioned, else `copilot` on PATH. Raises SidecarError, naming
    what is wrong with a path the user gave, or what to install."""
    env = os.environ if env is None else env
    # A path the user named must be right: never silently run another binary.
    for given, named in (
        (f"--copilot {explicit}", explicit),
        (
            f"{COPILOT_CLI_PATH.name}={env.get(COPILOT_CLI_PATH.name)}",
            env.get(COPILOT_CLI_PATH.name),
        ),
    ):
        if named:
            problem = _binary_problem(Path(named))
            if problem:
                raise SidecarError(f"{given} {problem}")
            return Path(named)
    provisioned = _provisioned_cli()
    if provisioned is not None and not _binary_problem(provisioned):
        return provisioned
    on_path = shutil.which("copilot", path=env.get("PATH"))
    if on_path:
        return Path(on_path)
    raise SidecarError(_no_cli_found(provisioned))


def _binary_problem(path: Path) -> str:
    """What stops `path` from running as the copilot binary, with the fix; "" if nothing."""
    if path.is_dir():
        inside = next((found for found in _BINARY_IN_FOLDER if _is_executable(path / found)), None)
        if inside is not None:
            return f"is a directory: use the binary inside it, {path / inside}"
        return "is a directory: give the path of the `copilot` binary itself"
    if not path.exists():
        return (
            f"does not exist: correct the path, or {_INSTALL_ADVICE} and give the path of "
            "its `copilot`"
        )
    if not path.is_file():
        return "is not a regular file: give the path of the `copilot` binary"
    if not os.access(path, os.X_OK):
        return f"is not executable: make it executable (`chmod +x {path}`)"
    return ""


def _provisioned_cli() -> Path | None:
    """Where `make setup` puts the binary in this package's source checkout (an editable
    install), or None when the package runs from anywhere else (an installed wheel)."""
    for root in Path(__file__).resolve().parents:
        candidate = root / PROVISIONED_CLI
        if candidate.exists() or _is_this_project(root / "pyproject.toml"):
            return candidate
    return None


def _is_this_project(pyproject: Path) -> bool:
    """`pyproject` is this package's own, not that of a project it is installed into."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(r'^name\s*=\s*"copilot-driver"\s*$', text, re.MULTILINE) is not None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _no_cli_found(provisioned: Path | None) -> str:
    """Every place looked in, then what to install; `make setup` only in a source checkout."""
    tried = ["no --copilot", f"no {COPILOT_CLI_PATH.name}", "no `copilot` on PATH"]
    fix = (
        f"{_INSTALL_ADVICE}, or give the path of a `copilot` binary with --copilot PATH or "
        f"{COPILOT_CLI_PATH.name}"
    )
    if provisioned is not None:
        tried.insert(2, f"nothing runnable at {provisioned}")
        fix += "; in this source checkout, `make setup` provisions it there"
    return f"no Copilot CLI found ({', '.join(tried)}): {fix}"


class LaunchOptions(TypedDict, total=False):
    """`Sidecar.launch`'s optional settings (its signature holds the defaults)."""

    port: int
    extra_args: Sequence[str]
    login_args: Sequence[str]
    log_level: str
    log_path: Path | None
    die_with_parent: bool
    credentials: Mapping[str, str]
    sandbox: Sandbox | None


class Sidecar:
    """A running server-mode Copilot CLI. Use `Sidecar.start(...)`."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        redactor: Redactor,
        log_file: IO[str] | None,
        outputs: tuple[IO[bytes], IO[bytes]] | None = None,
    ) -> None:
        self.process = process
        self.port: int | None = None
        """The port the CLI said it listens on (inside the sandbox, when there is one)."""
        self.public_port: int | None = None
        """Where a driver connects when that differs from `port` (the sandbox's door)."""
        self._redactor = redactor
        self._log_file = log_file
        self._tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self._lock = threading.Lock()
        self._ready = threading.Event()
        stdout, stderr = outputs or (process.stdout, process.stderr)
        self._readers = [
            threading.Thread(target=self._drain, args=(stream, name), daemon=True)
            for stream, name in ((stdout, "stdout"), (stderr, "stderr"))
            if stream is not None
        ]
        for reader in self._readers:
            reader.start()

    @classmethod
    def start(
        cls,
        binary: str | os.PathLike[str],
        *,
        token: str,
        env: Mapping[str, str],
        ready_timeout: float = 30.0,
        **options: Unpack[LaunchOptions],
    ) -> Sidecar:
        """Start the CLI in server mode and wait until it listens.

        `env` is the sidecar's whole environment (the token is added);
        raises SidecarError, quoting the CLI's last output, when it exits or
        does not listen within `ready_timeout` seconds. `options` are `launch`'s.
        """
        sidecar = cls.launch(binary, token=token, env=env, **options)
        sidecar.wait_ready(ready_timeout)
        return sidecar

    @classmethod
    def launch(
        cls,
        binary: str | os.PathLike[str],
        *,
        token: str,
        env: Mapping[str, str],
        port: int = 0,
        extra_args: Sequence[str] = (),
        login_args: Sequence[str] = ("--no-auto-login",),
        log_level: str = "info",
        log_path: Path | None = None,
        die_with_parent: bool = False,
        credentials: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
    ) -> Sidecar:
        """Start the CLI in server mode without waiting for it (see `wait_ready`).

        `credentials` join the token in the CLI's environment. With a `sandbox`
        the CLI runs inside it, and they reach the CLI through a pipe: see
        `copilot_driver.harness.sandbox`."""
        argv = [
            str(binary),
            "--headless",
            "--no-auto-update",
            *login_args,
            "--log-level",
            log_level,
            *extra_args,
            "--port",
            str(port),
        ]
        secrets = {**(credentials or {}), "COPILOT_CONNECTION_TOKEN": token}
        wrapped = None
        outputs: tuple[IO[bytes], IO[bytes]] | None = None
        output_pipes: int | None = subprocess.PIPE
        if sandbox is not None:
            # The CLI's output reaches the harness through pipes only the helper holds:
            # bubblewrap's own process (pid 1 inside, which tools can see) gets /dev/null.
            out_read, out_write = os.pipe()
            err_read, err_write = os.pipe()
            outputs = (os.fdopen(out_read, "rb", 0), os.fdopen(err_read, "rb", 0))
            wrapped = sandbox.command(
                argv, env, secrets, port=port, output_fds=(out_write, err_write)
            )
            argv, full_env, pass_fds = wrapped.argv, wrapped.env, wrapped.pass_fds
            output_pipes = subprocess.DEVNULL
        else:
            full_env, pass_fds = {**env, **secrets}, ()
        log_file = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        try:
            process = subprocess.Popen(
                argv,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=output_pipes,
                stderr=output_pipes,
                start_new_session=True,
                pass_fds=pass_fds,
                preexec_fn=processes.die_with_parent if die_with_parent else None,
            )
        except OSError as error:
            if log_file is not None:
                log_file.close()
            for stream in outputs or ():
                stream.close()
            raise SidecarError(f"cannot start the Copilot CLI {binary}: {error}") from error
        finally:
            if wrapped is not None:
                wrapped.started()
        sidecar = cls(process, Redactor(list(secrets.values())), log_file, outputs)
        if wrapped is not None:
            sidecar.public_port = wrapped.public_port
        return sidecar

    def wait_ready(self, timeout: float, *, stop_requested: Callable[[], bool] = bool) -> None:
        """Return once the CLI listens; otherwise stop it and raise SidecarError,
        quoting its last output (it exited, or did not listen within `timeout` s),
        or SidecarStartStoppedError as soon as `stop_requested()` is true."""
        try:
            self._wait_ready(timeout, stop_requested)
        except BaseException:
            self.stop(grace=2)  # idempotent; closes the log file
            raise

    @property
    def returncode(self) -> int | None:
        """The CLI's exit status as `subprocess` gives it (-N: killed by signal N), also
        in the sandbox, whose bubblewrap reports a death by signal N as 128 + N."""
        code = self.process.returncode
        if self.public_port is not None and code is not None and 128 < code <= 128 + 64:
            return -(code - 128)
        return code

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.public_port or self.port}"

    def tail(self) -> str:
        with self._lock:
            return "\n".join(self._tail)

    def stop(self, grace: float = 5.0) -> int | None:
        """SIGTERM the process group, SIGKILL after `grace`; return the exit status."""
        if self.process.poll() is None:
            self._signal_group(signal.SIGTERM)
            # A stopped (SIGSTOP) sidecar acts on SIGTERM only once continued.
            self._signal_group(signal.SIGCONT)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait(5)
        else:  # the CLI is gone; make sure nothing it started survives it
            self._signal_group(signal.SIGKILL)
        for reader in self._readers:
            reader.join(2)
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
        return self.returncode

    def __enter__(self) -> Sidecar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    def _wait_ready(self, timeout: float, stop_requested: Callable[[], bool] = bool) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if stop_requested():
                raise SidecarStartStoppedError("stopped before the Copilot CLI listened")
            if self.process.poll() is not None:
                for reader in self._readers:
                    reader.join(2)
                raise SidecarError(
                    f"the Copilot CLI exited with status {self.returncode} before "
                    f"listening; its last output:\n{self.tail() or '(none)'}"
                )
            if time.monotonic() > deadline:
                raise SidecarError(
                    f"the Copilot CLI did not listen within {timeout:g}s; its last output:\n"
                    f"{self.tail() or '(none)'}"
                )

    def _drain(self, stream: IO[bytes], name: str) -> None:
        lines = bounded_lines(stream, max_line=MAX_LINE_BYTES, max_total=MAX_LOG_BYTES)
        for raw in lines:
            line = self._redactor.text(raw.decode("utf-8", "replace").rstrip("\r"))
            with self._lock:
                self._tail.append(f"{name}: {line}")
                if self._log_file is not None:
                    self._log_file.write(f"{name}: {line}\n")
                    self._log_file.flush()
            if not self._ready.is_set() and name == "stdout":
                match = _READY_LINE.search(line)
                if match:
                    self.port = int(match.group(1))
                    self._ready.set()
        stream.close()
