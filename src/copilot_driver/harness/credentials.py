"""Before anything starts: does the sidecar have a credential to reach a model? Pure.

Without one the Copilot CLI starts, connects and creates a session, and only
the prompt fails, as a generic `session_error` ("No GitHub OAuth token or
Copilot HMAC key provided"). Checking first turns that into a usage error
that names the secret, in milliseconds.

A usable credential is any of:
- a platform token (`COPILOT_GITHUB_TOKEN`, `GH_TOKEN`, `GITHUB_TOKEN`) that is
  not blank;
- a bring-your-own-model provider (`COPILOT_PROVIDER_BASE_URL`, or a provider
  catalog): the session authenticates to it with its own key;
- a login stored on this machine by `copilot login` or `gh auth login` (a
  developer's terminal; a fresh CI runner has none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.env import PROVIDER_BASE_URL, PROVIDER_CATALOG, in_github_actions
from copilot_driver.env_commands import (
    COPILOT_GITHUB_TOKEN,
    COPILOT_HOME,
    GH_CONFIG_DIR,
    HOME,
    PLATFORM_TOKENS,
)

SECRET_NAME = COPILOT_GITHUB_TOKEN.name
"""The secret the docs and the examples use (`COPILOT_GITHUB_TOKEN`)."""

CLASSIC_PREFIX = "ghp_"
ACCEPTED_TOKENS = (
    'the Copilot CLI accepts a fine-grained personal access token with the "Copilot Requests" '
    "permission, or an OAuth token from `gh auth login` or `copilot login`; it refuses classic "
    f"personal access tokens ({CLASSIC_PREFIX}...)"
)
"""Which GitHub tokens the Copilot CLI takes (its documentation's "Supported token types")."""


@dataclass(frozen=True)
class Tokens:
    """What the environment holds for the Copilot CLI's GitHub login: names, never values."""

    present: tuple[str, ...] = ()
    """The platform token variables set and not blank, in the CLI's order of precedence."""
    classic: tuple[str, ...] = ()
    """Those of them that hold a classic personal access token (`ghp_`)."""
    in_actions: bool = False
    """GitHub Actions (`GITHUB_ACTIONS=true`): the fix is a repository secret."""


def tokens_of(env: Mapping[str, str]) -> Tokens:
    """The facts `outcome.explain` needs about the environment's GitHub tokens."""
    present = tuple(name for name in PLATFORM_TOKENS if env.get(name, "").strip())
    return Tokens(
        present,
        tuple(name for name in present if env[name].strip().startswith(CLASSIC_PREFIX)),
        in_actions=in_github_actions(env),
    )


def how_to_set_a_token(in_actions: bool) -> str:
    """Where a token comes from: a secret in Actions, `gh auth token` on a terminal."""
    if in_actions:
        return (
            f"set {SECRET_NAME} from a secret, e.g. `env: {SECRET_NAME}: "
            f"${{{{ secrets.{SECRET_NAME} }}}}` (check the secret's name in the repository or "
            "organisation settings)"
        )
    return (
        f"`export {SECRET_NAME}=$(gh auth token)` (after `gh auth login`), or "
        f"`export {SECRET_NAME}=<a token you created>`"
    )


def credential_problem(env: Mapping[str, str], *, sandboxed: bool = False) -> str | None:
    """What is missing, with the fix; None when the sidecar has a credential. In the
    sandbox the CLI sees no login stored on this machine (its state folder is private,
    gh's is hidden), so only a token or a provider counts."""
    if any(env.get(name, "").strip() for name in PLATFORM_TOKENS):
        return None
    if has_provider(env):
        return None
    if _stored_login(env):
        if not sandboxed:
            return None
        return (
            f"no credential the sandboxed Copilot CLI can use: the login stored on this "
            f"machine stays outside the sandbox. Set {SECRET_NAME} (e.g. "
            f"`{SECRET_NAME}=$(gh auth token)`), or run with `--sandbox off`"
        )
    blank = [name for name in PLATFORM_TOKENS if name in env]
    said = (
        f"{' and '.join(blank)} {'is' if len(blank) == 1 else 'are'} set but empty"
        if blank
        else f"{SECRET_NAME} is not set"
    )
    start = (
        f"no credential for the Copilot CLI: {said}, and no bring-your-own-model provider "
        f"({PROVIDER_BASE_URL.name}) is configured. "
    )
    if in_github_actions(env):
        return (
            f"{start}Set {SECRET_NAME} to a token with Copilot access: "
            f"{how_to_set_a_token(True)}; {ACCEPTED_TOKENS}. In a pull request from a fork, "
            "GitHub passes no secrets: run the workflow on `pull_request_target` with care, "
            "or only on branches of this repository."
        )
    login = "" if sandboxed else ", or run `copilot login` once"
    return f"{start}Set one: {how_to_set_a_token(False)}{login}; {ACCEPTED_TOKENS}."


def the_token_variable(env: Mapping[str, str]) -> str | None:
    """The variable whose token the sidecar signs in with: the first one set, in the
    CLI's order of preference."""
    return next((name for name in PLATFORM_TOKENS if env.get(name, "").strip()), None)


def has_provider(env: Mapping[str, str]) -> bool:
    """A bring-your-own-model provider serves the model (no GitHub sign-in needed)."""
    return any(
        env.get(name, "").strip() for name in (PROVIDER_BASE_URL.name, PROVIDER_CATALOG.name)
    )


def classic_token_problem(env: Mapping[str, str]) -> str | None:
    """The run's sign-in token is a classic personal access token, which the Copilot CLI
    refuses (after the sidecar and a session have started): what to do instead. None when
    it is not, or when a provider serves the model without it."""
    used = the_token_variable(env)
    if used is None or has_provider(env) or not env[used].strip().startswith(CLASSIC_PREFIX):
        return None
    return (
        f"{used} holds a classic personal access token ({CLASSIC_PREFIX}...), which the Copilot "
        f"CLI refuses; nothing was started. {how_to_replace(used, in_github_actions(env))}: "
        f"{ACCEPTED_TOKENS}"
    )


def how_to_replace(variable: str, in_actions: bool) -> str:
    """Where a refused token is replaced: the secret in Actions, the variable elsewhere."""
    if in_actions:
        return f"Replace the secret behind {variable} with another token"
    return f"Set {variable} to another token (`export {variable}=$(gh auth token)`)"


def stored_login(env: Mapping[str, str]) -> bool:
    """A login the CLI would use by itself (outside the sandbox), and no token."""
    return the_token_variable(env) is None and _stored_login(env)


def _stored_login(env: Mapping[str, str]) -> bool:
    """A login the CLI could use: its own config, or the GitHub CLI's hosts file."""
    home = env.get(HOME.name)
    copilot_home = env.get(COPILOT_HOME.name) or (f"{home}/.copilot" if home else None)
    gh_config = env.get(GH_CONFIG_DIR.name) or (f"{home}/.config/gh" if home else None)
    candidates = []
    if copilot_home:
        candidates.append(Path(copilot_home) / "config.json")
    if gh_config:
        candidates.append(Path(gh_config) / "hosts.yml")
    return any(_holds_login(path) for path in candidates)


def _holds_login(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    # The CLI's config lists logged-in users; gh's hosts file holds a token or user.
    return any(key in text for key in ("logged_in_users", "oauth_token", "user:"))
