"""Environment -> DriverConfig: every rule and fallback of spec section 4.

Pure apart from reading the prompt file, and import-light on purpose: the
CLI validates the configuration before it imports the SDK (which costs most
of a second), so a misconfigured run fails in milliseconds.

Rules worth knowing (the README has the full table):
- Required variables are reported all at once, one problem per line, and
  never echo the connection token or the provider key.
- Soft settings (send timeout, log level, log format) fall back to their
  defaults and leave a `notices` entry the driver logs at start, so an
  ignored value is visible rather than silent.
- Only the variables named here are read. In particular GITHUB_TOKEN,
  GH_TOKEN and COPILOT_GITHUB_TOKEN are never looked at (spec 4.2).
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from copilot_driver import env as contract
from copilot_driver.driver.catalog import (
    PROVIDER_TYPES,
    WIRE_APIS,
    CatalogError,
    ProviderCatalog,
    parse_catalog,
)
from copilot_driver.env import (
    DEFAULT_LOG_LEVEL,
    LOG_LEVELS,
    REASONING_EFFORTS,
    LogFormat,
    LogLevel,
    ReasoningEffort,
    value_of,
)
from copilot_driver.formatting import escape_line_breaks
from copilot_driver.permissions.config import PermissionConfig, resolve_permissions
from copilot_driver.permissions.tool_contract import (
    ToolContract,
    ToolContractError,
    parse_tool_contract,
)
from copilot_driver.redaction import Redactor, mask_url_userinfo, url_userinfo_secrets

DEFAULT_SEND_TIMEOUT_MS = 600_000
DEFAULT_MAX_TOOL_DENIALS = 5
DEFAULT_IDLE_MS = 30_000
MAX_SEND_TIMEOUT_MS = 2**31 - 1
"""Larger values are treated as absurd (the largest timer a Node driver can set)."""
MAX_TOOL_DENIALS = 999_999_999


MAX_MODEL_CHARS = 200
MAX_PROVIDER_KEY_CHARS = 4096
"""Longer keys make the CLI 1.0.102 sidecar stop answering (docs/sdk-defects.md)."""

_POSITIVE_INT = re.compile(r"[1-9][0-9]*")
_NOTICE_VALUE_CHARS = 40
_PATH_CHARS = 300

_SHOWN_PREFIX_CHARS = 8
"""How much of a value longer than its limit an error shows, before `…` and its length."""
_SECRET_PREFIX_CHARS = 4
"""How much of a token-shaped value an error shows: `ghp_…` says what it is, no more."""

TOKEN_PREFIX = re.compile(r"^\s*(gh[pousr]_|github_pat_|sk-)")
"""GitHub token prefixes and `sk-`-style API keys: such a value is a secret, never a
model name or a path, whatever variable it was pasted into."""
_WORD = re.compile(r"[^\s/\\:@]+")
_SECRET_CHARS = re.compile(r"[A-Za-z0-9_+=.-]+")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")

Quote = Callable[..., str]
"""How an error message echoes user input: `quote(value, limit=40)`."""


def looks_like_secret(value: str) -> bool:
    """Whether `value`, or a word of it (a path component, a URL part), is shaped like a
    token or key: a GitHub/`sk-` prefix, 32+ hex digits, or a long mixed-case run of
    letters and digits with high entropy."""
    for word in _WORD.findall(value):
        if TOKEN_PREFIX.match(word) or _HEX.fullmatch(word):
            return True
        if (
            len(word) >= 20
            and _SECRET_CHARS.fullmatch(word)
            and any(c.isupper() for c in word)
            and any(c.islower() for c in word)
            and any(c.isdigit() for c in word)
            and _entropy(word) >= 3.5
        ):
            return True
    return False


def _entropy(word: str) -> float:
    """Shannon entropy in bits per character."""
    counts = [word.count(char) for char in set(word)]
    return -sum(n / len(word) * math.log2(n / len(word)) for n in counts)


def _shorten(value: str, limit: int = _NOTICE_VALUE_CHARS) -> str:
    """Quote user input in an error without flooding the log (or a newline), and never
    echo a secret: a token-shaped value shows its first 4 characters, a value longer than
    `limit` its first 8, each followed by `…` and its length (`ghp_… (40 characters)`)."""
    if looks_like_secret(value):
        return _prefix(value, _SECRET_PREFIX_CHARS)
    if len(value) > limit:
        return _prefix(value, _SHOWN_PREFIX_CHARS)
    return escape_line_breaks(value)


def _prefix(value: str, chars: int) -> str:
    shown = escape_line_breaks(value.strip()[:chars])
    return f"{shown}… ({len(value)} characters)"


class ConfigError(Exception):
    """The configuration cannot be used; `problems` holds one line per issue."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ProviderConfig:
    """A bring-your-own-model provider for the session (the CLI's own names)."""

    base_url: str = field(repr=False)
    type: str = "openai"
    wire_api: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @property
    def shown_url(self) -> str:
        """The base URL as logs and errors write it: userinfo (`user:key@`) as `***@`."""
        return mask_url_userinfo(self.base_url)

    def to_sdk(self) -> dict[str, str]:
        """The SDK's `ProviderConfig` mapping."""
        provider = {"type": self.type, "base_url": self.base_url}
        if self.wire_api:
            provider["wire_api"] = self.wire_api
        if self.api_key:
            provider["api_key"] = self.api_key
        return provider


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
    github_actions: bool = False
    """GITHUB_ACTIONS=true: denials are also GitHub Actions warning annotations."""
    notices: tuple[str, ...] = ()
    """Values that were ignored in favour of a default, in words, for the start-up log."""
    environment_secrets: tuple[str, ...] = field(default=(), repr=False)
    """The values of the environment's secret-looking variables (`env.secrets_in`)."""

    @property
    def send_timeout_s(self) -> float:
        """The SDK takes seconds; the contract speaks milliseconds."""
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
    redactor = Redactor(environment_secrets(env))

    def quote(value: str, limit: int = _NOTICE_VALUE_CHARS) -> str:
        """Echo user input: secrets masked before shortening, so no part leaks."""
        return _shorten(redactor.text(value), limit)

    def required(variable: contract.Variable) -> str | None:
        value = value_of(env, variable)
        if value is None:
            problems.append(f"{variable.name} is not set: {variable.when_missing}")
        return value

    prompt_path_raw = required(contract.PROMPT)
    prompt = ""
    if prompt_path_raw is not None:
        try:
            prompt = read_prompt(Path(prompt_path_raw), quote=quote)
        except PromptError as error:
            problems.append(str(error))

    sdk_uri_raw = required(contract.SDK_URI)
    sdk_uri = ""
    if sdk_uri_raw is not None:
        try:
            sdk_uri = normalise_sdk_uri(sdk_uri_raw, quote=quote)
        except ValueError as error:
            problems.append(f"{contract.SDK_URI.name} is invalid: {error}")

    # The token reaches the sidecar exactly as given (only a blank one is refused).
    token = (
        env.get(contract.CONNECTION_TOKEN.name, "") if required(contract.CONNECTION_TOKEN) else ""
    )

    model = required(contract.MODEL)
    if model is not None and TOKEN_PREFIX.match(model):
        problems.append(
            f"{contract.MODEL.name} looks like a token, not a model name: set it to a model "
            f"such as gpt-5 (it is {quote(model)}), and put the token in the variable it "
            "belongs to"
        )
        model = None
    elif model is not None and (len(model) > MAX_MODEL_CHARS or not model.isprintable()):
        problems.append(_not_a_model_name(quote(model)))

    send_timeout_ms = parse_send_timeout_ms(
        env.get(contract.SEND_TIMEOUT_MS.name), notices, quote=quote
    )
    log_level = parse_log_level(env.get(contract.LOG_LEVEL.name), notices, quote=quote)
    log_format = parse_log_format(env.get(contract.LOG_FORMAT.name), notices, quote=quote)

    base = cwd if cwd is not None else Path.cwd()
    working_directory = _working_directory(value_of(env, contract.WORKSPACE), base, quote, problems)

    provider, catalog, model = _model_and_providers(env, model, quote, problems)

    permissions, tool_contract = _permissions(env, problems)
    reasoning_effort = parse_routing_effort(env, notices, quote=quote)
    idle_ms = _positive_whole_number(
        env.get(contract.IDLE_MS.name),
        contract.IDLE_MS.name,
        what="a positive whole number of milliseconds",
        limit=MAX_SEND_TIMEOUT_MS,
        default=DEFAULT_IDLE_MS,
        notices=notices,
        quote=quote,
    )
    max_tool_denials = parse_max_tool_denials(
        env.get(contract.MAX_TOOL_DENIALS.name), notices, quote=quote
    )
    sdk_ready_fd = _ready_fd(value_of(env, contract.SDK_READY_FD), quote, problems)

    if problems:
        raise ConfigError(problems)
    assert model is not None  # for the type checker: a missing model is a problem above
    return DriverConfig(
        prompt_path=Path(str(prompt_path_raw)),
        prompt=prompt,
        sdk_uri=sdk_uri,
        connection_token=token,
        model=model,
        send_timeout_ms=send_timeout_ms,
        log_level=log_level,
        log_format=log_format,
        working_directory=working_directory,
        session_state_base_dir=contract.session_state_base_dir(env, base),
        provider=provider,
        catalog=catalog,
        permissions=permissions,
        max_tool_denials=max_tool_denials,
        tool_contract=tool_contract,
        reasoning_effort=reasoning_effort,
        idle_ms=idle_ms,
        sdk_ready_fd=sdk_ready_fd,
        github_actions=contract.in_github_actions(env),
        notices=tuple(notices),
        environment_secrets=contract.secret_looking_values(env),
    )


def _ready_fd(raw: str | None, quote: Quote, problems: list[str]) -> int | None:
    """An inherited pipe's descriptor (3 or more), or None when unset."""
    if raw is None:
        return None
    text = raw.strip()
    # The length check comes first: int() refuses strings of thousands of digits.
    if not (text.isascii() and text.isdigit() and len(text) <= 7) or not 3 <= int(text) < 1 << 20:
        problems.append(
            f"{contract.SDK_READY_FD.name} is {quote(raw)}, not a file descriptor number "
            "(3 or more): only the harness sets it; unset it to connect at once"
        )
        return None
    try:
        is_pipe = stat.S_ISFIFO(os.fstat(int(text)).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:
        problems.append(
            f"{contract.SDK_READY_FD.name} is {text}, which is not an open pipe in this "
            "process: only the harness sets it; unset it to connect at once"
        )
        return None
    return int(text)


def _model_and_providers(
    env: Mapping[str, str], model: str | None, quote: Quote, problems: list[str]
) -> tuple[ProviderConfig | None, ProviderCatalog | None, str | None]:
    """The session's provider(s) and its model: gh-aw's catalog when it is given (the
    `COPILOT_PROVIDER_*` variables are then the sidecar's own), else the single
    bring-your-own-model provider, if any."""
    try:
        catalog = parse_catalog(env.get(contract.PROVIDER_CATALOG.name))
    except CatalogError as error:
        problems.append(str(error))
        return None, None, model
    if catalog is None:
        try:
            return parse_provider(env, quote=quote), None, model
        except ValueError as error:
            problems.append(str(error))
            return None, None, model
    if model is None:
        return None, catalog, None  # reported as missing already
    served = catalog.resolve(model)
    if served is None:
        problems.append(
            f"{contract.MODEL.name}={quote(model)!r} is not a model "
            f"{contract.PROVIDER_CATALOG.name} serves ({catalog.served()}): set "
            f"{contract.MODEL.name} to one of them"
        )
        return None, catalog, model
    return None, catalog, served.qualified


def _permissions(
    env: Mapping[str, str], problems: list[str]
) -> tuple[PermissionConfig, ToolContract | None]:
    """The policy, from the tool contract when there is one, else from the 1.0.2 inputs."""
    permissions = PermissionConfig()
    try:
        permissions = resolve_permissions(env)
    except ValueError as error:
        problems.append(
            f"{error} (a permission policy that cannot be read is never widened to allow-all)"
        )
    try:
        tool_contract = parse_tool_contract(env.get(contract.TOOL_CONFIG.name))
    except ToolContractError as error:
        problems.append(str(error))
        return permissions, None
    if tool_contract is None:
        return permissions, None
    # The compiler's allowlist is the policy; deny rules given elsewhere still narrow it.
    source = contract.TOOL_CONFIG.name
    allowed = tool_contract.allowed_tools
    workflow_kind = tool_contract.can("dynamicWorkflows")
    scoped = PermissionConfig(False, allowed, source, permissions.denied_tools, workflow_kind)
    return scoped, tool_contract


def _not_a_model_name(quoted: str) -> str:
    return (
        f"{contract.MODEL.name}={quoted!r} is not a model name (at most "
        f"{MAX_MODEL_CHARS} printable characters, e.g. gpt-4.1)"
    )


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
            f"{contract.WORKSPACE.name} {why}: {quote(workspace, _PATH_CHARS)}: "
            "set it to the checkout the agent works in, or unset it"
        )
    return working_directory if usable else base


def environment_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """The secrets `env` holds, as given, for a Redactor before a DriverConfig exists
    (the userinfo of the provider's base URL included)."""
    base_url = env.get(contract.PROVIDER_BASE_URL.name, "")
    return tuple(dict.fromkeys([*contract.secrets_in(env), *url_userinfo_secrets(base_url)]))


class PromptError(Exception):
    pass


def read_prompt(path: Path, *, quote: Quote = _shorten) -> str:
    """Read the prompt: a readable, non-empty, UTF-8 regular file without NUL bytes.

    The file type is checked before opening, so a FIFO or a device given by
    mistake fails at once instead of blocking the driver.
    """
    shown = quote(str(path), _PATH_CHARS)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise PromptError(_missing_prompt(path, quote)) from None
    except OSError as error:
        raise PromptError(f"GH_AW_PROMPT file cannot be read: {shown}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise PromptError(f"GH_AW_PROMPT is {kind}: {shown}: point it at the prompt file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise PromptError(f"GH_AW_PROMPT file cannot be read: {shown}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PromptError(
            f"GH_AW_PROMPT file is not valid UTF-8: {shown}: "
            f"invalid byte at offset {error.start}; save the prompt as UTF-8"
        ) from None
    text = text.removeprefix("\ufeff")
    nul = data.find(b"\x00")
    if nul >= 0:  # a binary file given by mistake; the runtime would take it as text
        raise PromptError(
            f"GH_AW_PROMPT file is not text: {shown}: it holds a NUL byte at offset {nul}; "
            "point it at the prompt file"
        )
    if not text.strip():
        raise PromptError(f"GH_AW_PROMPT file is empty: {shown}: write the task into it")
    return text


def _missing_prompt(path: Path, quote: Quote) -> str:
    """Why the prompt file was not found, and the fix: a `~` nobody expanded, or a
    relative path resolved against another directory than the user thought."""
    text = str(path)
    said = f"{contract.PROMPT.name} file does not exist: {quote(text, _PATH_CHARS)}"
    if text.startswith("~"):
        return f"{said}: {_unexpanded_home(text, quote)}"
    if path.is_absolute():
        return f"{said}: point it at the prompt file"
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        return f"{said}: it is relative, and the driver's working directory is gone"
    return (
        f"{said}: a relative path is resolved against the driver's working directory "
        f"{quote(cwd, _PATH_CHARS)} (tried {quote(os.path.join(cwd, text), _PATH_CHARS)}): "
        "give an absolute path, or start the driver in the directory it is relative to"
    )


def _unexpanded_home(text: str, quote: Quote) -> str:
    """The fix for a path starting with `~`: only a shell expands it, and not in quotes."""
    said = "`~` is not expanded in environment variables (only an unquoted shell word expands it)"
    if text == "~" or text.startswith("~/"):
        fix = f"write {quote('$HOME' + text[1:], _PATH_CHARS)} instead"
    else:
        fix = "write the full path instead"
    try:
        expanded = os.path.expanduser(text)
    except (KeyError, RuntimeError):  # no home directory to expand to
        expanded = text
    if expanded != text and os.path.exists(expanded):
        fix += f" (the file is there: {quote(expanded, _PATH_CHARS)})"
    return f"{said}: {fix}"


def normalise_sdk_uri(raw: str, *, quote: Quote = _shorten) -> str:
    """Accept `PORT`, `HOST:PORT` and `http(s)://HOST:PORT[/]`; return `HOST:PORT`.

    A bare port means 127.0.0.1 (not `localhost`, which may resolve to ::1
    while the sidecar listens on IPv4 only). A refusal says what is missing
    (the port, the brackets of an IPv6 address) in the form to write.
    """
    value = raw.strip()
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", value)
    prefix = ""
    if scheme:
        if scheme.group(1).lower() not in ("http", "https"):
            raise ValueError(f"unsupported scheme {quote(scheme.group(1))!r}: use http://HOST:PORT")
        prefix = value[: scheme.end()]
        value = value[scheme.end() :].rstrip("/")
    if "@" in value:
        raise ValueError(
            f"credentials are not allowed in it ({quote(mask_url_userinfo(raw.strip()))}): "
            "write HOST:PORT; the connection token is COPILOT_CONNECTION_TOKEN"
        )
    if scheme and ("/" in value or "?" in value or "#" in value):
        raise ValueError("a path is not allowed: use http://HOST:PORT")
    if value.isdigit():
        return f"127.0.0.1:{_port(value, quote)}"
    bracketed = re.fullmatch(r"\[([^\]]+)\](?::([^:]*))?", value)
    if bracketed:
        return _ipv6_address(bracketed.group(1), bracketed.group(2), prefix, quote)
    if value.count(":") > 1:
        raise ValueError(_unbracketed_ipv6(value, prefix, quote))
    host, _, port = value.partition(":")
    if not host:
        raise ValueError(
            "there is no host before `:`: write HOST:PORT, or the port alone for 127.0.0.1"
        )
    if not re.fullmatch(r"[A-Za-z0-9.-]+", host):
        raise ValueError(f"{quote(host)!r} is not a host name or address")
    if not port:
        raise ValueError(
            f"{quote(value)!r} has no port: write {prefix}{quote(host)}:PORT, with the port "
            "the sidecar listens on"
        )
    return f"{host}:{_port(port, quote)}"


def _ipv6_address(host: str, port: str | None, prefix: str, quote: Quote) -> str:
    """`[HOST]:PORT`, once HOST is an IPv6 address and the port is there."""
    if not _is_ipv6(host):
        raise ValueError(f"{quote(host)!r} is not an IPv6 address")
    if not port:
        raise ValueError(
            f"[{quote(host)}] has no port: write {prefix}[{quote(host)}]:PORT, with the port "
            "the sidecar listens on"
        )
    return f"[{host}]:{_port(port, quote)}"


def _unbracketed_ipv6(value: str, prefix: str, quote: Quote) -> str:
    """What to write for an IPv6 address with a port but without brackets."""
    host, _, port = value.rpartition(":")
    fixes = []
    if _is_ipv6(host) and _is_port(port):
        fixes.append(f"{prefix}[{quote(host)}]:{port}")
    if _is_ipv6(value):
        fixes.append(f"{prefix}[{quote(value)}]:PORT if all of it is the address")
    if not fixes:
        return f"{quote(value)!r} is not PORT, HOST:PORT or [IPv6]:PORT"
    return (
        f"{quote(value)!r}: an IPv6 address needs brackets around it before the port: "
        f"write {' or '.join(fixes)}"
    )


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _is_port(text: str) -> bool:
    return len(text) <= 5 and text.isdigit() and 0 < int(text) <= 65535


def _port(text: str, quote: Quote) -> int:
    if not text:
        raise ValueError("the port after `:` is missing: write HOST:PORT")
    if not _is_port(text):
        raise ValueError(f"port {quote(text)!r} is not a number from 1 to 65535")
    return int(text)


def parse_send_timeout_ms(raw: str | None, notices: list[str], *, quote: Quote = _shorten) -> int:
    """A positive integer number of milliseconds, else the default (spec 4.3)."""
    return _positive_whole_number(
        raw,
        contract.SEND_TIMEOUT_MS.name,
        what="a positive whole number of milliseconds",
        limit=MAX_SEND_TIMEOUT_MS,
        default=DEFAULT_SEND_TIMEOUT_MS,
        notices=notices,
        quote=quote,
    )


def parse_max_tool_denials(raw: str | None, notices: list[str], *, quote: Quote = _shorten) -> int:
    """A positive whole number, else the default 5 (with a notice)."""
    return _positive_whole_number(
        raw,
        contract.MAX_TOOL_DENIALS.name,
        what="a positive whole number",
        limit=MAX_TOOL_DENIALS,
        default=DEFAULT_MAX_TOOL_DENIALS,
        notices=notices,
        quote=quote,
    )


def _positive_whole_number(
    raw: str | None,
    name: str,
    *,
    what: str,
    limit: int,
    default: int,
    notices: list[str],
    quote: Quote,
) -> int:
    """`raw` as a whole number from 1 to `limit`; unset or blank means `default`, and
    anything else means `default` with a notice."""
    if raw is None or raw == "":
        return default
    value = raw.strip().lstrip("0") or "0"  # `00042` is 42, as the reference reads it
    # The length check comes first: int() refuses strings of thousands of digits.
    if len(value) <= len(str(limit)) and _POSITIVE_INT.fullmatch(value) and int(value) <= limit:
        return int(value)
    notices.append(f"{name}={quote(raw)!r} is not {what} up to {limit}; using {default}")
    return default


def parse_routing_effort(
    env: Mapping[str, str], notices: list[str], *, quote: Quote = _shorten
) -> ReasoningEffort | None:
    """gh-aw's routing effort, when routing is on and the SDK accepts the value."""
    if env.get(contract.MODEL_ROUTING.name, "").strip() != "1":
        return None
    raw = value_of(env, contract.ROUTING_EFFORT)
    if raw is None:
        return None
    for effort in REASONING_EFFORTS:
        if raw.lower() == effort:
            return effort
    notices.append(
        f"{contract.ROUTING_EFFORT.name}={quote(raw)!r} is not one of "
        f"{', '.join(REASONING_EFFORTS)}; using the model's default effort"
    )
    return None


def parse_log_level(raw: str | None, notices: list[str], *, quote: Quote = _shorten) -> LogLevel:
    """One of none/error/warning/info/debug/all (any case), else warning (spec 4.4)."""
    if raw is None or raw == "":
        return DEFAULT_LOG_LEVEL
    value = raw.strip().lower()
    for level in LOG_LEVELS:
        if value == level:
            return level
    notices.append(
        f"COPILOT_SDK_LOG_LEVEL={quote(raw)!r} is not one of {', '.join(LOG_LEVELS)}; "
        f"using {DEFAULT_LOG_LEVEL}"
    )
    return DEFAULT_LOG_LEVEL


def parse_log_format(raw: str | None, notices: list[str], *, quote: Quote = _shorten) -> LogFormat:
    if raw is None or raw == "":
        return "json"
    value = raw.strip().lower()
    if value == "text":
        return "text"
    if value != "json":
        notices.append(f"COPILOT_DRIVER_LOG_FORMAT={quote(raw)!r} is not json or text; using json")
    return "json"


def parse_provider(env: Mapping[str, str], *, quote: Quote = _shorten) -> ProviderConfig | None:
    """The optional bring-your-own-model provider, or None when not configured."""
    base_url = value_of(env, contract.PROVIDER_BASE_URL)
    provider_type = value_of(env, contract.PROVIDER_TYPE)
    wire_api = value_of(env, contract.PROVIDER_WIRE_API)
    api_key = env.get(contract.PROVIDER_API_KEY.name)
    if api_key is not None and not api_key.strip():
        api_key = None
    if base_url is None:
        stray = [
            name
            for name, value in (
                (contract.PROVIDER_TYPE.name, provider_type),
                (contract.PROVIDER_WIRE_API.name, wire_api),
                (contract.PROVIDER_API_KEY.name, api_key),
            )
            if value is not None
        ]
        if stray:
            raise ValueError(
                f"{', '.join(stray)} set without COPILOT_PROVIDER_BASE_URL: "
                "set the provider's base URL too, or unset them"
            )
        return None
    if not re.match(r"^https?://[^/\s]+", base_url):
        raise ValueError(_not_an_http_url(base_url, quote))
    # Values are echoed as given (never lowercased): the redactor masks a
    # secret pasted into the wrong variable only in its exact spelling.
    if provider_type is not None and provider_type.lower() not in PROVIDER_TYPES:
        raise ValueError(
            f"COPILOT_PROVIDER_TYPE={quote(provider_type)!r} is not one of "
            f"{', '.join(PROVIDER_TYPES)}"
        )
    provider_type = (provider_type or "openai").lower()
    if wire_api is not None:
        if wire_api.lower() not in WIRE_APIS:
            raise ValueError(
                f"COPILOT_PROVIDER_WIRE_API={quote(wire_api)!r} is not one of "
                f"{', '.join(WIRE_APIS)}"
            )
        wire_api = wire_api.lower()
    if api_key is not None:
        check_provider_key(api_key)
    return ProviderConfig(base_url=base_url, type=provider_type, wire_api=wire_api, api_key=api_key)


def _not_an_http_url(base_url: str, quote: Quote) -> str:
    """The fix for a base URL without its scheme: the URL with one, else the form."""
    base_url = mask_url_userinfo(base_url)
    said = (
        f"{contract.PROVIDER_BASE_URL.name} is not an http(s) URL: {quote(base_url, _PATH_CHARS)}"
    )
    if "://" in base_url or not re.match(r"[A-Za-z0-9\[]", base_url):
        return f"{said}: write it as https://HOST/PATH, e.g. https://api.openai.com/v1"
    local = re.match(r"(localhost|127\.|\[::1\])", base_url, re.IGNORECASE)
    scheme = "http://" if local else "https://"
    return f"{said}: it has no scheme: write {scheme}{quote(base_url, _PATH_CHARS)}"


def check_provider_key(api_key: str) -> None:
    """Refuse a key the runtime cannot send as a header, never echoing it.

    The runtime puts the key in an HTTP header: a control character (a
    pasted newline) makes it fail with an error quoting the key in a form
    the redactor does not recognise, and a very long key hangs the sidecar.
    """
    if len(api_key) > MAX_PROVIDER_KEY_CHARS:
        raise ValueError(
            f"COPILOT_PROVIDER_API_KEY is {len(api_key)} characters long; the sidecar accepts "
            f"at most {MAX_PROVIDER_KEY_CHARS}"
        )
    if any(not char.isprintable() or char.isspace() for char in api_key):
        raise ValueError(
            "COPILOT_PROVIDER_API_KEY holds whitespace or a control character (a pasted "
            "newline?): set it to the key alone"
        )
