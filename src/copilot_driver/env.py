"""The environment table: every variable the driver reads, one `Variable` each.

DRIVER_VARIABLES are the driver's; env_commands.py holds those the harness and
the adapters read themselves, and secret_variables.py which values every redactor
masks. The table drives the driver's configuration parser (names, required
values and what to do when one is missing, how a soft setting falls back),
`copilot-driver --help` and docs/configuration.md's table (`env_docs`), and
the secrets every redactor masks (each `secret=True` variable, then every
secret-looking one). Pure and import-light: the CLI reads it before anything
heavy is loaded.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
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
SAFE_OUTPUTS = Variable(
    "GH_AW_SAFE_OUTPUTS",
    "set by gh-aw: its safe-outputs file (the driver only notes it is set)",
    "set by gh-aw's harness: the safe-outputs file whose terminal result arms the "
    "harness's post-result watchdog. The driver never reads the file; while it is set, "
    "the driver writes a `driver.waiting` entry whenever its log has been silent for a "
    "quarter of that watchdog's period during the turn, so a working run is not ended "
    "for silence",
)
HARNESS_WATCHDOG_MS = Variable(
    "GH_AW_HARNESS_WATCHDOG_TIMEOUT_MS",
    "gh-aw's post-result watchdog, in ms (default 120000): sets the keep-alive",
    "gh-aw's post-result watchdog period, read as gh-aw's harness reads it (a positive "
    "number of milliseconds, kept within 50 and 600000; anything else means 120000): with "
    "`GH_AW_SAFE_OUTPUTS` set, the driver's keep-alive entry comes after a quarter of it",
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
    SAFE_OUTPUTS,
    HARNESS_WATCHDOG_MS,
    SDK_READY_FD,
    SDK_LOADING,
    GITHUB_ACTIONS,
    PROVIDER_BASE_URL,
    PROVIDER_TYPE,
    PROVIDER_WIRE_API,
    PROVIDER_API_KEY,
)
"""What the driver reads, in the order `--help` and docs/configuration.md list them."""

DRIVER_SECRETS = tuple(variable.name for variable in DRIVER_VARIABLES if variable.secret)


def in_github_actions(env: Mapping[str, str]) -> bool:
    """GITHUB_ACTIONS=true (as the runner sets it): annotations, outputs, secrets advice."""
    return env.get(GITHUB_ACTIONS.name, "").strip().lower() == "true"


def value_of(env: Mapping[str, str], variable: Variable) -> str | None:
    """The variable's value, stripped; None when unset or blank."""
    value = env.get(variable.name)
    if value is None or not value.strip():
        return None
    return value.strip()


def session_state_base_dir(env: Mapping[str, str], cwd: Path) -> Path:
    """GH_AW_SESSION_STATE_BASE_DIR, else gh-aw's default under the temp folder.

    The driver writes the events file below it; the harness puts the sidecar's
    log beside that file.
    """
    state_dir = value_of(env, SESSION_STATE_BASE_DIR)
    if state_dir is not None:
        return cwd / state_dir
    return Path(tempfile.gettempdir()) / "gh-aw/sandbox/agent/logs/copilot-session-state"
