"""The credentials a git configuration holds, and the workspace's files that hold them."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.git_credentials import persisted_credentials, workspace_credentials
from copilot_driver.redaction import Redactor

TOKEN = "ghs_" + "Zq7" * 12
ENCODED = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode("ascii")
HEADER = f"AUTHORIZATION: basic {ENCODED}"


def _checkout_config(workspace: Path) -> Path:
    """The workspace as actions/checkout leaves it, configured by git itself."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    key = "http.https://github.com/.extraheader"
    subprocess.run(["git", "-C", str(workspace), "config", "--local", key, HEADER], check=True)
    return workspace / ".git" / "config"


def test_the_checkouts_header_gives_itself_its_credential_and_the_token(tmp_path: Path) -> None:
    config = _checkout_config(tmp_path)
    assert persisted_credentials(config.read_text()) == (HEADER, ENCODED, TOKEN)


def test_git_syntax_is_honoured() -> None:
    text = (
        '[HTTP "https://github.com/"] ExtraHeader = "Authorization: Bearer abc\\\n'
        'defghijkl" ; a comment\n'
        "[http]\n\textraheader = X-Api-Key: k3y-v4lue-123\n"
    )
    assert persisted_credentials(text) == (
        "Authorization: Bearer abcdefghijkl",
        "abcdefghijkl",
        "X-Api-Key: k3y-v4lue-123",
        "k3y-v4lue-123",
    )


def test_userinfo_passwords_in_every_url_git_reads() -> None:
    text = (
        '[url "https://x-access-token:tok%2Fen-one@github.com/"]\n'
        "\tinsteadOf = https://github.com/\n"
        '[remote "origin"]\n\turl = https://user:remote-password@example.com/r.git\n'
        f'[submodule "lib"]\n\turl = https://{TOKEN}@github.com/o/lib\n'
        '[http "https://proxyuser:proxy-secret@proxy.example/"]\n\tsslVerify = true\n'
        '[remote "short"]\n\turl = https://git@github.com/o/r\n'
    )
    assert persisted_credentials(text) == (
        "tok%2Fen-one",
        "tok/en-one",
        "remote-password",
        TOKEN,
        "proxy-secret",
    )


def test_what_is_not_a_secret() -> None:
    text = (
        "[credential]\n\thelper = store --file /tmp/creds\n"
        '[credential "https://github.com"]\n\tusername = octocat-the-user\n'
        "[http]\n\textraheader = X: tiny\n"
        "[http]\n\textraheader = AUTHORIZATION: basic not-base64!!\n"
        '[url "git@github.com:"]\n\tinsteadOf = https://github.com/\n'
    )
    assert persisted_credentials(text) == (
        "AUTHORIZATION: basic not-base64!!",
        "not-base64!!",
    )


@given(st.text(st.characters(codec="utf-8"), max_size=300))
def test_any_text_is_read_without_failing(text: str) -> None:
    for secret in persisted_credentials(text):
        assert len(secret.strip()) >= 8


def test_the_workspace_config_and_every_file_it_includes(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    config = _checkout_config(workspace)
    home = tmp_path / "home"
    (home / "nested").mkdir(parents=True)
    (tmp_path / "included").write_text(
        "[include]\n\tpath = ~/nested/more\n"
        "[http]\n\textraheader = Authorization: Bearer first-included\n"
    )
    (home / "nested" / "more").write_text(
        '[includeIf "gitdir:/elsewhere/"]\n\tpath = ../../included\n'  # a loop: read once
        "[http]\n\textraheader = Authorization: Bearer second-included\n"
    )
    with config.open("a") as handle:
        handle.write('[includeIf "gitdir:/never/"]\n\tpath = ../../included\n')
    found = workspace_credentials(workspace, str(home))
    assert found[:3] == (HEADER, ENCODED, TOKEN)
    assert set(found[3:]) == {
        "Authorization: Bearer first-included",
        "first-included",
        "Authorization: Bearer second-included",
        "second-included",
    }


def test_a_dot_git_file_and_a_worktrees_common_folder(tmp_path: Path) -> None:
    main = tmp_path / "main"
    _checkout_config(main)
    author = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b"}
    committer = {"GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "--no-verify", "-m", "x"],
        check=True,
        env={**os.environ, **author, **committer},
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True
    )
    assert (tmp_path / "wt" / ".git").is_file()
    assert workspace_credentials(tmp_path / "wt") == (HEADER, ENCODED, TOKEN)


def test_what_cannot_be_read_gives_nothing(tmp_path: Path) -> None:
    assert workspace_credentials(tmp_path) == ()  # no repository
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".git" / "config")  # a FIFO would block a plain read
    assert workspace_credentials(tmp_path) == ()
    (tmp_path / ".git" / "config").unlink()
    (tmp_path / ".git" / "config").write_text(f"[http]\nextraheader = {HEADER}\n" * 40_000)
    assert workspace_credentials(tmp_path) == ()  # over the size limit: not git's


def test_a_redactor_given_them_masks_the_file_as_a_tool_prints_it(tmp_path: Path) -> None:
    config = _checkout_config(tmp_path)
    redactor = Redactor(persisted_credentials(config.read_text()))
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "config", "--list", "--local"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    said = redactor.text(config.read_text() + listed)
    for secret in (TOKEN, ENCODED, HEADER):
        assert secret not in said
    assert "http.https://github.com/.extraheader=***" in said
