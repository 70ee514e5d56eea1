"""What the harness gives each process: pure functions, tested without processes
(`trusted_search_path` alone resolves links on the host).

The token flow of spec 3.4/4.2: one fresh per-run secret goes to the sidecar
(which authenticates clients with it) and to the driver (which presents it).
The platform token is the sidecar's credential and stays there: the driver
runs in an environment without any GitHub credential.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from copilot_driver.env import (
    CONNECTION_TOKEN,
    PROVIDER_API_KEY,
    SDK_URI,
    SEND_TIMEOUT_MS,
    value_of,
)
from copilot_driver.env_commands import (
    GITHUB_CREDENTIALS,
    GITHUB_HOST_VARIABLES,
    HARNESS_TIMEOUT_MINUTES,
    PLATFORM_TOKENS,
    PROXY_VARIABLES,
)
from copilot_driver.permissions.config import read_server_args

_HARNESS_OWNED_FLAGS = {
    "--headless": 0,
    "--no-auto-update": 0,
    "--port": 1,
    "--log-level": 1,
    "--no-auto-login": 0,
    "--auth-token-env": 1,
}
"""Flags the harness sets itself, with how many values each takes."""


def new_connection_token() -> str:
    """32 random bytes from the OS's cryptographic source, hex encoded (64 chars)."""
    return secrets.token_hex(32)


def driver_environment(
    base: Mapping[str, str],
    *,
    sdk_uri: str,
    token: str,
    workspace: Path | None = None,
    own_import_root: str | None = None,
) -> dict[str, str]:
    """The driver's environment: `base` minus every GitHub credential, plus the
    sidecar's address and the run's token, and a send timeout derived from the
    workflow's timeout when none is set. With a `workspace`, its PATH and
    PYTHONPATH lose every entry a tool could fill (see `trusted_search_path`);
    `own_import_root`, where this package was imported from, stays on PYTHONPATH."""
    env = {key: value for key, value in base.items() if key not in GITHUB_CREDENTIALS}
    if workspace is not None:
        for name, keep in (("PATH", ()), ("PYTHONPATH", (own_import_root,))):
            if name in env:
                env[name] = trusted_search_path(env[name], workspace, keep=keep)
        if not env.get("PYTHONPATH", "x"):
            del env["PYTHONPATH"]
    env[SDK_URI.name] = sdk_uri
    env[CONNECTION_TOKEN.name] = token
    if value_of(env, SEND_TIMEOUT_MS) is None:
        derived = send_timeout_from_minutes(base.get(HARNESS_TIMEOUT_MINUTES.name))
        if derived is not None:
            env[SEND_TIMEOUT_MS.name] = str(derived)
    return env


def trusted_search_path(value: str, workspace: Path, *, keep: Iterable[str | None] = ()) -> str:
    """A PATH-like list without the entries a tool could fill: empty and relative ones
    (they name the working directory, the workspace) and those inside the workspace,
    where a tool of this run or an earlier one may have written a program or a module
    that would then run outside the sandbox. Entries in `keep` stay (the harness's
    own package, when it lies in the workspace: the sandbox keeps it read-only)."""
    kept = {entry for entry in keep if entry}
    inside = PurePosixPath(os.path.realpath(workspace))
    entries = []
    for entry in value.split(":"):
        # Resolved: a host folder that links into the workspace is inside it too.
        if entry in kept or (
            entry.startswith("/")
            and not PurePosixPath(os.path.realpath(entry)).is_relative_to(inside)
        ):
            entries.append(entry)
    return ":".join(entries)


def own_import_root() -> str:
    """The folder this package was imported from (the entry of sys.path that holds it)."""
    return str(Path(__file__).resolve().parents[2])


def driver_command(python: str) -> list[str]:
    """This package's driver, run by `python` with `-P`: Python then puts no working
    directory on the import path, so a `copilot_driver` folder a tool wrote in the
    workspace (the driver's working directory) is never imported in its place."""
    return [python, "-P", "-m", "copilot_driver"]


def import_path_warning(first_entry: str, safe_path: bool, workspace: Path) -> str | None:
    """What to say when this Python puts a folder of the workspace first on its import
    path (`python -m copilot_driver.harness` run in the workspace): a `copilot_driver`
    folder a tool wrote there would have run as the harness, outside the sandbox."""
    if safe_path or not first_entry:
        return None
    if not Path(os.path.realpath(first_entry)).is_relative_to(os.path.realpath(workspace)):
        return None
    return (
        f"Python put {first_entry} (in the workspace) first on the harness's import path, "
        "so a `copilot_driver` folder a tool wrote there would run as the harness, outside "
        "the sandbox: start it as `copilot-driver-harness` or `python -P -m "
        "copilot_driver.harness`"
    )


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
            if takes and not has_value and index + 1 < len(args):
                following = args[index + 1]
                if not following.startswith("-"):  # never another flag: it is the driver's too
                    value = following
                    index += 1
            if flag == "--port" and value.isascii() and value.isdigit():
                port = int(value)
            elif flag == "--log-level" and value:
                log_level = value
        else:
            kept.append(arg)
        index += 1
    return kept, port, log_level


# -- the sidecar's environment (and so every tool's) -------------------------------------

SIDECAR_PASSED = frozenset(
    {
        # the basics every program expects
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ",
        "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CI", "HOSTNAME", "EDITOR", "PAGER",
        # toolchains the tools may run
        "JAVA_HOME", "GOROOT", "GOPATH", "GOBIN", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME",
        "PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED", "PYTHONIOENCODING", "NODE_PATH", "NVM_DIR", "DOTNET_ROOT",
        "ANDROID_HOME", "ANDROID_SDK_ROOT", "CONDA", "CONDA_PREFIX",
        # the workflow's context, which names no secret and no runner file
        "GITHUB_ACTIONS", "GITHUB_ACTOR", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_OWNER",
        "GITHUB_SHA", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_REF_TYPE", "GITHUB_HEAD_REF",
        "GITHUB_BASE_REF", "GITHUB_EVENT_NAME", "GITHUB_WORKFLOW", "GITHUB_RUN_ID",
        "GITHUB_RUN_NUMBER", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "GITHUB_SERVER_URL",
        "GITHUB_API_URL", "GITHUB_GRAPHQL_URL", "GITHUB_WORKSPACE", "RUNNER_OS",
        "RUNNER_ARCH", "RUNNER_NAME", "RUNNER_ENVIRONMENT",
        # the Copilot CLI's own settings (its credentials are added apart, see below)
        "COPILOT_HOME", "COPILOT_MODEL", "COPILOT_AUTO_UPDATE", "COPILOT_OFFLINE",
        "COPILOT_SKIP_CLI_DOWNLOAD", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE",
        "COPILOT_PROVIDER_WIRE_API", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        # where the CLI finds GitHub and the Copilot API, and whom it trusts on the way
        *GITHUB_HOST_VARIABLES, "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
    }
)  # fmt: skip
"""What the sidecar inherits from the harness, by name: variables that hold no secret
and point at no runner file. Everything else (`*_TOKEN`, provider and cloud keys,
`ACTIONS_*`, `GITHUB_OUTPUT`/`GITHUB_ENV`, `SSH_AUTH_SOCK`, package-index URLs that may
carry a password) stays with the harness unless `--pass-env NAME` names it."""
SIDECAR_PASSED_PREFIXES = ("LC_", "JAVA_HOME_")
SIDECAR_CREDENTIAL = PLATFORM_TOKENS[0]
"""The one variable the CLI reads its GitHub token from here; it drops it (unlike
`GH_TOKEN` and `GITHUB_TOKEN`) from the environment of the commands it runs."""


def sidecar_environment(
    base: Mapping[str, str], *, pass_env: tuple[str, ...] = (), sandboxed: bool = True
) -> tuple[dict[str, str], dict[str, str]]:
    """The sidecar's environment, split in two: (plain, credentials).

    `plain` is `base` reduced to the names above plus those `pass_env` names;
    `credentials` is what the CLI authenticates with: the first non-blank platform
    token as `COPILOT_GITHUB_TOKEN` (the CLI's own order of preference) and the
    provider key. In the sandbox the credentials travel apart from the plain part,
    so they appear in no command line and in no environment a tool can read.
    Without the sandbox the harness's proxy settings go with the credentials (a proxy
    URL may hold a password); in it, the sandbox's egress proxy uses them itself.
    """
    plain = {
        name: value
        for name, value in base.items()
        if name in SIDECAR_PASSED or name.startswith(SIDECAR_PASSED_PREFIXES) or name in pass_env
    }
    credentials: dict[str, str] = {}
    token = next((base[n] for n in PLATFORM_TOKENS if base.get(n, "").strip()), None)
    if token is not None:
        credentials[SIDECAR_CREDENTIAL] = token
    key = base.get(PROVIDER_API_KEY.name)
    if key:
        credentials[PROVIDER_API_KEY.name] = key
    if not sandboxed:
        credentials.update({name: base[name] for name in PROXY_VARIABLES if base.get(name)})
    return plain, credentials


def login_arguments(credentials: Mapping[str, str], *, stored_login: bool) -> list[str]:
    """How the CLI signs in to GitHub. With a token: from `COPILOT_GITHUB_TOKEN`, named
    (the CLI's `--no-auto-login` alone would ignore it, and every session on the token
    would fail with "No GitHub OAuth token"), and nothing stored on the machine. With
    only a stored login (`copilot login`, outside the sandbox): the CLI's own automatic
    sign-in. Otherwise none (a bring-your-own-model provider needs none)."""
    if SIDECAR_CREDENTIAL in credentials:
        return ["--no-auto-login", "--auth-token-env", SIDECAR_CREDENTIAL]
    if stored_login:
        return []
    return ["--no-auto-login"]
