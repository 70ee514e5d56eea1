"""The `tool-loop` block of WORKFLOW.md (pure).

    tool-loop:
      base_url: https://api.openai.com/v1   # any OpenAI-compatible endpoint
      model: gpt-4o
      api_key_env: OPENAI_API_KEY           # the NAME of the variable holding the key
      max_rounds: 20

The key itself never lives in WORKFLOW.md (a file that is committed and
shared): the block names the environment variable that holds it. A key
that is not set is allowed (local servers need none); no Authorization
header is sent then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlsplit

from copilot_driver.adapters.core.options import OptionBlock, is_variable_name, raise_problems
from copilot_driver.env_commands import OPENAI_API_KEY
from copilot_driver.redaction import mask_url_userinfo

BLOCK = "tool-loop"
DEFAULT_API_KEY_ENV = OPENAI_API_KEY.name
DEFAULT_MAX_ROUNDS = 20
DEFAULT_MAX_TOOL_RESULT_CHARS = 20_000
DEFAULT_TEMPERATURE = 0.1
DEFAULT_MAX_TOKENS = 4096
DEFAULT_REQUEST_TIMEOUT_MS = 120_000
MIN_TOOL_RESULT_CHARS = 200
"""Below this a truncated result could not even hold its own truncation note."""


@dataclass(frozen=True)
class ToolLoopOptions(OptionBlock):
    block = BLOCK

    base_url: str = ""
    """Required: the endpoint's base, `{base_url}/chat/completions` is posted to."""
    model: str = ""
    """Required: sent as `model` with every request."""
    api_key_env: str = DEFAULT_API_KEY_ENV
    max_rounds: int = DEFAULT_MAX_ROUNDS
    """Model calls per turn; a model still calling tools after that many fails the turn."""
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
    """Longer tool results reach the model cut, with a note saying how much was cut."""
    temperature: float | int = DEFAULT_TEMPERATURE
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    """None leaves `max_tokens` out (some newer models refuse the field)."""
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    """Longest wait to connect, or for the next bytes of a streamed answer."""
    request_usage: bool = True
    """Ask for token counts in the stream (`stream_options.include_usage`);
    turn it off for servers that refuse `stream_options`."""
    system_prompt: str | None = None
    """None = the built-in prompt (see `loop.DEFAULT_SYSTEM_PROMPT`); "" = none."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.strip().rstrip("/"))
        problems = []
        if not self.base_url:
            problems.append("base_url is required (e.g. https://api.openai.com/v1)")
        else:
            problem = _url_problem(self.base_url)
            if problem:
                problems.append(f"base_url {mask_url_userinfo(self.base_url)!r}: {problem}")
        if not self.model.strip():
            problems.append("model is required")
        if not is_variable_name(self.api_key_env):
            problems.append(
                f"api_key_env {self.api_key_env!r} is not an environment variable name "
                "(it names the variable holding the key, it is not the key)"
            )
        if self.max_rounds < 1:
            problems.append("max_rounds must be 1 or more")
        if self.max_tool_result_chars < MIN_TOOL_RESULT_CHARS:
            problems.append(f"max_tool_result_chars must be {MIN_TOOL_RESULT_CHARS} or more")
        if not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            problems.append("temperature must be between 0 and 2")
        if self.max_tokens is not None and self.max_tokens < 1:
            problems.append("max_tokens must be 1 or more (or null to leave it out)")
        if self.request_timeout_ms < 1:
            problems.append("request_timeout_ms must be 1 or more")
        raise_problems(problems)

    @property
    def chat_completions_url(self) -> str:
        return f"{self.base_url}/chat/completions"


def _url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL, or None when it can."""
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "contains whitespace or control characters"
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a port that is not a number
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "only http:// and https:// URLs are allowed"
    if not parts.hostname:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "must not carry credentials (name the key's variable in api_key_env)"
    if parts.query or parts.fragment:
        return "must not have a query or fragment"
    return None
