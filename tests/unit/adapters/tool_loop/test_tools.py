"""The four file tools: what the model gets back, and what lands on disk."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import threading
import time
import tracemalloc
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.adapters.tool_loop.line_reader import MAX_LINE_CHARS
from copilot_driver.adapters.tool_loop.sandbox import resolve_root
from copilot_driver.adapters.tool_loop.tool_calls import (
    TOOL_DEFINITIONS,
    TOOL_NAMES,
    ToolOutcome,
    truncate,
)
from copilot_driver.adapters.tool_loop.tools import Toolbox

LIMIT = 2_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("untouched\n")
    return resolve_root(project)


@pytest.fixture
def box(root: Path) -> Toolbox:
    return Toolbox(root, max_result_chars=LIMIT)


def call(box: Toolbox, name: str, **arguments: Any) -> ToolOutcome:
    return box.execute(name, json.dumps(arguments))


# -- the schemas ----------------------------------------------------------------


def test_four_tools_are_offered_with_json_schemas_naming_their_required_arguments() -> None:
    assert TOOL_NAMES == ("read_file", "write_file", "edit_file", "list_directory")
    required = {
        d["function"]["name"]: d["function"]["parameters"]["required"] for d in TOOL_DEFINITIONS
    }
    assert required == {
        "read_file": ["path"],
        "write_file": ["path", "content"],
        "edit_file": ["path", "old_str", "new_str"],
        "list_directory": [],
    }
    assert all(d["type"] == "function" for d in TOOL_DEFINITIONS)


# -- read_file --------------------------------------------------------------------


def test_read_file_numbers_every_line(box: Toolbox, root: Path) -> None:
    (root / "a.py").write_text("one\ntwo\n\nfour")
    outcome = call(box, "read_file", path="a.py")
    assert not outcome.is_error
    assert outcome.result == "   1\tone\n   2\ttwo\n   3\t\n   4\tfour"


def test_read_file_shows_a_line_range(box: Toolbox, root: Path) -> None:
    (root / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    outcome = call(box, "read_file", path="a.txt", start_line=10, end_line=12)
    assert outcome.result == "  10\tline 10\n  11\tline 11\n  12\tline 12"


def test_read_file_past_the_end_is_an_error_naming_the_length(box: Toolbox, root: Path) -> None:
    (root / "a.txt").write_text("x\ny\n")
    outcome = call(box, "read_file", path="a.txt", start_line=5)
    assert outcome.is_error
    assert "has 2 lines" in outcome.result


def test_read_file_of_a_long_file_stops_at_a_line_and_says_where_to_read_on(
    box: Toolbox, root: Path
) -> None:
    (root / "big.txt").write_text("".join(f"{'x' * 50} {n}\n" for n in range(1, 1001)))
    outcome = call(box, "read_file", path="big.txt")
    assert len(outcome.result) <= LIMIT
    last = outcome.result.splitlines()[-1]
    assert last.startswith("[truncated: lines 1-")
    assert "of 1000 shown" in last
    next_line = int(last.rsplit("start_line=", 1)[1].rstrip("]"))
    again = call(box, "read_file", path="big.txt", start_line=next_line)
    assert again.result.startswith(f"{next_line:>4}\t")


def test_read_file_of_one_huge_line_is_cut_with_a_note(box: Toolbox, root: Path) -> None:
    (root / "min.js").write_text("y" * 10_000)
    outcome = call(box, "read_file", path="min.js")
    assert len(outcome.result) <= LIMIT
    shown = outcome.result.removeprefix("   1\t").split(" \u2026 ", 1)[0]
    assert set(shown) == {"y"}
    assert outcome.result.endswith(
        f" \u2026 [line truncated: {10_000 - len(shown)} more characters]"
    )


def test_read_file_caps_each_line_and_counts_what_it_cut(root: Path) -> None:
    roomy = Toolbox(root, max_result_chars=50_000)
    long = "x" * (MAX_LINE_CHARS + 123)
    (root / "wide.txt").write_text(f"short\n{long}\r\n{'z' * MAX_LINE_CHARS}\nlast")
    outcome = call(roomy, "read_file", path="wide.txt")
    assert outcome.result.split("\n") == [
        "   1\tshort",
        f"   2\t{'x' * MAX_LINE_CHARS} \u2026 [line truncated: 123 more characters]",
        f"   3\t{'z' * MAX_LINE_CHARS}",
        "   4\tlast",
    ]


def test_read_file_of_a_huge_first_line_streams_it_without_holding_it(
    box: Toolbox, root: Path
) -> None:
    size = 50 * 1024 * 1024
    with (root / "huge.txt").open("w") as file:
        chunk = "a" * (1 << 20)
        for _ in range(size // len(chunk)):
            file.write(chunk)
        file.write("\nsecond line\n")
    tracemalloc.start()
    try:
        first = call(box, "read_file", path="huge.txt", end_line=1)
        second = call(box, "read_file", path="huge.txt", start_line=2)
        past = call(box, "read_file", path="huge.txt", start_line=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # the line is 50 MB: it was never held whole
    assert first.result.startswith("   1\taaaa")
    assert len(first.result) <= LIMIT
    shown = len(first.result.removeprefix("   1\t").split(" \u2026 ", 1)[0])
    assert first.result.endswith(f"[line truncated: {size - shown} more characters]")
    assert second.result == "   2\tsecond line"
    assert past.is_error
    assert "has 2 lines" in past.result


@pytest.mark.parametrize(
    ("setup", "path", "expected"),
    [
        (lambda r: None, "missing.txt", "missing.txt does not exist"),
        (lambda r: (r / "d").mkdir(), "d", "is a directory; use list_directory"),
        (lambda r: (r / "b.bin").write_bytes(b"\x00\x01\x02"), "b.bin", "binary file"),
    ],
)
def test_read_file_errors_say_what_is_wrong(
    box: Toolbox, root: Path, setup: Any, path: str, expected: str
) -> None:
    setup(root)
    outcome = call(box, "read_file", path=path)
    assert outcome.is_error
    assert outcome.result.startswith("error: ")
    assert expected in outcome.result


def test_read_file_of_an_empty_file_says_so(box: Toolbox, root: Path) -> None:
    (root / "e.txt").write_text("")
    assert call(box, "read_file", path="e.txt").result == "(e.txt is empty)"


# -- write_file ---------------------------------------------------------------------


def test_write_file_creates_missing_directories_and_reports_the_modification(
    box: Toolbox, root: Path
) -> None:
    outcome = call(box, "write_file", path="src/pkg/new.py", content="a = 1\nb = 2\n")
    assert not outcome.is_error
    assert outcome.modified == "src/pkg/new.py"
    assert outcome.result == "created src/pkg/new.py: 2 lines, 12 bytes"
    assert (root / "src" / "pkg" / "new.py").read_text() == "a = 1\nb = 2\n"


def test_write_file_replaces_a_file_byte_for_byte(box: Toolbox, root: Path) -> None:
    (root / "w.txt").write_text("old")
    outcome = call(box, "write_file", path="w.txt", content="crlf\r\nkept é")
    assert outcome.result.startswith("replaced w.txt")
    assert (root / "w.txt").read_bytes() == "crlf\r\nkept é".encode()


def test_write_file_onto_a_directory_is_an_error(box: Toolbox, root: Path) -> None:
    (root / "d").mkdir()
    outcome = call(box, "write_file", path="d", content="x")
    assert outcome.is_error
    assert outcome.modified is None


def test_write_file_under_a_file_is_an_error_naming_it_relative_to_the_root(
    box: Toolbox, root: Path
) -> None:
    (root / "f").write_text("x")
    outcome = call(box, "write_file", path="f/inner.txt", content="x")
    assert outcome.is_error
    assert outcome.result == "error: Not a directory: f/inner.txt"
    assert str(root) not in outcome.result


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "pipe"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("edit_file", {"path": "pipe", "old_str": "a", "new_str": "b"}),
    ],
)
def test_a_fifo_is_refused_instead_of_blocking_the_tool(
    box: Toolbox, root: Path, name: str, arguments: dict[str, Any]
) -> None:
    os.mkfifo(root / "pipe")
    outcome = call(box, name, **arguments)
    assert outcome.is_error
    assert "not a regular file" in outcome.result


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link/outside.txt", "a\x00b"])
def test_write_file_never_writes_outside_the_root(
    box: Toolbox, root: Path, tmp_path: Path, path: str
) -> None:
    (root / "link").symlink_to(tmp_path)
    outcome = call(box, "write_file", path=path, content="pwned")
    assert outcome.is_error
    assert (tmp_path / "outside.txt").read_text() == "untouched\n"


def test_write_file_through_a_dangling_symlink_out_creates_nothing(
    box: Toolbox, root: Path, tmp_path: Path
) -> None:
    (root / "trap").symlink_to(tmp_path / "created-outside.txt")
    outcome = call(box, "write_file", path="trap", content="pwned")
    assert outcome.is_error
    assert "outside the project root" in outcome.result
    assert not (tmp_path / "created-outside.txt").exists()


# -- edit_file ----------------------------------------------------------------------


def test_edit_file_with_exactly_one_match_replaces_it(box: Toolbox, root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n")
    outcome = call(box, "edit_file", path="m.py", old_str="return 1", new_str="return 2")
    assert not outcome.is_error
    assert outcome.modified == "m.py"
    assert outcome.result == "edited m.py: replaced 1 match at line 2"
    assert (root / "m.py").read_text() == "def f():\n    return 2\n"


@pytest.mark.parametrize(
    ("text", "old_str", "expected"),
    [
        # the count, and how to recover
        ("x = 1\n", "y = 1", ["was not found in m.py (0 matches)", "read_file"]),
        # the count and the lines
        (
            "x = 1\ny = 2\nx = 1\n",
            "x = 1",
            ["occurs 2 times in m.py (at lines 1, 3)", "exactly once"],
        ),
    ],
    ids=["zero-matches", "two-matches"],
)
def test_edit_file_without_exactly_one_match_is_an_error_saying_why_and_changes_nothing(
    box: Toolbox, root: Path, text: str, old_str: str, expected: list[str]
) -> None:
    (root / "m.py").write_text(text)
    outcome = call(box, "edit_file", path="m.py", old_str=old_str, new_str="z = 3")
    assert outcome.is_error
    assert outcome.modified is None
    for fragment in expected:
        assert fragment in outcome.result
    assert (root / "m.py").read_text() == text


def test_edit_file_counts_overlapping_matches_as_ambiguous(box: Toolbox, root: Path) -> None:
    (root / "a.txt").write_text("aaa")
    outcome = call(box, "edit_file", path="a.txt", old_str="aa", new_str="b")
    assert outcome.is_error
    assert "occurs 2 times" in outcome.result


def test_edit_file_names_match_lines_in_a_large_file_in_one_pass(box: Toolbox, root: Path) -> None:
    lines = [f"row {n}\n" for n in range(1, 200_001)]
    for n in (7, 8, 50_000, 123_456, 199_999):
        lines[n - 1] = f"row {n} TODO\n"
    lines[8 - 1] = "row 8 TODO TODO\n"  # two matches on one line name it once
    text = "".join(lines)
    (root / "big.txt").write_text(text)
    outcome = call(box, "edit_file", path="big.txt", old_str="TODO", new_str="DONE")
    assert outcome.is_error
    assert "occurs 6 times in big.txt (at lines 7, 8, 50000, 123456, 199999);" in outcome.result
    assert (root / "big.txt").read_text() == text

    many = "".join(f"x = {n}\n" for n in range(200_000))
    (root / "many.txt").write_text(many)
    outcome = call(box, "edit_file", path="many.txt", old_str="x = ", new_str="y = ")
    assert "occurs 200000 times in many.txt (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)" in (
        outcome.result
    )

    outcome = call(box, "edit_file", path="big.txt", old_str="row 123456 TODO", new_str="r")
    assert outcome.result == "edited big.txt: replaced 1 match at line 123456"


def test_edit_file_matches_lf_text_against_a_crlf_file(box: Toolbox, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    outcome = call(box, "edit_file", path="w.txt", old_str="one\ntwo", new_str="1\n2")
    assert not outcome.is_error, outcome.result
    assert (root / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": "m.py", "old_str": "", "new_str": "x"}, "old_str is empty"),
        ({"path": "m.py", "old_str": "x", "new_str": "x"}, "nothing would change"),
        ({"path": "m.py", "old_str": "x"}, "new_str argument is missing"),
        ({"path": "m.py", "old_str": 1, "new_str": "x"}, "not a string"),
        ({"path": "nope.py", "old_str": "x", "new_str": "y"}, "use write_file to create it"),
    ],
)
def test_edit_file_argument_errors_are_explained(
    box: Toolbox, root: Path, arguments: dict[str, Any], expected: str
) -> None:
    (root / "m.py").write_text("x\n")
    outcome = box.execute("edit_file", json.dumps(arguments))
    assert outcome.is_error
    assert expected in outcome.result


def test_edit_file_refuses_a_file_that_is_not_utf8(box: Toolbox, root: Path) -> None:
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    outcome = call(box, "edit_file", path="latin1.txt", old_str="caf", new_str="x")
    assert outcome.is_error
    assert "not UTF-8" in outcome.result
    assert (root / "latin1.txt").read_bytes() == "café".encode("latin-1")


def test_edit_file_through_a_symlink_out_leaves_the_outside_file_alone(
    box: Toolbox, root: Path, tmp_path: Path
) -> None:
    (root / "out").symlink_to(tmp_path / "outside.txt")
    outcome = call(box, "edit_file", path="out", old_str="untouched", new_str="pwned")
    assert outcome.is_error
    assert (tmp_path / "outside.txt").read_text() == "untouched\n"


# -- list_directory -------------------------------------------------------------------


def test_list_directory_is_sorted_and_marks_directories(box: Toolbox, root: Path) -> None:
    (root / "zeta.txt").write_text("")
    (root / "alpha").mkdir()
    (root / "beta.py").write_text("")
    (root / "alpha" / "inner.txt").write_text("")
    assert call(box, "list_directory").result == "alpha/\nbeta.py\nzeta.txt"
    assert call(box, "list_directory", path="alpha").result == "inner.txt"


def test_list_directory_of_an_empty_or_missing_directory(box: Toolbox, root: Path) -> None:
    (root / "empty").mkdir()
    assert call(box, "list_directory", path="empty").result == "(empty is an empty directory)"
    missing = call(box, "list_directory", path="missing")
    assert missing.is_error
    assert "missing does not exist" in missing.result


def test_list_directory_outside_the_root_is_refused(box: Toolbox, root: Path) -> None:
    outcome = call(box, "list_directory", path="..")
    assert outcome.is_error
    assert "'..'" in outcome.result


def test_a_listing_over_the_limit_is_truncated_with_a_note(box: Toolbox, root: Path) -> None:
    for n in range(400):
        (root / f"file-{n:04}.txt").write_text("")
    outcome = call(box, "list_directory")
    assert len(outcome.result) <= LIMIT
    assert "[truncated:" in outcome.result
    assert "characters not shown" in outcome.result


# -- symlinks and hard links ---------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("outside secret\n")
    return path


@pytest.fixture
def links(root: Path, outside: Path) -> Path:
    """dir/ with a file, and a symlink at every position of a path, in and out."""
    (root / "dir").mkdir()
    (root / "dir" / "file.txt").write_text("inside\n")
    (root / "link-in").symlink_to("dir")
    (root / "dir" / "link-out").symlink_to(outside)
    (root / "dir" / "file-link").symlink_to(outside / "secret.txt")
    (root / "file-in").symlink_to(root / "dir" / "file.txt")
    (root / "dangling").symlink_to(outside / "not-yet.txt")
    (root / "dir" / "dangling-dir").symlink_to(root / "missing-dir")
    (root / "loop").symlink_to("loop")
    return outside


_SYMLINKED = [
    "link-in/file.txt",  # the first component, pointing inside
    "dir/link-out/secret.txt",  # a middle component, pointing outside
    "dir/file-link",  # the last component, a file outside
    "file-in",  # the last component, a file inside
    "link-in",  # the only component, a directory inside
    "dangling",  # the last component, dangling (a file that could be created outside)
    "dir/dangling-dir/new.txt",  # a middle component, dangling
    "loop",  # a symlink loop, last
    "loop/x",  # a symlink loop, on the way
]
_EVERY_TOOL = [
    ("read_file", {}),
    ("write_file", {"content": "pwned\n"}),
    ("edit_file", {"old_str": "secret", "new_str": "pwned"}),
    ("list_directory", {}),
]


@pytest.mark.parametrize("path", _SYMLINKED)
@pytest.mark.parametrize(("name", "extra"), _EVERY_TOOL, ids=[n for n, _ in _EVERY_TOOL])
def test_a_symlink_anywhere_in_the_path_is_refused_by_every_tool(
    box: Toolbox,
    root: Path,
    links: Path,
    name: str,
    extra: dict[str, Any],
    path: str,
) -> None:
    outcome = call(box, name, path=path, **extra)
    assert outcome.is_error
    assert outcome.modified is None
    assert "symlink" in outcome.result
    assert "symlinks are not followed" in outcome.result
    assert "outside secret" not in outcome.result
    assert (links / "secret.txt").read_text() == "outside secret\n"
    assert sorted(p.name for p in links.iterdir()) == ["secret.txt"]
    assert (root / "dir" / "file.txt").read_text() == "inside\n"
    assert not (root / "missing-dir").exists()


def test_a_symlink_refusal_names_the_link_and_says_what_to_do(
    box: Toolbox, root: Path, links: Path
) -> None:
    outcome = call(box, "read_file", path="link-in/file.txt")
    assert outcome.result == (
        "error: path 'link-in/file.txt' goes through the symlink 'link-in'; symlinks are "
        "not followed (one can lead outside the project root): use the real path of the "
        "file or directory inside the project"
    )
    assert call(box, "read_file", path="dir/file.txt").result == "   1\tinside"


def test_a_listing_shows_symlinks_as_plain_names_not_as_directories(
    box: Toolbox, root: Path, links: Path
) -> None:
    assert call(box, "list_directory").result == "dangling\ndir/\nfile-in\nlink-in\nloop"
    listed = call(box, "list_directory", path="dir").result
    assert listed == "dangling-dir\nfile-link\nfile.txt\nlink-out"


@pytest.mark.parametrize(("name", "extra"), _EVERY_TOOL[:3], ids=[n for n, _ in _EVERY_TOOL[:3]])
def test_a_file_hard_linked_to_one_outside_is_neither_read_nor_written(
    box: Toolbox, root: Path, outside: Path, name: str, extra: dict[str, Any]
) -> None:
    (root / "linked.txt").hardlink_to(outside / "secret.txt")
    before = os.stat(outside / "secret.txt")
    outcome = call(box, name, path="linked.txt", **extra)
    assert outcome.is_error
    assert outcome.result == (
        "error: linked.txt has 2 hard links (the same file under other names, which may be "
        "outside the project root); hard-linked files are neither read nor written: "
        "use another file"
    )
    assert (outside / "secret.txt").read_text() == "outside secret\n"
    assert os.stat(outside / "secret.txt").st_mtime_ns == before.st_mtime_ns


def test_a_file_hard_linked_inside_the_project_is_refused_too(box: Toolbox, root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").hardlink_to(root / "a.txt")
    assert "has 2 hard links" in call(box, "read_file", path="a.txt").result
    assert "has 2 hard links" in call(box, "write_file", path="b.txt", content="x").result
    assert (root / "a.txt").read_text() == "one\n"


def test_write_file_replaces_the_content_of_the_same_file(box: Toolbox, root: Path) -> None:
    (root / "w.txt").write_text("old")
    inode = os.stat(root / "w.txt").st_ino
    assert not call(box, "write_file", path="w.txt", content="new").is_error
    assert not call(box, "edit_file", path="w.txt", old_str="new", new_str="newer").is_error
    assert os.stat(root / "w.txt").st_ino == inode
    assert (root / "w.txt").read_text() == "newer"


# -- the race: a directory swapped for a symlink while the tools run -----------------------

_RACE_SECONDS = 2.0
_RACE_OPERATIONS = 3000


class _Swapper(threading.Thread):
    """Swaps `sub` for a symlink to `outside` and back, as fast as it can.

    A `write_file` that lands while `sub` is missing re-creates it as a real
    directory (inside the project, so allowed); the swapper then removes that
    one to put its symlink or the real directory back.
    """

    def __init__(self, sub: Path, outside: Path) -> None:
        super().__init__(daemon=True)
        self.sub = sub
        self.away = sub.with_name(".sub-away")
        self.outside = outside
        self.stop = threading.Event()
        self.swaps = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                os.rename(self.sub, self.away)
                self._replace_with(lambda: os.symlink(self.outside, self.sub))
                os.unlink(self.sub)
                self._replace_with(lambda: os.rename(self.away, self.sub))
                self.swaps += 1
                # Let the tools run against the real directory too: without a pause the
                # thread mostly waits for the GIL with the symlink in place.
                time.sleep(0.0002)
        except BaseException as exc:
            self.failure = exc

    def _replace_with(self, put: Callable[[], None]) -> None:
        while True:
            try:
                put()
            except OSError as exc:
                if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                shutil.rmtree(self.sub, ignore_errors=True)
            else:
                return


def test_a_directory_swapped_for_a_symlink_during_the_calls_never_leads_outside(
    tmp_path: Path,
) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    # The same names as inside, so that any operation redirected through the
    # symlink would succeed out there; an edit there would find its old_str.
    (outside / "file.txt").write_text(f"{secret} A\n")
    (outside / "out.txt").write_text(f"{secret} out\n")
    (outside / f"{secret}.txt").write_text(f"{secret}\n")  # shows in a listing
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}
    project = tmp_path / "project"
    sub = project / "sub"
    sub.mkdir(parents=True)
    (sub / "file.txt").write_text("inside A\n")
    box = Toolbox(resolve_root(project), max_result_chars=LIMIT)
    operations = [
        ("read_file", {"path": "sub/file.txt"}),
        ("write_file", {"path": "sub/out.txt", "content": "written inside\n"}),
        ("edit_file", {"path": "sub/file.txt", "old_str": "A\n", "new_str": "B\n"}),
        ("edit_file", {"path": "sub/file.txt", "old_str": "B\n", "new_str": "A\n"}),
        ("list_directory", {"path": "sub"}),
    ]
    attempted = refused_symlinks = 0
    succeeded: Counter[str] = Counter()
    seen_outside: list[str] = []
    # A random order, so that no operation keeps landing in the same phase of a swap.
    pick = random.Random(0).choice
    swapper = _Swapper(sub, outside)
    swapper.start()
    deadline = time.monotonic() + _RACE_SECONDS
    try:
        while attempted < _RACE_OPERATIONS and time.monotonic() < deadline:
            name, arguments = pick(operations)
            outcome = box.execute(name, json.dumps(arguments))
            attempted += 1
            succeeded[name] += not outcome.is_error
            refused_symlinks += "symlinks are not followed" in outcome.result
            if secret in outcome.result:
                seen_outside.append(outcome.result)
    finally:
        swapper.stop.set()
        swapper.join()
    assert swapper.failure is None, swapper.failure
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}
    print(
        f"race: {attempted} operations, {succeeded.total()} succeeded {dict(succeeded)}, "
        f"{refused_symlinks} refused at a symlink, {swapper.swaps} swaps"
    )
    assert seen_outside == []  # nothing outside was read or listed
    assert after == before  # nothing outside was written, created or touched
    # Not vacuous: the tools worked, the swaps happened, and calls ran into them.
    assert min(succeeded[name] for name, _ in operations) > 0
    assert swapper.swaps >= 50
    assert refused_symlinks > 0


# -- the dispatcher ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", '{"path": "a.txt"', "not valid JSON"),
        ("read_file", '["a.txt"]', "must be a JSON object"),
        ("read_file", "{}", "path argument is missing"),
        ("delete_file", '{"path": "a.txt"}', "unknown tool 'delete_file'"),
        ("read_file", '{"path": "a.txt", "start_line": 0}', "start_line must be an integer"),
    ],
)
def test_bad_calls_become_error_results_never_exceptions(
    box: Toolbox, name: str, arguments: str, expected: str
) -> None:
    outcome = box.execute(name, arguments)
    assert outcome.is_error
    assert outcome.result.startswith("error: ")
    assert expected in outcome.result


def test_empty_arguments_mean_no_arguments(box: Toolbox, root: Path) -> None:
    (root / "x").write_text("")
    assert box.execute("list_directory", "").result == "x"


@given(text=st.text(max_size=3000), limit=st.integers(min_value=200, max_value=2500))
def test_truncate_keeps_a_result_within_its_limit_and_says_how_much_was_cut(
    text: str, limit: int
) -> None:
    cut = truncate(text, limit)
    assert len(cut) <= limit
    if len(text) <= limit:
        assert cut == text
    else:
        kept = cut.split("\n[truncated: ", 1)[0]
        assert text.startswith(kept)
        assert f"{len(text) - len(kept)} of {len(text)} characters not shown" in cut
