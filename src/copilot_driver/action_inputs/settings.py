"""The inputs action.yml hands to the harness's step as they are (`model`,
`copilot-version`, `copilot-token`, `timeout-minutes`, `max-tool-denials`,
`working-directory`), checked before anything is installed. Pure but for looking at
the working directory.

Each check says the fix as the workflow writes it (`model: gpt-5-mini`), where the
harness, which reads the variables these inputs become, would name the variable.
An empty optional input leaves the job's environment as it is (action.yml), so a
value the job sets counts too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from copilot_driver.action_inputs.names import (
    COPILOT_TOKEN,
    COPILOT_VERSION,
    INPUT_VARIABLES,
    MAX_TOOL_DENIALS,
    MODEL,
    SHOWN_CHARS,
    TIMEOUT_MINUTES,
    WORKING_DIRECTORY,
    InputError,
)
from copilot_driver.env import MAX_TOOL_DENIALS as MAX_TOOL_DENIALS_VARIABLE
from copilot_driver.env import MODEL as MODEL_VARIABLE
from copilot_driver.env import PROVIDER_BASE_URL, TOOL_CONFIG
from copilot_driver.env_commands import COPILOT_GITHUB_TOKEN, PLATFORM_TOKENS

_NPM_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?")
"""The `copilot-version`s action.yml installs (its Install step checks the same)."""
_MAX_MINUTES = 10**6
_SECRET = f"${{{{ secrets.{COPILOT_GITHUB_TOKEN.name} }}}}"


def _input(env: Mapping[str, str], name: str) -> str:
    return env.get(INPUT_VARIABLES[name], "")


def _shown(value: str) -> str:
    return json.dumps(value.strip()[:SHOWN_CHARS], ensure_ascii=False)


def check_model(env: Mapping[str, str]) -> None:
    """`model`, or the job's COPILOT_MODEL: one must be set."""
    if _input(env, MODEL).strip() or env.get(MODEL_VARIABLE.name, "").strip():
        return
    raise InputError(
        f"{MODEL} is empty and the job sets no {MODEL_VARIABLE.name}: set the input to a "
        f"model your Copilot plan offers, e.g. `{MODEL}: gpt-5-mini`"
    )


def check_copilot_version(env: Mapping[str, str]) -> None:
    raw = _input(env, COPILOT_VERSION)
    if _NPM_VERSION.fullmatch(raw):
        return
    raise InputError(
        f"{COPILOT_VERSION} must be an npm version such as 1.0.102, not {_shown(raw)}: write "
        f"e.g. `{COPILOT_VERSION}: 1.0.102` (or leave it out for the version the action pins)"
    )


def check_timeout_minutes(env: Mapping[str, str]) -> None:
    """Empty, or minutes above 0 (as the harness reads GH_AW_TIMEOUT_MINUTES)."""
    raw = _input(env, TIMEOUT_MINUTES).strip()
    if not raw:
        return
    try:
        minutes = float(raw)
    except ValueError:
        minutes = -1.0
    if 0 < minutes <= _MAX_MINUTES:
        return
    raise InputError(
        f"{TIMEOUT_MINUTES} must be a number of minutes above 0, not {_shown(raw)}: write e.g. "
        f"`{TIMEOUT_MINUTES}: 20` (or leave it empty for the driver's 10 minutes)"
    )


def check_max_tool_denials(env: Mapping[str, str]) -> None:
    """Empty, or a count the driver reads as given (never its fallback)."""
    raw = _input(env, MAX_TOOL_DENIALS)
    if not raw.strip():
        return
    notices: list[str] = []
    MAX_TOOL_DENIALS_VARIABLE.soft_value(raw, notices, str)
    if not notices:
        return
    limit = MAX_TOOL_DENIALS_VARIABLE.limit
    raise InputError(
        f"{MAX_TOOL_DENIALS} must be a whole number from 1 to {limit}, not {_shown(raw)}: "
        f"write e.g. `{MAX_TOOL_DENIALS}: 5` (or leave it empty for 5)"
    )


def check_working_directory(env: Mapping[str, str], workspace: Path) -> None:
    raw = _input(env, WORKING_DIRECTORY) or "."
    try:
        usable = (workspace / raw).is_dir()
    except OSError:
        usable = False
    if usable:
        return
    raise InputError(
        f"{WORKING_DIRECTORY} {_shown(raw)} is not a folder of the workspace (tried "
        f"{workspace / raw}): give a folder of the checkout, relative to the workspace, e.g. "
        f"`{WORKING_DIRECTORY}: .`"
    )


def check_tool_contract(env: Mapping[str, str]) -> None:
    """The job's gh-aw tool contract would replace the action's policy."""
    if env.get(TOOL_CONFIG.name, "").strip():
        raise InputError(
            f"the job sets {TOOL_CONFIG.name}, whose allowlist would replace allowed-tools: "
            "unset it for this step"
        )


def check_credential(env: Mapping[str, str], *, sandboxed: bool) -> None:
    """`copilot-token`, or the job's own token or provider: the sidecar needs one."""
    from copilot_driver.harness.credentials import (  # only this check needs them
        ACCEPTED_TOKENS,
        CLASSIC_PREFIX,
        classic_token_problem,
        credential_problem,
    )

    token = _input(env, COPILOT_TOKEN).strip()
    seen = {**env, COPILOT_GITHUB_TOKEN.name: token} if token else dict(env)
    if credential_problem(seen, sandboxed=sandboxed) is not None:
        names = ", ".join(PLATFORM_TOKENS)
        raise InputError(
            f"no credential for the Copilot CLI: {COPILOT_TOKEN} is empty (a secret that does "
            f"not exist, or that this workflow is not given, is empty) and the job sets none of "
            f"{names}, nor a provider ({PROVIDER_BASE_URL.name}): set "
            f"`{COPILOT_TOKEN}: {_SECRET}` (check the secret's name in the repository or "
            f"organisation settings); {ACCEPTED_TOKENS}. A pull request from a fork gets no "
            "secrets: run the workflow on branches of this repository, or on "
            "`pull_request_target` with care"
        )
    if classic_token_problem(seen) is not None:
        where = f"the {COPILOT_TOKEN} input" if token else "the job's token"
        raise InputError(
            f"{where} is a classic personal access token ({CLASSIC_PREFIX}...), which the "
            f"Copilot CLI refuses: replace the secret behind it with another token; "
            f"{ACCEPTED_TOKENS}"
        )
