"""The `copilot-cli` block and the argument list it turns into (pure).

Every turn runs `copilot -p PROMPT --output-format json -s --autopilot
--no-ask-user`, plus the session flag (`--resume ID` or `--continue`), plus
the pass-through options. `--allow-all` is added only when no tool-scoping
option is set: scoping the tools and allowing all of them at once would
make the scoping meaningless.
"""

from __future__ import annotations

from dataclasses import dataclass

from copilot_driver.adapters.core.options import OptionBlock, raise_problems

BLOCK = "copilot-cli"
DEFAULT_COMMAND = "copilot"
DEFAULT_MAX_AUTOPILOT_CONTINUES = 50

StrOrList = str | tuple[str, ...]


@dataclass(frozen=True)
class CopilotCliOptions(OptionBlock):
    block = BLOCK

    model: str | None = None
    max_autopilot_continues: int = DEFAULT_MAX_AUTOPILOT_CONTINUES
    agent: str | None = None
    allowed_tools: StrOrList | None = None
    denied_tools: StrOrList | None = None
    available_tools: StrOrList | None = None
    excluded_tools: StrOrList | None = None
    mcp_config: str | None = None
    disable_builtin_mcps: bool = False
    no_custom_instructions: bool = False
    experimental: bool = False

    def __post_init__(self) -> None:
        raise_problems(self._problems())

    def _problems(self) -> list[str]:
        if self.max_autopilot_continues < 0:
            return ["max_autopilot_continues must be 0 or more"]
        return []

    @property
    def scopes_tools(self) -> bool:
        return any(
            _values(v)
            for v in (
                self.allowed_tools,
                self.denied_tools,
                self.available_tools,
                self.excluded_tools,
            )
        )


def _values(value: StrOrList | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(v for v in value if v)


def mcp_config_argument(value: str) -> str:
    """The CLI reads `--additional-mcp-config` as inline JSON, or a file when
    prefixed with `@`; the `mcp_config` field is a path, so a path gets the `@`."""
    stripped = value.lstrip()
    if stripped.startswith(("{", "@")):
        return value
    return "@" + value


def build_args(
    options: CopilotCliOptions,
    prompt: str,
    *,
    resume_session_id: str | None = None,
    continue_latest: bool = False,
    usage_file: str | None = None,
) -> list[str]:
    """The arguments after the binary name, for one turn."""
    args = ["-p", prompt, "--output-format", "json", "-s", "--autopilot", "--no-ask-user"]
    if resume_session_id:
        args += ["--resume", resume_session_id]
    elif continue_latest:
        args.append("--continue")
    if not options.scopes_tools:
        args.append("--allow-all")
    if options.model:
        args += ["--model", options.model]
    args += ["--max-autopilot-continues", str(options.max_autopilot_continues)]
    if options.agent:
        args += ["--agent", options.agent]
    for flag, value in (
        ("--allow-tool", options.allowed_tools),
        ("--deny-tool", options.denied_tools),
        ("--available-tools", options.available_tools),
        ("--excluded-tools", options.excluded_tools),
    ):
        # `flag=value`, one per tool: these options are variadic in the CLI,
        # and the `=` form keeps a value that starts with `-` a value.
        args += [f"{flag}={item}" for item in _values(value)]
    if options.mcp_config:
        args += ["--additional-mcp-config", mcp_config_argument(options.mcp_config)]
    if options.disable_builtin_mcps:
        args.append("--disable-builtin-mcps")
    if options.no_custom_instructions:
        args.append("--no-custom-instructions")
    if options.experimental:
        args.append("--experimental")
    if usage_file:
        args += ["--usage-output-file", usage_file]
    return args
