"""The environment table: every variable the package reads, one `Variable` each.

DRIVER_VARIABLES are the driver's, HARNESS_VARIABLES those the harness reads
itself. The table drives the driver's configuration parser (names, required
values and what to do when one is missing, how a soft setting falls back),
`copilot-driver --help` and the README's table of variables (`env_docs`), and
the secrets every redactor masks (each `secret=True` variable, then every
secret-looking one). Pure and import-light: the CLI reads it before anything
heavy is loaded.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from copilot_driver.variable import (
    DEFAULT_IDLE_MS,
    DEFAULT_LOG_LEVEL,
    DEFAULT_MAX_TOOL_DENIALS,
    DEFAULT_SEND_TIMEOUT_MS,
    LOG_LEVELS,
    MAX_SEND_TIMEOUT_MS,
    REASONING_EFFORTS,
    Variable,
)

PROMPT = Variable(
    "GH_AW_PROMPT",
    "path of the prompt file (required)",
    "required; path of a readable regular file (a FIFO or directory is refused without "
    "blocking), UTF-8 (a BOM is dropped) with no NUL byte, not empty or blank",
    required=True,
    when_missing="set it to the path of the prompt file",
)
SDK_URI = Variable(
    "COPILOT_SDK_URI",
    "sidecar address: PORT, HOST:PORT, http://HOST:PORT (required)",
    "required; `PORT` (means `127.0.0.1:PORT`), `HOST:PORT`, `[IPv6]:PORT` or "
    "`http(s)://HOST:PORT`",
    required=True,
    when_missing="set it to the sidecar's address (PORT, HOST:PORT or http://HOST:PORT)",
)
CONNECTION_TOKEN = Variable(
    "COPILOT_CONNECTION_TOKEN",
    "per-run token shared with the sidecar (required, secret)",
    "required, non-blank; the only credential the driver uses; never logged or echoed",
    required=True,
    when_missing="the harness must pass the sidecar's per-run connection token to the driver",
    secret=True,
)
SDK_READY_FD = Variable(
    "COPILOT_SDK_READY_FD",
    "set by the harness: a pipe that says when the sidecar listens",
    "set by the harness when it starts the driver while the sidecar is still starting: "
    "the number of an inherited pipe; the driver reads it before connecting (a line: the "
    "sidecar listens; end of file: it failed, exit 1) and waits at most 10 minutes. "
    "Unset: the driver connects at once",
)
MODEL = Variable(
    "COPILOT_MODEL",
    "model name (required)",
    "required, non-blank (the spec requires it; the reference driver does not)",
    required=True,
    when_missing="set it to the model name (e.g. gpt-5-mini)",
)
SEND_TIMEOUT_MS = Variable(
    "COPILOT_SDK_SEND_TIMEOUT_MS",
    "send timeout in ms (default 600000)",
    "whole milliseconds from 1 to 2147483647 (surrounding spaces allowed); anything else "
    "(unset, `0`, `-1`, `1.5`, `1e3`, `0x10`, larger values) means 600000, with a "
    "`config.fallback` warning when a value was ignored. The SDK takes seconds; the driver "
    "converts",
    kind="count",
    default=DEFAULT_SEND_TIMEOUT_MS,
    limit=MAX_SEND_TIMEOUT_MS,
    unit="milliseconds",
)
LOG_LEVEL = Variable(
    "COPILOT_SDK_LOG_LEVEL",
    "none|error|warning|info|debug|all (default warning)",
    "`none error warning info debug all` (any case); anything else means `warning` (with a "
    "`config.fallback` warning). Passed to the SDK client; at `debug`/`all` the SDK's own log "
    "and the driver's debug entries are shown, below that the SDK's logger is silenced (it "
    "prints tracebacks for expected fallbacks). Lifecycle, denial and error entries are audit "
    "records and are written at every level",
    kind="choice",
    default=DEFAULT_LOG_LEVEL,
    choices=LOG_LEVELS,
)
LOG_FORMAT = Variable(
    "COPILOT_DRIVER_LOG_FORMAT",
    "json|text (default json)",
    "`json` (default) or `text`; anything else means `json` with a warning",
    kind="choice",
    default="json",
    choices=("json", "text"),
)
WORKSPACE = Variable(
    "GITHUB_WORKSPACE",
    "working directory of the session (default: current)",
    "working directory of the client and the session when set (must be a directory); else "
    "the current directory",
)
SESSION_STATE_BASE_DIR = Variable(
    "GH_AW_SESSION_STATE_BASE_DIR",
    "folder of <sessionId>/events.jsonl and result.json",
    "base folder of the events and result files; default "
    "`$TMPDIR/gh-aw/sandbox/agent/logs/copilot-session-state`",
)
SERVER_ARGS = Variable(
    "GH_AW_COPILOT_SDK_SERVER_ARGS",
    "sidecar args (JSON array); its --allow-tool, --deny-tool flags: the policy",
    "the sidecar's CLI arguments as a JSON array of strings; its `--allow-all-tools`, "
    "`--allow-tool VALUE` and `--deny-tool VALUE` flags are the permission policy (see "
    "below). Unset, blank, or without those flags: no configuration. Set but anything else "
    "(single quotes, a trailing comma, a number inside, a flag without its value, a blank "
    'rule such as `--allow-tool ""`, a key given twice) is a '
    'configuration error that says what is wrong, never "no configuration" (which would '
    "approve every request). The harness reads it with the same parser and refuses the same "
    "values before starting the sidecar",
)
TOOL_CONFIG = Variable(
    "GH_AW_COPILOT_SDK_TOOL_CONFIG",
    "gh-aw's tool contract (JSON): capabilities and the allowlist",
    "gh-aw's compiler-owned tool contract, version 1: six capability booleans (`bash`, "
    "`edit`, `webFetch`, `webSearch`, `mcp`, `cliProxy`), `permissions.allowedTools` (the "
    "permission policy; it takes precedence over the two variables below, whose deny rules "
    "still apply), `explicitlyDisabledTools`, an optional `maxToolCalls` budget. Checked as a "
    "whole before the session exists: anything missing, mistyped or contradictory is a "
    "configuration error, and version 2 (the `go-repository` profile) is refused. Unset: the "
    "1.0.2 behaviour",
)
PROVIDER_CATALOG = Variable(
    "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON",
    "gh-aw's provider catalog (JSON): providers and models",
    'gh-aw\'s provider catalog `{"providers": [{name, type, baseUrl, wireApi?}], '
    '"models": [{id, provider}]}`: the session\'s providers and models. `COPILOT_MODEL` is '
    "resolved against it (`<provider>/<id>`, `copilot/<id>` or a bare id); a model it cannot "
    "serve, or a catalog that is not complete, is a configuration error. When it is set, the "
    "`COPILOT_PROVIDER_*` variables are left to the sidecar",
)
MODEL_ROUTING = Variable(
    "GH_AW_MODEL_ROUTING",
    "1: gh-aw routed the model; its effort applies",
    "`1` when gh-aw's firewall routed the model; only then is the routing effort read",
)
ROUTING_EFFORT = Variable(
    "GH_AW_COPILOT_ROUTING_EFFORT",
    "the routed model's effort: low|medium|high|xhigh|max",
    "with `GH_AW_MODEL_ROUTING=1`, the session's reasoning effort: `low`, `medium`, `high`, "
    "`xhigh` or `max` (what the SDK accepts); `none`, `minimal` or anything else leaves the "
    "model's default, with a `config.fallback` warning",
    kind="choice",
    choices=REASONING_EFFORTS,
    fallback="the model's default effort",
)
PERMISSIONS = Variable(
    "GH_AW_COPILOT_SDK_PERMISSIONS",
    'explicit policy {"allowAllTools", "allowedTools", "deniedTools"}',
    'an explicit policy `{"allowAllTools": bool, "allowedTools": [str, ...], "deniedTools": '
    "[str, ...]}`; takes precedence when set; invalid JSON, a wrong type, an unknown key, a "
    "key given twice or a blank rule is a configuration error (a policy someone wrote is "
    "never widened to allow-all)",
)
MAX_TOOL_DENIALS = Variable(
    "GH_AW_MAX_TOOL_DENIALS",
    "stop the session after this many denials (default 5)",
    "the tool-denials guard: a positive whole number, default 5 (anything else means 5, with "
    "a warning)",
    kind="count",
    default=DEFAULT_MAX_TOOL_DENIALS,
    limit=999_999_999,
)
IDLE_MS = Variable(
    "GH_AW_SDK_IDLE_MS",
    "idle watchdog after the answer, in ms (default 30000)",
    "the idle watchdog: once the session has answered, with no tool call running and no "
    "assistant turn open, it may stay this many milliseconds without going idle before the "
    "driver ends the turn with that answer (exit 0, a `session.idle_timeout` warning); a "
    "positive whole number, default 30000 (anything else means 30000, with a warning)",
    kind="count",
    default=DEFAULT_IDLE_MS,
    limit=MAX_SEND_TIMEOUT_MS,
    unit="milliseconds",
)
SDK_LOADING = Variable(
    "COPILOT_DRIVER_SDK_LOADING",
    "auto|eager (default auto): lazy loading of the SDK's generated modules",
    "`auto` (default): the SDK's generated modules are built on first use where this "
    "exact SDK release was verified and its cache built (`python -m "
    "copilot_driver.sdk_loading build`), else imported as usual; `eager`: always imported "
    "as usual. Anything else means `eager`, with a warning. The choice and its reason are "
    "in the `connection.start` entry (`sdkLoading`, `sdkLoadingReason`)",
    kind="choice",
    default="auto",
    choices=("auto", "eager"),
    unreadable="eager",
)
GITHUB_ACTIONS = Variable(
    "GITHUB_ACTIONS",
    "true: denials and unusable rules are also Actions annotations",
    "`true`: each denial, and each rule that can never match, is also a GitHub Actions "
    "warning annotation (on stderr)",
)
PROVIDER_BASE_URL = Variable(
    "COPILOT_PROVIDER_BASE_URL",
    "optional bring-your-own-model provider: its base URL",
    "optional bring-your-own-model provider for the session (the names the Copilot CLI "
    "documents): its `http(s)://` base URL. Setting the other `COPILOT_PROVIDER_*` variables "
    "without it is an error",
)
PROVIDER_TYPE = Variable(
    "COPILOT_PROVIDER_TYPE",
    "the provider's type: openai (default), azure, anthropic",
    "the provider's type: `openai` (default), `azure` or `anthropic`",
)
PROVIDER_WIRE_API = Variable(
    "COPILOT_PROVIDER_WIRE_API",
    "the provider's API: completions, responses",
    "the provider's API: `completions` or `responses`",
)
PROVIDER_API_KEY = Variable(
    "COPILOT_PROVIDER_API_KEY",
    "the provider's key (secret)",
    "the provider's key: a secret like the token (at most 4096 characters, no whitespace)",
    secret=True,
)

DRIVER_VARIABLES: tuple[Variable, ...] = (
    PROMPT,
    SDK_URI,
    CONNECTION_TOKEN,
    MODEL,
    SEND_TIMEOUT_MS,
    LOG_LEVEL,
    LOG_FORMAT,
    WORKSPACE,
    SESSION_STATE_BASE_DIR,
    TOOL_CONFIG,
    PROVIDER_CATALOG,
    MODEL_ROUTING,
    ROUTING_EFFORT,
    SERVER_ARGS,
    PERMISSIONS,
    MAX_TOOL_DENIALS,
    IDLE_MS,
    SDK_READY_FD,
    SDK_LOADING,
    GITHUB_ACTIONS,
    PROVIDER_BASE_URL,
    PROVIDER_TYPE,
    PROVIDER_WIRE_API,
    PROVIDER_API_KEY,
)
"""What the driver reads, in the order `--help` and the README list them."""

DRIVER_SECRETS = tuple(variable.name for variable in DRIVER_VARIABLES if variable.secret)

COPILOT_GITHUB_TOKEN = Variable(
    "COPILOT_GITHUB_TOKEN",
    "the Copilot CLI's GitHub token, its first choice (secret)",
    "a GitHub token for the Copilot CLI, preferred to the two below; only the sidecar sees it",
    secret=True,
)
GH_TOKEN = Variable(
    "GH_TOKEN",
    "the Copilot CLI's GitHub token, its second choice (secret)",
    "a GitHub token for the Copilot CLI when `COPILOT_GITHUB_TOKEN` is unset",
    secret=True,
)
GITHUB_TOKEN = Variable(
    "GITHUB_TOKEN",
    "the Copilot CLI's GitHub token, its last choice (secret)",
    "a GitHub token for the Copilot CLI when the two above are unset",
    secret=True,
)
COPILOT_CLI_PATH = Variable(
    "COPILOT_CLI_PATH",
    "the Copilot CLI binary, when no --copilot (else `copilot` on PATH)",
    "the Copilot CLI binary the harness starts as the sidecar, unless `--copilot` names one",
)
HARNESS_TIMEOUT_MINUTES = Variable(
    "GH_AW_TIMEOUT_MINUTES",
    "the job's timeout: no retry past it",
    "the job's timeout in minutes: no retry past it; the send timeout ends 30 s before it",
)
GITHUB_OUTPUT = Variable(
    "GITHUB_OUTPUT",
    "set by the runner: the file of the step's outputs",
    "set by the GitHub Actions runner: the harness writes the run's step outputs to this file",
)
GITHUB_STEP_SUMMARY = Variable(
    "GITHUB_STEP_SUMMARY",
    "set by the runner: the file of the step's summary",
    "set by the GitHub Actions runner: the harness appends the run's report to this file",
)
CI = Variable(
    "CI",
    "true: no live status line, even on a terminal",
    "`true` (as CI services set it): the harness draws no live status line on stderr",
)
HOME = Variable(
    "HOME",
    "the home folder: where a stored login is looked for",
    "with no token set, where a stored login is looked for: `~/.copilot`, `~/.config/gh`",
)
COPILOT_HOME = Variable(
    "COPILOT_HOME",
    "the Copilot CLI's folder (default ~/.copilot)",
    "the Copilot CLI's folder, where `copilot login` keeps a login (`$HOME/.copilot`)",
)
GH_CONFIG_DIR = Variable(
    "GH_CONFIG_DIR",
    "the GitHub CLI's folder (default ~/.config/gh)",
    "the GitHub CLI's folder, where `gh auth login` keeps a login (`$HOME/.config/gh`)",
)

GH_HOST = Variable(
    "GH_HOST",
    "a GitHub Enterprise Cloud host (`acme.ghe.com`) the CLI signs in to",
    "the GitHub host the Copilot CLI signs in to (`acme.ghe.com`; default github.com); "
    "the sandbox allows it and its subdomains",
)
COPILOT_GH_HOST = Variable(
    "COPILOT_GH_HOST",
    "as GH_HOST, for the Copilot CLI only (it wins over GH_HOST)",
    "as `GH_HOST`, read by the Copilot CLI only and preferred to it",
)
COPILOT_API_URL = Variable(
    "COPILOT_API_URL",
    "the Copilot API's base URL, instead of the one GitHub names",
    "the Copilot API's base URL, instead of the `endpoints.api` GitHub gives the CLI; "
    "the sandbox allows its host:port",
)
COPILOT_DEBUG_GITHUB_API_URL = Variable(
    "COPILOT_DEBUG_GITHUB_API_URL",
    "GitHub's API base URL (tests, a local stand-in)",
    "GitHub's API base URL for the Copilot CLI (a local stand-in such as "
    "`copilot_driver.testing.github_api`); the sandbox allows its host:port",
)
HTTPS_PROXY = Variable(
    "HTTPS_PROXY",
    "the proxy for HTTPS (also https_proxy)",
    "an `http://[user:password@]host:port` proxy the CLI's HTTPS goes through (also "
    "`https_proxy`, `HTTP_PROXY` for plain HTTP, `NO_PROXY` for exceptions); in the sandbox "
    "its egress proxy goes through it; a password in it is masked like a secret",
)
NODE_EXTRA_CA_CERTS = Variable(
    "NODE_EXTRA_CA_CERTS",
    "a PEM file of extra trusted CAs (an intercepting proxy)",
    "a PEM file of certificate authorities the CLI trusts besides the system's (a proxy "
    "that intercepts TLS); visible read-only in the sandbox",
)

HARNESS_VARIABLES: tuple[Variable, ...] = (
    COPILOT_GITHUB_TOKEN,
    GH_TOKEN,
    GITHUB_TOKEN,
    COPILOT_CLI_PATH,
    HARNESS_TIMEOUT_MINUTES,
    GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY,
    CI,
    HOME,
    COPILOT_HOME,
    GH_CONFIG_DIR,
    GH_HOST,
    COPILOT_GH_HOST,
    COPILOT_API_URL,
    COPILOT_DEBUG_GITHUB_API_URL,
    HTTPS_PROXY,
    NODE_EXTRA_CA_CERTS,
)
"""What the harness (copilot-driver-run) reads itself, beside the driver's variables it
checks or passes on."""

PLATFORM_TOKENS = (COPILOT_GITHUB_TOKEN.name, GH_TOKEN.name, GITHUB_TOKEN.name)
"""The Copilot CLI's GitHub credentials, in the order it prefers them. The sidecar
keeps them; the driver never reads them (spec 4.2)."""
GITHUB_HOST_VARIABLES = (
    GH_HOST.name,
    COPILOT_GH_HOST.name,
    COPILOT_API_URL.name,
    COPILOT_DEBUG_GITHUB_API_URL.name,
)
"""Where the Copilot CLI finds GitHub and the Copilot API: the sidecar gets them, and
the sandbox allows the hosts they name."""
PROXY_VARIABLES = tuple(
    case(name)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")
    for case in (str.upper, str.lower)
)
"""A proxy the harness's network goes through (curl's and Node's names, both cases)."""
GITHUB_CREDENTIALS = (*PLATFORM_TOKENS, "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
"""Everything the CLI (and gh, whose credentials it honours) accepts as a GitHub token:
the harness takes all of them out of the driver's environment."""
ADAPTER_SECRETS = (*PLATFORM_TOKENS, PROVIDER_API_KEY.name, "CODEX_API_KEY", "OPENAI_API_KEY")
"""What the agent adapters mask in everything they print."""


def in_github_actions(env: Mapping[str, str]) -> bool:
    """GITHUB_ACTIONS=true (as the runner sets it): annotations, outputs, secrets advice."""
    return env.get(GITHUB_ACTIONS.name, "").strip().lower() == "true"


def value_of(env: Mapping[str, str], variable: Variable) -> str | None:
    """The variable's value, stripped; None when unset or blank."""
    value = env.get(variable.name)
    if value is None or not value.strip():
        return None
    return value.strip()


SECRET_LOOKING_NAME = re.compile(r"_(?:TOKEN|KEY|SECRET|PASSWORD)$|^ACTIONS_", re.IGNORECASE)
"""Variables whose values are masked in everything written, whoever set them: the names
GitHub's runner and most CI secrets use (`NPM_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
`ACTIONS_RUNTIME_TOKEN`, ...)."""
MIN_SECRET_LOOKING_CHARS = 8
"""Shorter values of such variables (`ACTIONS_STEP_DEBUG=true`) are settings, not secrets:
masking them would punch holes in ordinary text."""


_NAMED_SECRETS = frozenset(
    variable.name for variable in (*DRIVER_VARIABLES, *HARNESS_VARIABLES) if variable.secret
)


def secrets_in(env: Mapping[str, str], names: Iterable[str] = DRIVER_SECRETS) -> tuple[str, ...]:
    """The secret values `env` holds, as given (a Redactor masks the stripped form too):
    those of `names`, then every secret-looking one (`secret_looking_values`)."""
    named = [env.get(name, "") for name in names]
    return tuple(dict.fromkeys([*named, *secret_looking_values(env)]))


def secret_looking_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the variables SECRET_LOOKING_NAME names, at least
    MIN_SECRET_LOOKING_CHARS long, but for the named secrets: the platform tokens are
    never read here (the driver never reads them; the harness names them itself), the
    driver's own (DRIVER_SECRETS) are read by name."""
    found = []
    for name in env:
        if name in _NAMED_SECRETS or not SECRET_LOOKING_NAME.search(name):
            continue
        value = env[name]
        if len(value.strip()) >= MIN_SECRET_LOOKING_CHARS:
            found.append(value)
    return tuple(dict.fromkeys(found))


def session_state_base_dir(env: Mapping[str, str], cwd: Path) -> Path:
    """GH_AW_SESSION_STATE_BASE_DIR, else gh-aw's default under the temp folder.

    The driver writes the events file below it; the harness puts the sidecar's
    log beside that file.
    """
    state_dir = value_of(env, SESSION_STATE_BASE_DIR)
    if state_dir is not None:
        return cwd / state_dir
    return Path(tempfile.gettempdir()) / "gh-aw/sandbox/agent/logs/copilot-session-state"
