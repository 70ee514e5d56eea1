"""Stand-ins for the Copilot CLI's binary: a native program that is no script, and npm's
Node script, for the sandbox's tests."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

MACHINE = {"x86_64": "x64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
NATIVE_SOURCE = Path(shutil.which("true") or "/bin/true")
"""A real executable that is no script: the native CLI's stand-in."""
NODE_SCRIPT = "#!/usr/bin/env node\nrequire('./npm-loader.js')\n"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def native_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(NATIVE_SOURCE, path)
    path.chmod(0o755)
    return path


def script_file(path: Path, text: str = NODE_SCRIPT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path
