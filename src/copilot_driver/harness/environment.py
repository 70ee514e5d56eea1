"""What the harness gives each process: pure functions, tested without processes.

The token flow of spec 3.4/4.2: one fresh per-run secret goes to the sidecar
(which authenticates clients with it) and to the driver (which presents it).
The platform token is the sidecar's credential and stays there: the driver
runs in an environment without any GitHub credential.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from copilot_driver import env as contract
from copilot_driver.permissions.config import read_server_args

_HARNESS_OWNED_FLAGS = {"--headless": 0, "--no-auto-update": 0, "--port": 1, "--log-level": 1}
"""Flags the harness sets itself, with how many values each takes."""


def new_connection_token() -> str:
    """32 random bytes from the OS's cryptographic source, hex encoded (64 chars)."""
    return secrets.token_hex(32)


def driver_environment(base: Mapping[str, str], *, sdk_uri: str, token: str) -> dict[str, str]:
    """The driver's environment: `base` minus every GitHub credential, plus the
    sidecar's address and the run's token, and a send timeout derived from the
    workflow's timeout when none is set."""
    env = {key: value for key, value in base.items() if key not in contract.GITHUB_CREDENTIALS}
    env[contract.SDK_URI.name] = sdk_uri
    env[contract.CONNECTION_TOKEN.name] = token
    if contract.value_of(env, contract.SEND_TIMEOUT_MS) is None:
        derived = send_timeout_from_minutes(base.get(contract.TIMEOUT_MINUTES))
        if derived is not None:
            env[contract.SEND_TIMEOUT_MS.name] = str(derived)
    return env


def send_timeout_from_minutes(raw: str | None) -> int | None:
    """minutes x 60000 - 30000 ms (at least 1000), so the send ends before the step does."""
    if raw is None or not raw.strip():
        return None
    try:
        minutes = float(raw.strip())
    except ValueError:
        return None
    if not minutes > 0 or minutes > 10**6:  # also rejects NaN
        return None
    return max(1000, int(minutes * 60_000) - 30_000)


def sidecar_arguments(raw: str | None) -> tuple[list[str], int | None, str | None]:
    """The workflow's sidecar arguments without the flags the harness owns.

    Returns (arguments, the `--port` they asked for, the `--log-level` they
    asked for). Unset or blank means no extra arguments; anything unreadable
    raises ServerArgsError, read exactly as the driver reads it.
    """
    args = read_server_args(raw) or []
    kept: list[str] = []
    port: int | None = None
    log_level: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        flag, has_value, value = arg.partition("=")
        if flag in _HARNESS_OWNED_FLAGS:
            takes = _HARNESS_OWNED_FLAGS[flag]
            if takes and not has_value:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            if flag == "--port" and value.isascii() and value.isdigit():
                port = int(value)
            elif flag == "--log-level" and value:
                log_level = value
        else:
            kept.append(arg)
        index += 1
    return kept, port, log_level
