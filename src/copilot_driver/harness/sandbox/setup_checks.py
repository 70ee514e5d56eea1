"""What can stop the sandbox from being set up, each said with its fix.

`Sandbox.prepare` (launch.py) calls these before any process starts; every
failure is a `SandboxError` whose message names the fix (and the way out:
`--sandbox off`, knowing what it costs).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.errors import CopilotDriverError
from copilot_driver.harness.sandbox.cli_copy import execute_only_copy, native_binary, warm_once

USERNS_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
APPARMOR_FIX = (
    "allow bubblewrap to create user namespaces: on Ubuntu 24.04 install an AppArmor "
    "profile for it (`printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap "
    "/usr/bin/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/bwrap "
    "&& sudo apparmor_parser -r /etc/apparmor.d/bwrap`), or allow them for every program "
    "(`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; elsewhere "
    "`kernel.unprivileged_userns_clone=1`)"
)
OFF_FIX = (
    "or run without the sandbox (`--sandbox off`), knowing that tools then reach the whole runner"
)


class SandboxError(CopilotDriverError, RuntimeError):
    """The sandbox cannot be set up here; the message names the fix."""


def probe_fix(said: str) -> str:
    """The fix for what bubblewrap said when its probe failed."""
    if any(
        sign in said for sign in ("uid map", "Operation not permitted", "RTM_NEWADDR", "namespace")
    ):
        restricted = USERNS_SYSCTL.exists() and USERNS_SYSCTL.read_text().strip() == "1"
        where = " (this host restricts them: kernel.apparmor_restrict_unprivileged_userns=1)"
        return f"{APPARMOR_FIX}{where if restricted else ''}; {OFF_FIX}"
    return f"check that bubblewrap works here (`bwrap --ro-bind / / true`); {OFF_FIX}"


def check_workspace(workspace: Path) -> None:
    """A workspace the sandbox can be built around; a `.git` gets its hooks folder."""
    if not workspace.is_dir():
        raise SandboxError(
            f"the workspace {workspace} is not a directory: set GITHUB_WORKSPACE to the "
            "folder the tools may change, or run the harness in it"
        )
    if workspace == Path("/"):
        raise SandboxError(
            "the workspace is / (the whole file system would be writable): run the harness "
            "in the project's folder, or set GITHUB_WORKSPACE to it"
        )
    git = workspace / ".git"
    if git.is_dir():  # an empty hooks folder, read-only inside, as `git init` makes it
        with contextlib.suppress(OSError):
            (git / "hooks").mkdir(exist_ok=True)


def cli_for_sandbox(
    binary: Path, env: Mapping[str, str], cache_home: Path
) -> tuple[Path, Path | None, str | None]:
    """The CLI the sandbox runs, its compile cache, and what to say about its limits."""
    native = native_binary(binary)
    if native is None:  # a script or a stand-in: it runs as it is, and is readable
        return (
            binary,
            None,
            (
                f"the Copilot CLI {binary} is not the native binary (a script?): inside the "
                "sandbox a tool can read the sidecar's environment (its credentials) from "
                "/proc; give the native binary (`--copilot .../@github/copilot-linux-x64/copilot`)"
            ),
        )
    try:
        copy = execute_only_copy(native, cache_home)
    except OSError as error:
        raise SandboxError(
            f"cannot copy the Copilot CLI to {cache_home / 'copilot-driver'} "
            f"({error.strerror or error}): make that folder writable (XDG_CACHE_HOME), "
            f"{OFF_FIX}"
        ) from error
    return copy, warm_once(copy.parent, native, env), None


def planted_message(links: list[str]) -> str:
    named = ", ".join(f"{link} (-> {_target(link)})" for link in links[:5])
    more = f" and {len(links) - 5} more" if len(links) > 5 else ""
    return (
        f"the workspace holds a symbolic link where the sandbox protects a path: {named}"
        f"{more}; a tool of an earlier run may have planted it to mount what it points at "
        "inside the sandbox. Check it and remove it (`rm LINK`) before running again"
    )


def _target(link: str) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "?"
