"""The Copilot CLI as the sandbox runs it: native, execute-only, unpacked, compiled.

- `native_binary`: npm's `copilot` is a Node script; the sandbox runs the
  platform binary installed beside it.
- `execute_only_copy`: a mode-0111 copy, made once per binary. The kernel marks
  a process whose program it may not read as non-dumpable, so no tool can read
  the CLI's environment (its credentials) or memory through /proc.
- `warm_once`: the CLI's first start unpacks its package into the user's cache,
  and Node keeps its compiled code in a compile cache; both are read-only
  inside, so the harness starts the CLI once per binary outside to fill them.
  A tool must not change the code, source or compiled, that the next CLI runs
  with its credentials.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

WARM_TIMEOUT_S = 120.0
"""The first start of a CLI binary unpacks ~235 MB; later ones take about 0.5 s."""
WARM_STOP_S = 10.0
_READY = b"listening on port"


def native_binary(binary: Path) -> Path | None:
    """The CLI's native executable: `binary` itself, or, for npm's `copilot` (a Node
    script, `npm-loader.js`), the platform package installed beside it; None if none."""
    real = binary.resolve()
    if not _is_script(real):
        return real
    machine = {"x86_64": "x64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    for root in (real.parent / "node_modules" / "@github", real.parent.parent):
        for flavour in ("linux", "linuxmusl"):
            candidate = root / f"copilot-{flavour}-{machine}" / "copilot"
            if candidate.is_file() and not _is_script(candidate):
                return candidate
    return None


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def execute_only_copy(binary: Path, cache_home: Path) -> Path:
    """The mode-0111 copy of `binary` under `cache_home`, made once per binary (its path,
    size and modification time); raises OSError when it cannot be made."""
    source = binary.resolve()
    facts = source.stat()
    key = hashlib.sha256(f"{source}\0{facts.st_size}\0{facts.st_mtime_ns}".encode()).hexdigest()
    target = cache_home / "copilot-driver" / "execute-only" / key[:24] / source.name
    if target.is_file():
        return target
    partial = target.with_name(f".{source.name}.{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, partial)
        os.chmod(partial, 0o111)  # noqa: S103 - execute-only is the point (see above)
        os.replace(partial, target)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return target


def cli_package_cache(env: Mapping[str, str]) -> Path | None:
    """Where the CLI unpacks its package: `$XDG_CACHE_HOME/copilot` (or ~/.cache)."""
    base = env.get("XDG_CACHE_HOME") or (f"{env['HOME']}/.cache" if env.get("HOME") else None)
    return Path(base, "copilot") if base else None


def warm_once(folder: Path, binary: Path, env: Mapping[str, str]) -> Path | None:
    """Start `binary` once as a server outside the sandbox, with no credential, and stop it
    when it listens: its package is unpacked and Node's compile cache for it filled.
    Returns the cache folder, or None when the CLI did not start (it fails again at the
    real start, where its own output explains it).

    Without the cache each sandboxed start compiles the CLI afresh in an empty /tmp
    (measured: it listens ~0.3 s later, and its peak memory is ~50 MB higher)."""
    cache = folder / "node-compile-cache"
    marker = folder / "warmed"
    if marker.exists():
        return cache
    with tempfile.TemporaryDirectory(prefix="copilot-driver-warm-") as scratch:
        quiet = {
            "PATH": env.get("PATH", os.defpath),
            "HOME": scratch,
            "COPILOT_HOME": scratch,
            "TMPDIR": scratch,
            "COPILOT_AUTO_UPDATE": "false",
            "NODE_COMPILE_CACHE": str(cache),
            "COPILOT_CONNECTION_TOKEN": secrets.token_hex(32),
        }
        package_cache = cli_package_cache(env)
        if package_cache is not None:  # the user's, where the real start looks
            quiet["XDG_CACHE_HOME"] = str(package_cache.parent)
        try:
            process = subprocess.Popen(
                [str(binary), "--headless", "--no-auto-update", "--no-auto-login", "--port", "0"],
                env=quiet,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None
        assert process.stdout is not None
        try:
            listening = _saw(process.stdout.fileno(), _READY, WARM_TIMEOUT_S)
        finally:  # SIGTERM first: Node writes its compile cache as it exits
            for signum in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signum)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(WARM_STOP_S)
                    break
            process.stdout.close()
    if not listening:
        return None
    marker.touch()
    return cache


def _saw(fd: int, needle: bytes, timeout: float) -> bool:
    """Whether `needle` is written to `fd` within `timeout` seconds."""
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        seen = seen[-len(needle) :] + chunk
    return True
