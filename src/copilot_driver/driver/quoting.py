"""How an error or a notice echoes user input: shortened, on one line, and never a
secret.

A value may be a secret pasted into the wrong variable, so every echo goes through
a `Quote`: the environment's secrets are masked first (`quoter`), then a value
shaped like a token or key (`looks_like_secret`) shows only its first characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from copilot_driver.env import PROVIDER_BASE_URL
from copilot_driver.formatting import escape_line_breaks
from copilot_driver.redaction import Redactor, url_userinfo_secrets
from copilot_driver.secret_variables import secrets_in

NOTICE_VALUE_CHARS = 40
"""How much of a value an error or a notice echoes, by default."""
PATH_CHARS = 300
"""How much of a path an error echoes."""
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


def shorten(value: str, limit: int = NOTICE_VALUE_CHARS) -> str:
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


def quoter(env: Mapping[str, str]) -> Quote:
    """The `Quote` for input read from `env`: its secrets masked before shortening, so no
    part of one leaks."""
    redactor = Redactor(environment_secrets(env))

    def quote(value: str, limit: int = NOTICE_VALUE_CHARS) -> str:
        return shorten(redactor.text(value), limit)

    return quote


def environment_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """The secrets `env` holds, as given, for a Redactor before a DriverConfig exists
    (the userinfo of the provider's base URL included)."""
    base_url = env.get(PROVIDER_BASE_URL.name, "")
    return tuple(dict.fromkeys([*secrets_in(env), *url_userinfo_secrets(base_url)]))
