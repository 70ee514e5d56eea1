"""Credentials the runner left in the workspace's git configuration, kept from tools.

actions/checkout persists its token in `.git/config` (`http.<url>.extraheader =
AUTHORIZATION: basic <base64 of x-access-token:TOKEN>`), or in a file that an
`include.path` / `includeIf.<cond>.path` names. Tools see `.git/config`
read-only anyway; inside the sandbox they see a copy without those entries,
and every included file is hidden (empty). A `.git-credentials`-style file a
step wrote at the top of the workspace or in `.git` is hidden too. Pure but
for `hidden_git_credentials`, which reads the host.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from copilot_driver.git_config_syntax import entries
from copilot_driver.git_credentials import included_path

CREDENTIAL_FILE_NAMES = (".git-credentials", ".netrc", "_netrc")
"""Files of these names at the top of the workspace or in `.git` are hidden inside."""
SECRET_KEYS = ("extraheader",)
"""Variables (any section) whose value carries a credential; the section's key name."""
MAX_CONFIG_BYTES = 1 << 20

_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"((?:[^\"\\]|\\.)*)\")?\s*\]")
_VARIABLE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def without_credentials(text: str) -> str | None:
    """`text` without its SECRET_KEYS variables (a value continued over several lines
    goes whole), or None when it holds none."""
    kept: list[str] = []
    dropping = False
    removed = False
    for line in text.splitlines(keepends=True):
        if dropping:  # a continued value: its lines end in a backslash
            dropping = line.rstrip("\r\n").endswith("\\")
            continue
        body = _SECTION.sub("", line, count=1)  # `[http "x"] extraheader = ...` on one line
        variable = _VARIABLE.match(body)
        if variable and variable.group(1).lower() in SECRET_KEYS:
            removed = True
            dropping = line.rstrip("\r\n").endswith("\\")
            if body is not line:
                kept.append(line[: len(line) - len(body)].rstrip() + "\n")
            continue
        kept.append(line)
    return "".join(kept) if removed else None


def included_paths(text: str, git_dir: str, home: str | None) -> list[str]:
    """The files `include.path` and `includeIf.<condition>.path` name, absolute (git
    reads a relative one from the config file's folder, `~/` from $HOME)."""
    found = (included_path(entry, Path(git_dir), home) for entry in entries(text))
    return [os.path.normpath(path) for path in found if path is not None]


@dataclass(frozen=True)
class HiddenCredentials:
    """What the sandbox shows in place of the workspace's persisted credentials."""

    replacements: tuple[tuple[str, str], ...]
    """(config file in the workspace, the copy without its credentials to show instead)."""
    hidden_files: tuple[str, ...]
    """Files to show empty: included configurations and credential stores."""


def hidden_git_credentials(
    workspace: Path, configs: list[Path], copies: Path, home: str | None
) -> HiddenCredentials:
    """Read each git config file in `configs` (the workspace's and its submodules'),
    write a copy without its credentials into `copies` where it holds some, and list
    what must be hidden."""
    replacements: list[tuple[str, str]] = []
    hidden: list[str] = []
    for number, config in enumerate(configs):
        try:
            if config.is_symlink() or config.stat().st_size > MAX_CONFIG_BYTES:
                continue  # a link is refused by the layout; a huge config is not git's
            text = config.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            continue
        clean = without_credentials(text)
        if clean is not None:
            copy = copies / f"config-{number}"
            copy.write_text(clean, encoding="utf-8", errors="surrogateescape")
            replacements.append((str(config), str(copy)))
        hidden += [
            path for path in included_paths(text, str(config.parent), home) if os.path.lexists(path)
        ]
    for folder in (workspace, workspace / ".git"):
        hidden += [
            str(folder / name) for name in CREDENTIAL_FILE_NAMES if (folder / name).is_file()
        ]
    return HiddenCredentials(tuple(replacements), tuple(dict.fromkeys(hidden)))
