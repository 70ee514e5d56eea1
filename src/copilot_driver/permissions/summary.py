"""Permission requests named in a few words (spec 6.3): `shell(git status)`,
`mcp(github.get_file_contents)`, `url(https://host/path)`.

Pure and import-light: the policy names the requests it decides with it, and
the run report names the requests an events file records, so a request reads
the same in the denial logs and in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from copilot_driver.formatting import shorten

SUMMARY_CHARS = 160
"""A field of a summary (a command line, a path, a URL) is cut to this many characters."""


def summarise(request: Mapping[str, Any], mask: Callable[[str], str] = str) -> str:
    """The compact request summary of denial logs (spec 6.3): never a secret.

    `request` is the runtime's permission request in its wire form. `mask` hides
    secrets before a field is shortened. Never raises: a malformed field shows as `?`.
    """
    kind = request.get("kind")

    def field(key: str, transform: Callable[[str], str] = str) -> str:
        value = request.get(key)
        return shorten(mask(transform(value)), SUMMARY_CHARS) if isinstance(value, str) else "?"

    if kind == "shell":
        return f"shell({field('fullCommandText')})"
    if kind == "mcp":
        server = field("serverName")
        return f"mcp({server}.{field('toolName').removeprefix(server + '-')})"
    if kind == "url":
        return f"url({field('url', url_without_secrets)})"
    if kind == "write":
        return f"write({field('fileName')})"
    if kind == "read":
        return f"read({field('path')})"
    if kind == "custom-tool":
        return f"custom-tool({field('toolName')})"
    return shorten(mask(kind), SUMMARY_CHARS) if isinstance(kind, str) else "unknown"


def url_without_secrets(url: str) -> str:
    """Drop user info, query and fragment: they may carry credentials."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "?"
