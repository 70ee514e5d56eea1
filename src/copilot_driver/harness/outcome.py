"""A run's end in words: the short cause (an annotation's title) and the fix. Pure.

Every non-zero exit of the harness gets one of these: it becomes the
`::error title=...::` annotation in GitHub Actions, the head of the step
summary, and the harness's last log line. The driver's own message (what
exactly failed) comes first; the fix is the harness's, chosen by the
`errorKind` (the driver's, or one of the harness's own below).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot_driver import env, env_commands
from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.credentials import (
    ACCEPTED_TOKENS,
    Tokens,
    how_to_replace,
    how_to_set_a_token,
)
from copilot_driver.harness.credentials import (
    CLASSIC_PREFIX as _CLASSIC,
)
from copilot_driver.vocabulary import SIDECAR_LOG_NAME, DriverErrorKind, HarnessErrorKind


@dataclass(frozen=True)
class Explanation:
    title: str
    fix: str | None
    """None when the cause itself already says what to do (the harness's own checks)."""


_BY_KIND: dict[str, Explanation] = {
    HarnessErrorKind.CLI_NOT_FOUND: Explanation("No usable Copilot CLI", None),
    HarnessErrorKind.NO_CREDENTIAL: Explanation("No credential for the Copilot CLI", None),
    HarnessErrorKind.SANDBOX_UNAVAILABLE: Explanation("The OS sandbox cannot be set up here", None),
    HarnessErrorKind.CONFIG: Explanation(
        "The run's configuration is invalid",
        "`python -m copilot_driver --help` lists every variable the driver reads",
    ),
    HarnessErrorKind.SIDECAR_START_FAILED: Explanation(
        "The Copilot CLI sidecar could not start",
        "check the CLI's last output above, its version (`copilot --version`), and "
        f"{env.SERVER_ARGS.name}",
    ),
    HarnessErrorKind.SIDECAR_DIED: Explanation(
        "The Copilot CLI sidecar died during the run",
        f"its last output is above and in {SIDECAR_LOG_NAME} beside the events file; rerun the job",
    ),
    HarnessErrorKind.DRIVER_NOT_STARTED: Explanation(
        "The driver could not start", "check the driver command after `--`"
    ),
    DriverErrorKind.TOOL_DENIALS_EXCEEDED: Explanation(
        "Stopped: too many tool denials",
        "allow the tools the task needs (the step summary names the rule for each denial), "
        f"or raise {env.MAX_TOOL_DENIALS.name}",
    ),
    DriverErrorKind.TOOL_CALL_BUDGET_EXCEEDED: Explanation(
        "Stopped: the model kept calling tools past the tool-call budget",
        "raise maxToolCalls in the tool contract, or narrow the prompt's task",
    ),
    DriverErrorKind.SEND_TIMEOUT: Explanation(
        "The session timed out",
        f"raise {env.SEND_TIMEOUT_MS.name} (or the job's timeout-minutes), or narrow "
        "the prompt's task",
    ),
    DriverErrorKind.INTERRUPTED: Explanation(
        "The run was cancelled", "nothing to fix if the job was cancelled on purpose"
    ),
    DriverErrorKind.SESSION_ERROR: Explanation(
        "The Copilot session failed", "see the session's error above; rerun if it was transient"
    ),
    HarnessErrorKind.UNSUPPORTED_TOKEN: Explanation(
        "The GitHub token is a classic personal access token", None
    ),
    DriverErrorKind.MODEL_UNAVAILABLE: Explanation(
        "The model is not available to this Copilot account",
        f"set {env.MODEL.name} (the Action's `model` input) to one of the models named above",
    ),
    DriverErrorKind.RATE_LIMITED: Explanation(
        "Copilot rate-limited the run",
        "the CLI and the harness already retried: wait and rerun, run fewer jobs at once, or "
        f"use another model ({env.MODEL.name}=auto lets Copilot choose)",
    ),
    DriverErrorKind.COPILOT_API_ERROR: Explanation(
        "The Copilot API failed",
        "the harness already retried: run again later, and see https://www.githubstatus.com",
    ),
    DriverErrorKind.QUOTA_EXCEEDED: Explanation(
        "The Copilot account's quota is used up",
        "use a model the plan includes, wait for the reset date named above, or raise the "
        "budget at https://github.com/settings/copilot/features",
    ),
    DriverErrorKind.EVENTS_UNWRITABLE: Explanation(
        "The events file could not be written",
        f"make {env.SESSION_STATE_BASE_DIR.name} a writable folder with free space",
    ),
}

EXIT_STATUS_OF_KIND: dict[str, int] = {
    HarnessErrorKind.CLI_NOT_FOUND: ExitCode.CONFIG,
    HarnessErrorKind.NO_CREDENTIAL: ExitCode.CONFIG,
    HarnessErrorKind.UNSUPPORTED_TOKEN: ExitCode.CONFIG,
    HarnessErrorKind.SANDBOX_UNAVAILABLE: ExitCode.CONFIG,
    HarnessErrorKind.CONFIG: ExitCode.CONFIG,
    HarnessErrorKind.DRIVER_NOT_STARTED: ExitCode.CONFIG,
    HarnessErrorKind.SIDECAR_START_FAILED: ExitCode.START_FAILED,
    HarnessErrorKind.SIDECAR_DIED: ExitCode.SIDECAR_DIED,
}
"""The harness's own error kinds and the exit status each ends the run with (the
docs/exit-status.md's and docs/harness.md's table; `driver_failed` takes the driver's status)."""

_MISSING_TOKEN_TEXT = ("No GitHub OAuth token", "No authentication information found")


_CONFIG_UNSAID = Explanation(
    "The run's configuration is invalid",
    "the driver exited 2 (a configuration error) without saying why: see its log above "
    "(`python -m copilot_driver --help` lists the variables it reads)",
)
"""A configuration error no message explains (another driver's, or a crash)."""


def explain(
    exit_code: int,
    error_kind: str | None,
    message: str | None,
    *,
    tokens: Tokens | None = None,
    egress_denied: tuple[tuple[str, int], ...] = (),
) -> Explanation:
    """The title and the fix for a run that ended with `exit_code` (not 0). `tokens`:
    the environment's GitHub tokens (`credentials.tokens_of`), None when not known;
    `egress_denied`: the sandbox's refusals per host."""
    if message and any(text in message for text in _MISSING_TOKEN_TEXT):
        return _no_usable_token(tokens)
    if error_kind in (DriverErrorKind.TOKEN_REFUSED, DriverErrorKind.NO_COPILOT_ACCESS):
        return _token_not_accepted(error_kind, tokens)
    if error_kind == DriverErrorKind.GITHUB_UNREACHABLE:
        return _github_unreachable(egress_denied)
    if error_kind == HarnessErrorKind.CONFIG or (
        error_kind is None and exit_code == ExitCode.CONFIG
    ):
        return _BY_KIND[HarnessErrorKind.CONFIG] if message else _CONFIG_UNSAID
    if error_kind in _BY_KIND:
        return _BY_KIND[error_kind]
    if error_kind in (
        DriverErrorKind.AUTH_FAILED,
        DriverErrorKind.AUTH_NOT_CONFIGURED,
        DriverErrorKind.AUTH_REQUIRED,
    ):
        return Explanation(
            "The driver could not authenticate to the sidecar",
            "run the driver through copilot-driver-harness, which gives both the same token",
        )
    if error_kind in (
        DriverErrorKind.SIDECAR_UNREACHABLE,
        DriverErrorKind.SIDECAR_UNRESPONSIVE,
        DriverErrorKind.SIDECAR_LOST,
    ):
        return Explanation(
            "The driver lost the Copilot CLI sidecar",
            f"the CLI's output is in {SIDECAR_LOG_NAME} beside the events file; rerun the job",
        )
    if exit_code == ExitCode.CONFIG:
        return _BY_KIND[HarnessErrorKind.CONFIG] if message else _CONFIG_UNSAID
    return Explanation(f"The driver failed (exit status {exit_code})", "see the driver's log above")


def _token_not_accepted(kind: str, tokens: Tokens | None) -> Explanation:
    """GitHub refused the token, or it has no Copilot access: name the variable it came
    from, and where to replace it."""
    used = tokens.present[0] if tokens and tokens.present else None
    title = (
        "GitHub refused the Copilot CLI's token"
        if kind == DriverErrorKind.TOKEN_REFUSED
        else "The GitHub token has no Copilot access"
    )
    if used is None:
        return Explanation(title, f"give the sidecar a token it accepts: {ACCEPTED_TOKENS}")
    said = "was refused" if kind == DriverErrorKind.TOKEN_REFUSED else "has no Copilot access"
    replace = how_to_replace(used, bool(tokens and tokens.in_actions))
    return Explanation(title, f"the token in {used} {said}. {replace}: {ACCEPTED_TOKENS}")


def _github_unreachable(egress_denied: tuple[tuple[str, int], ...]) -> Explanation:
    title = "The Copilot CLI could not reach GitHub"
    if egress_denied:
        hosts = ", ".join(host for host, _ in egress_denied[:5])
        return Explanation(
            title,
            f"the sandbox refused egress to {hosts}: a GitHub Enterprise host belongs in "
            f"{env_commands.GH_HOST.name}, a Copilot API in "
            f"{env_commands.COPILOT_API_URL.name}; any other host the CLI must reach, in "
            "--allow-domain HOST",
        )
    return Explanation(
        title,
        "check the runner's network on the way to GitHub's hosts (api.github.com, "
        f"*.githubcopilot.com): a proxy belongs in {env_commands.HTTPS_PROXY.name} (and "
        f"{env_commands.NODE_EXTRA_CA_CERTS.name} when it intercepts TLS), a firewall must "
        "allow them",
    )


def _no_usable_token(tokens: Tokens | None) -> Explanation:
    """The CLI had no GitHub login it could use: say what is known of the environment's."""
    names = " or ".join(env_commands.PLATFORM_TOKENS)
    if tokens is None:
        return Explanation(
            "No credential for the Copilot CLI",
            f"if {names} is set, the Copilot CLI refused it (a classic token, an expired or "
            "revoked one, an account without Copilot access) or could not reach GitHub; if "
            f"none is set, set {env_commands.PLATFORM_TOKENS[0]}; {ACCEPTED_TOKENS}",
        )
    if not tokens.present:
        return Explanation(
            "No credential for the Copilot CLI",
            f"none of {names} is set (and no stored login the CLI could use): "
            f"{how_to_set_a_token(tokens.in_actions)}; {ACCEPTED_TOKENS}",
        )
    used = tokens.present[0]  # the CLI takes the first in this order
    if used in tokens.classic:
        why = (
            f"{used} holds a classic personal access token ({_CLASSIC}...), which the "
            "Copilot CLI refuses"
        )
    else:
        why = (
            f"{used} is set, but the Copilot CLI could not use it: it may have expired or "
            'been revoked, lack Copilot access (the "Copilot Requests" permission, a Copilot '
            "seat), or GitHub was unreachable from the CLI (a proxy or firewall)"
        )
    where = "replace the secret's value" if tokens.in_actions else f"set {used} again"
    return Explanation(
        "The Copilot CLI could not use its GitHub token",
        f"{why}; {where} with a token it accepts: {ACCEPTED_TOKENS}",
    )


def refusal_title(title: str, problems: int) -> str:
    """The annotation's title for a run the harness refused to start."""
    return title if problems <= 1 else f"{problems} problems stop the run before it starts"


_TEXT_FIELD = re.compile(r' [A-Za-z]\w*=(?:"(?:[^"\\]|\\.)*"|\S+)')
"""One `key=value` field the driver's text log format appends to an entry's message."""


def brief_cause(message: str) -> str:
    """The driver's error message without the fields its text log format appends to
    it (`sessionId=... errorKind=... resultFile=...`): the cause, said once, as the
    JSON format's `message` says it. Each line alone; a line without such a tail (one
    that names no `errorKind`) is kept whole."""
    return "\n".join(_without_fields(line) for line in message.split("\n"))


def _without_fields(line: str) -> str:
    end = len(line)
    for field in reversed(list(_TEXT_FIELD.finditer(line))):
        if field.end() != end:
            break
        end = field.start()
    # A message of nothing but fields keeps them: they are all there is to say.
    return line[:end] if line[:end].strip() and " errorKind=" in line[end:] else line
