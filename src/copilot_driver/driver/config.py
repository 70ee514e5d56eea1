"""Environment -> DriverConfig: every rule and fallback of spec section 4.

Pure apart from reading the prompt file, and import-light on purpose: the
CLI validates the configuration before it imports the SDK (which costs most
of a second), so a misconfigured run fails in milliseconds.

`load_config` takes one step per part of the configuration, each in the module
that owns its rules (`prompt`, `address`, `provider`, `settings`, and the
policy's `permissions.inputs`). Rules worth knowing (docs/configuration.md has the table):
- Required variables are reported all at once, one problem per line, and
  never echo the connection token or the provider key.
- Soft settings (send timeout, log level, log format, ...) fall back to their
  defaults and leave a `notices` entry the driver logs at start, so an
  ignored value is visible rather than silent.
- Only the variables named here are read. In particular GITHUB_TOKEN,
  GH_TOKEN and COPILOT_GITHUB_TOKEN are never looked at (spec 4.2).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver.driver.address import normalise_sdk_uri
from copilot_driver.driver.catalog import ProviderCatalog
from copilot_driver.driver.prompt import PromptError, read_prompt
from copilot_driver.driver.provider import ProviderConfig, check_model, model_and_providers
from copilot_driver.driver.quoting import PATH_CHARS, Quote, quoter
from copilot_driver.driver.settings import keep_alive_interval_s, read_soft_settings
from copilot_driver.env import (
    CONNECTION_TOKEN,
    MODEL,
    PERMISSIONS,
    PROMPT,
    PROVIDER_API_KEY,
    SDK_READY_FD,
    SDK_URI,
    SERVER_ARGS,
    TOOL_CONFIG,
    WORKSPACE,
    in_github_actions,
    session_state_base_dir,
    value_of,
)
from copilot_driver.errors import CopilotDriverError
from copilot_driver.near_misses import misspelt_variables
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.inputs import resolve_policy
from copilot_driver.permissions.tool_contract import ToolContract
from copilot_driver.redaction import is_short_secret, url_userinfo_secrets
from copilot_driver.secret_variables import secret_looking_values
from copilot_driver.variable import (
    DEFAULT_IDLE_MS,
    DEFAULT_MAX_TOOL_DENIALS,
    LogFormat,
    LogLevel,
    ReasoningEffort,
    SdkLoadingMode,
    Variable,
)


class ConfigError(CopilotDriverError):
    """The configuration cannot be used; `problems` holds one line per issue."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class DriverConfig:
    prompt_path: Path
    prompt: str = field(repr=False)
    sdk_uri: str
    """Normalised `host:port` (a bare port means 127.0.0.1)."""
    connection_token: str = field(repr=False)
    model: str
    send_timeout_ms: int
    log_level: LogLevel
    log_format: LogFormat
    working_directory: Path
    session_state_base_dir: Path
    provider: ProviderConfig | None = None
    catalog: ProviderCatalog | None = None
    """gh-aw's provider catalog; with it, `model` is the `<provider>/<id>` it serves and
    `provider` is None."""
    permissions: PermissionConfig = field(default_factory=PermissionConfig)
    max_tool_denials: int = DEFAULT_MAX_TOOL_DENIALS
    """The tool-denials guard: the session stops at this many denials."""
    tool_contract: ToolContract | None = None
    """gh-aw's compiler-owned tool contract, when the workflow gives one."""
    idle_ms: int = DEFAULT_IDLE_MS
    """The idle watchdog: how long a session that answered may stay quiet without going idle."""
    reasoning_effort: ReasoningEffort | None = None
    """The routed model's effort (gh-aw's model routing), else the model's default."""
    sdk_ready_fd: int | None = None
    """A pipe from the harness to read before connecting (COPILOT_SDK_READY_FD)."""
    keep_alive_s: float | None = None
    """Seconds of log silence after which the driver says the turn is still in flight;
    None outside gh-aw's harness (heartbeat.py)."""
    github_actions: bool = False
    """GITHUB_ACTIONS=true: denials are also GitHub Actions warning annotations."""
    sdk_loading: SdkLoadingMode = "auto"
    """COPILOT_DRIVER_SDK_LOADING: `eager` turns the SDK's lazy loading off."""
    notices: tuple[str, ...] = ()
    """Values that were ignored in favour of a default, in words, for the start-up log."""
    misspelt_variables: tuple[str, ...] = ()
    """A sentence for each variable that looks like a misspelt one the driver reads."""
    short_secrets: tuple[str, ...] = ()
    """The secret variables whose value is too short to mask inside text."""
    environment_secrets: tuple[str, ...] = field(default=(), repr=False)
    """The values of the environment's secret-looking variables (`env.secrets_in`)."""

    @property
    def on_subscription(self) -> bool:
        """The model is served by the sidecar's GitHub sign-in (a Copilot subscription),
        not by a provider of the driver's own configuration."""
        return self.provider is None and self.catalog is None

    @property
    def send_timeout_s(self) -> float:
        """The SDK takes seconds; COPILOT_SDK_SEND_TIMEOUT_MS speaks milliseconds."""
        return self.send_timeout_ms / 1000

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in any log, event, output or error."""
        found = [self.connection_token, *self.environment_secrets]
        if self.provider and self.provider.api_key:
            found.append(self.provider.api_key)
        if self.provider:
            found.extend(url_userinfo_secrets(self.provider.base_url))
        return tuple(found)


def load_config(env: Mapping[str, str], *, cwd: Path | None = None) -> DriverConfig:
    """Resolve the driver's configuration from `env`, or raise ConfigError."""
    problems: list[str] = []
    notices: list[str] = []
    quote = quoter(env)
    prompt_path, prompt = _prompt(env, quote, problems)
    sdk_uri = _sdk_uri(env, quote, problems)
    # The token reaches the sidecar exactly as given (only a blank one is refused).
    token = env.get(CONNECTION_TOKEN.name, "") if _required(env, CONNECTION_TOKEN, problems) else ""
    model = check_model(_required(env, MODEL, problems), quote, problems)
    settings = read_soft_settings(env, notices, quote=quote)
    base = cwd if cwd is not None else Path.cwd()
    working_directory = _working_directory(value_of(env, WORKSPACE), base, quote, problems)
    provider, catalog, model = model_and_providers(env, model, quote, problems)
    policy = resolve_policy(
        permissions=env.get(PERMISSIONS.name),
        server_args=env.get(SERVER_ARGS.name),
        tool_config=env.get(TOOL_CONFIG.name),
    )
    problems += policy.problems
    sdk_ready_fd = _ready_fd(value_of(env, SDK_READY_FD), quote, problems)
    if problems:
        raise ConfigError(problems)
    assert model is not None  # for the type checker: a missing model is a problem above
    return DriverConfig(
        prompt_path=Path(prompt_path),
        prompt=prompt,
        sdk_uri=sdk_uri,
        connection_token=token,
        model=model,
        send_timeout_ms=settings.send_timeout_ms,
        log_level=settings.log_level,
        log_format=settings.log_format,
        working_directory=working_directory,
        session_state_base_dir=session_state_base_dir(env, base),
        provider=provider,
        catalog=catalog,
        permissions=policy.permissions,
        max_tool_denials=settings.max_tool_denials,
        tool_contract=policy.tool_contract,
        reasoning_effort=settings.reasoning_effort,
        idle_ms=settings.idle_ms,
        sdk_ready_fd=sdk_ready_fd,
        keep_alive_s=keep_alive_interval_s(env),
        github_actions=in_github_actions(env),
        sdk_loading=settings.sdk_loading,
        notices=tuple(notices),
        misspelt_variables=tuple(misspelt_variables(env)),
        short_secrets=_short_secrets(token, provider),
        environment_secrets=secret_looking_values(env),
    )


def _short_secrets(token: str, provider: ProviderConfig | None) -> tuple[str, ...]:
    """The secret variables whose value the redactor masks only as a whole value."""
    given = {CONNECTION_TOKEN.name: token, PROVIDER_API_KEY.name: provider and provider.api_key}
    return tuple(name for name, value in given.items() if value and is_short_secret(value))


def _required(env: Mapping[str, str], variable: Variable, problems: list[str]) -> str | None:
    """The variable's stripped value; when unset or blank, a problem that says the fix."""
    value = value_of(env, variable)
    if value is None:
        state = "is not set" if variable.name not in env else "is set but blank"
        problems.append(f"{variable.name} {state}: {variable.when_missing}")
    return value


def _prompt(env: Mapping[str, str], quote: Quote, problems: list[str]) -> tuple[str, str]:
    """GH_AW_PROMPT and the prompt it names ("" for either when it cannot be read)."""
    path = _required(env, PROMPT, problems)
    if path is None:
        return "", ""
    try:
        return path, read_prompt(Path(path), quote=quote)
    except PromptError as error:
        problems.append(str(error))
        return path, ""


def _sdk_uri(env: Mapping[str, str], quote: Quote, problems: list[str]) -> str:
    """COPILOT_SDK_URI as `HOST:PORT` ("" when it cannot be read)."""
    raw = _required(env, SDK_URI, problems)
    if raw is None:
        return ""
    try:
        return normalise_sdk_uri(raw, quote=quote)
    except ValueError as error:
        problems.append(f"{SDK_URI.name} is invalid: {error}")
        return ""


def _ready_fd(raw: str | None, quote: Quote, problems: list[str]) -> int | None:
    """An inherited pipe's descriptor (3 or more), or None when unset."""
    if raw is None:
        return None
    text = raw.strip()
    # The length check comes first: int() refuses strings of thousands of digits.
    if not (text.isascii() and text.isdigit() and len(text) <= 7) or not 3 <= int(text) < 1 << 20:
        problems.append(
            f"{SDK_READY_FD.name} is {quote(raw)}, not a file descriptor number "
            "(3 or more): only the harness sets it; unset it to connect at once"
        )
        return None
    try:
        is_pipe = stat.S_ISFIFO(os.fstat(int(text)).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:
        problems.append(
            f"{SDK_READY_FD.name} is {text}, which is not an open pipe in this "
            "process: only the harness sets it; unset it to connect at once"
        )
        return None
    return int(text)


def _working_directory(
    workspace: str | None, base: Path, quote: Quote, problems: list[str]
) -> Path:
    """GITHUB_WORKSPACE resolved against `base`, or `base` when unset."""
    if workspace is None:
        return base
    try:
        working_directory = (base / workspace).resolve()
        usable = working_directory.is_dir()
        why = "is not a directory"
    except OSError as error:  # a name too long, a loop of links...
        usable, why = False, f"cannot be used ({error.strerror or error})"
    if not usable:
        problems.append(
            f"{WORKSPACE.name} {why}: {quote(workspace, PATH_CHARS)}: "
            "set it to the checkout the agent works in, or unset it"
        )
    return working_directory if usable else base
