"""Credentials persisted in git configuration, kept from tools; git itself is the oracle."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_driver.harness.sandbox.git_config import (
    hidden_git_credentials,
    included_paths,
    without_credentials,
)

TOKEN = "ghs_canaryPersisted000000000000000000000"
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


def git_entries(config: Path) -> list[str]:
    """What git reads from a config file: every `key value` line, in order."""
    done = subprocess.run(
        ["git", "config", "--file", str(config), "--list"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def write_config(path: Path, entries: list[tuple[str, str]]) -> None:
    path.write_text("")
    for key, value in entries:
        subprocess.run(["git", "config", "--file", str(path), "--add", key, value], check=True)


def test_checkouts_extraheader_is_gone_and_everything_else_stays(tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_config(
        config,
        [
            ("core.bare", "false"),
            ("http.https://github.com/.extraheader", HEADER),
            ("remote.origin.url", "https://github.com/o/r"),
            ("http.extraHeader", "X-Other: 1"),
            ("user.name", "ci"),
        ],
    )
    clean = without_credentials(config.read_text())
    assert clean is not None
    copy = tmp_path / "copy"
    copy.write_text(clean)
    assert git_entries(copy) == [
        entry for entry in git_entries(config) if ".extraheader=" not in entry
    ]
    assert TOKEN not in clean
    assert HEADER.split()[-1] not in clean


def test_a_config_without_credentials_needs_no_copy() -> None:
    assert without_credentials("[core]\n\tbare = false\n") is None


def test_a_continued_value_goes_whole(tmp_path: Path) -> None:
    text = '[http]\n\textraheader = "AUTHORIZATION: basic \\\n abc"\n[user]\n\tname = x\n'
    clean = without_credentials(text)
    assert clean is not None
    (tmp_path / "c").write_text(clean)
    assert git_entries(tmp_path / "c") == ["user.name=x"]


def test_a_section_and_variable_on_one_line(tmp_path: Path) -> None:
    clean = without_credentials('[http "https://github.com/"] extraheader = X\n[a]\n\tb = c\n')
    assert clean is not None
    (tmp_path / "c").write_text(clean)
    assert git_entries(tmp_path / "c") == ["a.b=c"]


_KEYS = st.sampled_from(
    ["core.bare", "user.name", "http.extraheader", "http.https://x/.extraheader", "a.b.c"]
)
_VALUES = st.text(
    st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="\\"), max_size=20
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.lists(st.tuples(_KEYS, _VALUES), max_size=6))
def test_git_reads_the_copy_as_the_original_without_its_extraheaders(
    tmp_path: Path, entries: list[tuple[str, str]]
) -> None:
    config, copy = tmp_path / "config", tmp_path / "copy"
    write_config(config, entries)
    clean = without_credentials(config.read_text())
    copy.write_text(config.read_text() if clean is None else clean)
    assert git_entries(copy) == [
        entry for entry in git_entries(config) if ".extraheader=" not in entry
    ]


def test_included_files_are_found_as_git_reads_them(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    text = (
        "[include]\n\tpath = relative.config\n"
        '[includeIf "gitdir:/w/.git"]\n\tpath = "/runner/_temp/git-credentials-1.config"\n'
        '[includeIf "onbranch:main"]\n\tpath = ~/creds.config ; a comment\n'
        "[core]\n\tpath = not-an-include\n"
    )
    assert included_paths(text, str(git), "/home/u") == [
        str(git / "relative.config"),
        "/runner/_temp/git-credentials-1.config",
        "/home/u/creds.config",
    ]


def test_what_the_sandbox_hides_in_a_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    git = workspace / ".git"
    git.mkdir(parents=True)
    included = tmp_path / "credentials.config"
    included.write_text(f"[http]\n\textraheader = {HEADER}\n")
    write_config(git / "config", [("http.https://github.com/.extraheader", HEADER)])
    with (git / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {included}\n")
    (workspace / ".git-credentials").write_text("https://x:y@github.com\n")
    copies = tmp_path / "copies"
    copies.mkdir()
    hidden = hidden_git_credentials(workspace, [git / "config"], copies, None)
    ((original, copy),) = hidden.replacements
    assert original == str(git / "config")
    assert TOKEN not in Path(copy).read_text()
    assert hidden.hidden_files == (str(included), str(workspace / ".git-credentials"))


@pytest.mark.parametrize("link", [True, False])
def test_a_config_that_is_a_link_is_not_read(tmp_path: Path, link: bool) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text(f"[http]\n\textraheader = {HEADER}\n")
    config = workspace / ".git" / "config"
    if link:
        config.symlink_to(target)
    else:
        config.write_text(target.read_text())
    copies = tmp_path / "copies"
    copies.mkdir()
    hidden = hidden_git_credentials(workspace, [config], copies, None)
    assert bool(hidden.replacements) is not link  # the layout refuses the link itself
