"""Checks before a copilot-cli session: a working binary and a credential.

Both fail fast with `agent_not_found` and a sentence that says what to do,
instead of letting the first turn fail after the agent started. The token
check only looks at which variables are set (never at their values, except
for the classic-PAT prefix, which the CLI rejects).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Mapping, Sequence

from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.env_commands import PLATFORM_TOKENS
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

CANARY_TIMEOUT_S = 5.0
GH_AUTH_TIMEOUT_S = 2.0


async def _run(argv: Sequence[str], env: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
    """Exit status and combined output; raises TimeoutError (after killing it)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout=timeout_s)
    except (TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, output.decode("utf-8", "replace").strip()


async def canary(binary: str, env: Mapping[str, str], timeout_s: float = CANARY_TIMEOUT_S) -> str:
    """`copilot --version` must answer within the timeout; returns what it printed."""
    try:
        code, output = await _run([binary, "--version"], env, timeout_s)
    except TimeoutError:
        raise AgentError(
            AdapterErrorKind.AGENT_NOT_FOUND,
            f"{binary} --version did not answer within {timeout_s:g} s; "
            "the Copilot CLI is not functional (is Node.js 22+ installed?)",
        ) from None
    except OSError as exc:
        raise AgentError(
            AdapterErrorKind.AGENT_NOT_FOUND, f"{binary} cannot be started: {exc.strerror or exc}"
        ) from None
    if code != 0:
        last = output.splitlines()[-1] if output else "no output"
        raise AgentError(
            AdapterErrorKind.AGENT_NOT_FOUND,
            f"{binary} --version failed with status {code} ({last}); "
            "the Copilot CLI is not functional (is Node.js 22+ installed?)",
        )
    return output


def offline_provider_configured(env: Mapping[str, str]) -> bool:
    """Bring-your-own-model offline mode needs no GitHub credential."""
    return env.get("COPILOT_OFFLINE", "").strip().lower() == "true" and bool(
        env.get("COPILOT_PROVIDER_BASE_URL", "").strip()
    )


async def check_authentication(env: Mapping[str, str], timeout_s: float = GH_AUTH_TIMEOUT_S) -> str:
    """Where the CLI will find its credential; AgentError when nowhere."""
    if offline_provider_configured(env):
        return "offline provider (COPILOT_OFFLINE with COPILOT_PROVIDER_BASE_URL)"
    for name in PLATFORM_TOKENS:
        value = env.get(name, "").strip()
        if not value:
            continue
        if value.startswith("ghp_"):
            log.warning(
                "%s holds a classic personal access token (ghp_); the Copilot CLI rejects "
                "those: use a fine-grained token (github_pat_) with the Copilot Requests "
                "permission, or an OAuth token",
                name,
            )
        return name
    gh = shutil.which("gh", path=env.get("PATH"))
    if gh is not None:
        try:
            code, _ = await _run([gh, "auth", "status"], env, timeout_s)
        except (TimeoutError, OSError):
            code = -1
        if code == 0:
            log.warning("no token variable set; relying on the GitHub CLI's login (gh auth status)")
            return "gh auth"
    raise AgentError(
        AdapterErrorKind.AGENT_NOT_FOUND,
        "no GitHub authentication for the Copilot CLI: set COPILOT_GITHUB_TOKEN, GH_TOKEN "
        "or GITHUB_TOKEN, log in with `gh auth login`, or configure an offline provider "
        "(COPILOT_OFFLINE=true with COPILOT_PROVIDER_BASE_URL)",
    )
