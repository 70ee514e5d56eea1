"""The credentials a git configuration holds, for a Redactor to mask.

actions/checkout persists its token in the workspace's git configuration as
`http.https://github.com/.extraheader = AUTHORIZATION: basic <base64 of
x-access-token:TOKEN>` (in `.git/config`, or in a file that an
`includeIf.<condition>.path` names). A tool that reads the file, or runs
`git config --list`, puts it in its output; the process that writes that
output was never given the token.

`persisted_credentials(text)` (pure) returns, from one config file's text:
- every `http.extraheader` / `http.<url>.extraheader` value whole, the
  credential after its header name and scheme (`AUTHORIZATION: basic
  <credential>`, `Authorization: bearer <credential>`, or the header's whole
  value when it names no scheme), and for Basic the password of the
  base64-decoded `user:password`;
- the password in a URL's userinfo (`https://x-access-token:TOKEN@host/`),
  as written and percent-decoded, wherever git reads a URL: the base and the
  value of `url.<base>.insteadOf` / `pushInsteadOf`, `remote.<name>.url` /
  `pushurl`, `submodule.<name>.url`, and the `<url>` of `http.<url>.*`; a
  userinfo without a password gives its user name when that is at least
  MIN_BARE_USER_CHARS long (`https://TOKEN@github.com/`).
Not secrets: `credential.*.helper` (a command), a user name beside a
password (`x-access-token`), and anything under MIN_SECRET_CHARS characters
(masking it would mangle ordinary text).

`workspace_credentials(workspace)` reads the workspace's git configuration
and the files it includes.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from copilot_driver.git_config_syntax import Entry, entries

MIN_SECRET_CHARS = 8
"""Shorter values are left out: a Redactor masks every occurrence of a secret."""
MIN_BARE_USER_CHARS = 20
"""A URL's user name without a password is a token (GitHub takes one as the user
name) when this long; `git`, `oauth2` or `x-access-token` are not."""
MAX_CONFIG_BYTES = 1 << 20
MAX_INCLUDE_DEPTH = 10
"""Git's own limit on nested includes."""

_URL_KEYS = {
    ("url", "insteadof"),
    ("url", "pushinsteadof"),
    ("remote", "url"),
    ("remote", "pushurl"),
    ("submodule", "url"),
}


def persisted_credentials(config_text: str) -> tuple[str, ...]:
    """The secrets `config_text` (one git config file) holds, in order, each once."""
    found: list[str] = []
    for entry in entries(config_text):
        if entry.section == "http" and entry.subsection is not None:
            found += _url_secrets(entry.subsection)
        if entry.section == "url" and entry.subsection is not None:
            found += _url_secrets(entry.subsection)
        if entry.value is None:
            continue
        if entry.section == "http" and entry.name == "extraheader":
            found += _header_secrets(entry.value)
        elif (entry.section, entry.name) in _URL_KEYS:
            found += _url_secrets(entry.value)
    return tuple(dict.fromkeys(s for s in found if len(s.strip()) >= MIN_SECRET_CHARS))


def _header_secrets(header: str) -> list[str]:
    """The header line, its credential, and a Basic credential's password."""
    _, colon, value = header.partition(":")
    value = value.strip() if colon else header.strip()
    scheme, _, credential = value.partition(" ")
    if not credential.strip():
        return [header, value]
    credential = credential.strip()
    found = [header, credential]
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return found
        found.append(decoded.partition(":")[2])
    return found


def _url_secrets(url: str) -> list[str]:
    """The password of `url`'s userinfo (or a long bare user name), raw and decoded."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    if not parts.scheme or "@" not in parts.netloc:
        return []
    userinfo = parts.netloc.rpartition("@")[0]
    user, colon, password = userinfo.partition(":")
    secret = password if colon else (user if len(user) >= MIN_BARE_USER_CHARS else "")
    return [secret, unquote(secret)] if secret else []


def workspace_credentials(workspace: Path, home: str | None = None) -> tuple[str, ...]:
    """The credentials in `workspace`'s git configuration: its git folder's `config`
    (`.git`, the folder a `.git` file names, and a worktree's common folder), and
    every file an `include.path` or `includeIf.<condition>.path` names, whatever the
    condition, as git finds it (relative to the including file, `~/` from `home`)."""
    found: list[str] = []
    pending = [(config, 0) for config in _config_files(workspace / ".git")]
    seen: set[str] = set()
    while pending:
        path, depth = pending.pop(0)
        key = os.path.realpath(path)
        if key in seen or depth > MAX_INCLUDE_DEPTH:
            continue
        seen.add(key)
        text = _read_small_file(path)
        if text is None:
            continue
        found += persisted_credentials(text)
        for entry in entries(text):
            included = included_path(entry, path.parent, home)
            if included is not None:
                pending.append((included, depth + 1))
    return tuple(dict.fromkeys(found))


def _config_files(dot_git: Path) -> list[Path]:
    """The `config` files of the repository whose `.git` (folder or file) is `dot_git`."""
    git_dir = dot_git
    if dot_git.is_file():
        text = _read_small_file(dot_git) or ""
        if not text.startswith("gitdir:"):
            return []
        git_dir = dot_git.parent / text[len("gitdir:") :].strip()
    files = [git_dir / "config"]
    common = _read_small_file(git_dir / "commondir")
    if common is not None and common.strip():
        files.append(git_dir / common.strip() / "config")
    return files


def included_path(entry: Entry, folder: Path, home: str | None) -> Path | None:
    """The file an `include.path` / `includeIf.<condition>.path` entry names, as git reads
    it (relative to the config file's folder, `~/` from $HOME), or None."""
    if entry.section not in ("include", "includeif") or entry.name != "path":
        return None
    if not entry.value:
        return None
    if entry.value.startswith("~/"):
        return Path(home) / entry.value[2:] if home else None
    return folder / entry.value


def _read_small_file(path: Path) -> str | None:
    """A regular file's text, or None (missing, unreadable, not a regular file, or
    over MAX_CONFIG_BYTES): a FIFO or a device a tool left in place must not block
    or flood the harness."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_CONFIG_BYTES:
            return None
        try:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        except OSError:
            return None
    if len(data) > MAX_CONFIG_BYTES:
        return None
    return data.decode("utf-8", "surrogateescape")
