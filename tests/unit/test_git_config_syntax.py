"""Git's config syntax: the parser against examples and, differentially, against git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.git_config_syntax import Entry, entries


def _listed(text: str) -> list[tuple[str, str | None]]:
    """(key, value) as `git config --list` names them."""
    found = []
    for entry in entries(text):
        parts = [entry.section, entry.subsection, entry.name]
        found.append((".".join(p for p in parts if p is not None and p != ""), entry.value))
    return found


def _git_list(path: Path) -> list[tuple[str, str | None]] | None:
    """What git reads from `path`, or None when git refuses the file."""
    done = subprocess.run(
        ["git", "config", "--file", str(path), "--no-includes", "--list", "-z"],
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path.parent)},
    )
    if done.returncode != 0:
        return None
    items = done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]
    listed: list[tuple[str, str | None]] = []
    for item in items:
        key, newline, value = item.partition("\n")
        listed.append((key, value if newline else None))
    return listed


def test_the_checkouts_config_is_read_as_git_reads_it() -> None:
    text = (
        "[core]\n\trepositoryformatversion = 0\n"
        '[remote "origin"]\n\turl = https://github.com/o/r\n'
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1h\n'
    )
    assert list(entries(text))[-1] == Entry(
        "http", "https://github.com/", "extraheader", "AUTHORIZATION: basic eC1h"
    )


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ('[s "Sub"]\n\tKey = "a ;b" # c\n', [("s.Sub.key", "a ;b")]),
        ("[S.Sub]\nk=v\n", [("s.sub.k", "v")]),
        ("[s]\n\tflag\n", [("s.flag", None)]),
        ("[s] k = v\n", [("s.k", "v")]),
        ("[s]\nk = one \\\n  two\n", [("s.k", "one   two")]),
        ('[s]\nk = \\t\\"x\\\\\n', [("s.k", '\t"x\\')]),
        ('[s "a\\"b\\c"]\nk=v\n', [('s.a"bc.k', "v")]),
        ("[s]\r\nk = v\r\n", [("s.k", "v")]),
        ("[s]\nbad line\nk = v\n", [("s.k", "v")]),
        ("[s\nk = v\n[t]\nk = w\n", [("t.k", "w")]),
        ('[s]\nk = "open\nj = v\n', [("s.j", "v")]),
        ("k = v\n", [("k", "v")]),
    ],
)
def test_examples(text: str, listed: list[tuple[str, str | None]]) -> None:
    assert _listed(text) == listed


_FRAGMENTS = st.sampled_from(
    [
        "[http]",
        '[http "https://github.com/"]',
        '[url "https://x:tok@host/"]',
        '[s "a\\"b\\\\c"]',
        "[Sec.Sub]",
        "[core]",
        "\tExtraHeader = AUTHORIZATION: basic abc=",
        "extraheader=v",
        "\tkey = a  b ",
        '\tkey = "a # b" ; c',
        "\tkey = one \\",
        '\tkey = \\t\\n\\b\\\\\\"',
        '\tkey = "x\\"y"',
        "\tflag",
        "# comment",
        "; comment",
        "",
        "   ",
        "[s] k = v",
        "k=",
        "k = =x",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_every_file_git_accepts_reads_as_git_reads_it(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], newline: str
) -> None:
    text = newline.join(lines) + newline
    path = tmp_path_factory.mktemp("config") / "config"
    path.write_text(text, encoding="utf-8", newline="")
    listed = _git_list(path)
    if listed is not None:  # git refuses a malformed file whole; then there is no oracle
        assert _listed(text) == listed
