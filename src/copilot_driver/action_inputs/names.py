"""The Action's inputs by name, the environment variables action.yml passes them in, and
InputError, whose message names the input and shows a valid value. Pure."""

from __future__ import annotations

from copilot_driver.errors import CopilotDriverError

ALLOWED_TOOLS = "allowed-tools"
DENIED_TOOLS = "denied-tools"
ALLOW_ALL = "allow-all"
PROMPT = "prompt"
PROMPT_FILE = "prompt-file"
SANDBOX = "sandbox"
ALLOWED_DOMAINS = "allowed-domains"
PASS_ENV = "pass-env"  # noqa: S105 - an input's name, not a secret
MODEL = "model"
COPILOT_VERSION = "copilot-version"
COPILOT_TOKEN = "copilot-token"  # noqa: S105 - an input's name, not a secret
TIMEOUT_MINUTES = "timeout-minutes"
MAX_TOOL_DENIALS = "max-tool-denials"
WORKING_DIRECTORY = "working-directory"

INPUT_VARIABLES = {
    ALLOWED_TOOLS: "COPILOT_ACTION_ALLOWED_TOOLS",
    DENIED_TOOLS: "COPILOT_ACTION_DENIED_TOOLS",
    ALLOW_ALL: "COPILOT_ACTION_ALLOW_ALL",
    PROMPT: "COPILOT_ACTION_PROMPT",
    PROMPT_FILE: "COPILOT_ACTION_PROMPT_FILE",
    SANDBOX: "COPILOT_ACTION_SANDBOX",
    ALLOWED_DOMAINS: "COPILOT_ACTION_ALLOWED_DOMAINS",
    PASS_ENV: "COPILOT_ACTION_PASS_ENV",
    MODEL: "COPILOT_ACTION_MODEL",
    COPILOT_VERSION: "COPILOT_ACTION_COPILOT_VERSION",
    COPILOT_TOKEN: "COPILOT_ACTION_COPILOT_TOKEN",
    TIMEOUT_MINUTES: "COPILOT_ACTION_TIMEOUT_MINUTES",
    MAX_TOOL_DENIALS: "COPILOT_ACTION_MAX_TOOL_DENIALS",
    WORKING_DIRECTORY: "COPILOT_ACTION_WORKING_DIRECTORY",
}
"""The action input -> the environment variable action.yml passes it in."""

PROMPT_FILE_NAME = "prompt.md"
"""What an inline `prompt` is written to, in the folder `prompt --dir` names."""

_EXAMPLE_RULES = ("shell(git status:*)", "read")
_EXAMPLES = {
    ALLOWED_DOMAINS: ("host", ("pypi.org", "files.pythonhosted.org")),
    PASS_ENV: ("variable name", ("NPM_TOKEN",)),
}
"""What a list input other than the tool lists holds, and a valid value of it."""
SHOWN_CHARS = 60
"""How much of a value an error message quotes."""


class InputError(CopilotDriverError, ValueError):
    """An action input that cannot be read; the message names the input and the fix."""


def item_noun(input_name: str) -> str:
    """What one item of a list input is: a rule, a host, a variable name."""
    return _EXAMPLES[input_name][0] if input_name in _EXAMPLES else "rule"


def example(input_name: str) -> str:
    """How a list input is written, with valid items, on one line."""
    entries = _EXAMPLES[input_name][1] if input_name in _EXAMPLES else _EXAMPLE_RULES
    items = " and ".join(f"`- {entry}`" for entry in entries)
    noun = item_noun(input_name)
    return f"write `{input_name}: |` and below it one {noun} per line after `- `, e.g. {items}"
