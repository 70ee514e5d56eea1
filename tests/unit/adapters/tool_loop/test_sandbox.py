"""Every path the model names stays inside the project root (issue: "every path
confined to the project root ... check after resolution")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.tool_loop.sandbox import (
    PathError,
    display_path,
    resolve_path,
    resolve_root,
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ with a file, a dir, and symlinks in and out; outside/ next to it."""
    return _make_tree(tmp_path)


def _make_tree(base: Path) -> Path:
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    root = base / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "file-out").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside)
    (root / "relative-out").symlink_to(Path("..") / "outside")
    (root / "dangling-out").symlink_to(outside / "not-yet.txt")
    (root / "file-in").symlink_to(root / "src" / "main.py")
    (root / "dir-in").symlink_to("src")
    (root / "loop").symlink_to("loop")
    return resolve_root(root)


def test_a_plain_relative_path_resolves_under_the_root(tree: Path) -> None:
    assert resolve_path(tree, "src/main.py") == tree / "src" / "main.py"


@pytest.mark.parametrize("path", ["src/new/deeper/file.txt", "./src//main.py", "new.txt"])
def test_paths_inside_the_root_are_accepted_even_before_they_exist(tree: Path, path: str) -> None:
    resolved = resolve_path(tree, path)
    assert resolved.is_relative_to(tree)
    assert display_path(tree, resolved) == os.path.normpath(path)


def test_the_root_itself_is_dot(tree: Path) -> None:
    assert resolve_path(tree, ".") == tree
    assert display_path(tree, tree) == "."


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("..", "'..'"),
        ("../outside/secret.txt", "'..'"),
        ("a/../../outside/secret.txt", "'..'"),
        ("src/../src/main.py", "'..'"),  # stays inside, but `..` is refused outright
        ("/etc/passwd", "absolute"),
        ("//etc/passwd", "absolute"),
        (str(Path("/tmp") / "x"), "absolute"),
        ("src/main.py\x00.txt", "NUL"),
        ("\x00", "NUL"),
    ],
)
def test_escapes_and_malformed_paths_are_rejected_with_a_reason(
    tree: Path, path: str, reason: str
) -> None:
    with pytest.raises(PathError, match=reason):
        resolve_path(tree, path)


@pytest.mark.parametrize("value", [None, 3, ["a"], {"path": "a"}])
def test_a_path_that_is_not_a_string_is_rejected(tree: Path, value: object) -> None:
    with pytest.raises(PathError, match="must be a string"):
        resolve_path(tree, value)


@pytest.mark.parametrize(
    "path",
    [
        "file-out",  # a symlink to a file outside
        "dir-out",  # a symlink to a directory outside
        "dir-out/secret.txt",  # through it, to an existing file
        "dir-out/new.txt",  # through it, to a file that would be created
        "relative-out/secret.txt",  # a relative symlink target
        "dangling-out",  # a symlink to a file outside that does not exist yet
    ],
)
def test_symlinks_that_resolve_outside_are_rejected(tree: Path, path: str) -> None:
    with pytest.raises(PathError, match="outside the project root"):
        resolve_path(tree, path)


def test_symlinks_inside_that_point_inside_are_followed(tree: Path) -> None:
    assert resolve_path(tree, "file-in") == tree / "src" / "main.py"
    assert resolve_path(tree, "dir-in/main.py") == tree / "src" / "main.py"
    assert display_path(tree, resolve_path(tree, "dir-in/new.txt")) == "src/new.txt"


def test_a_symlink_loop_is_rejected_not_crashed_on(tree: Path) -> None:
    with pytest.raises(PathError, match="loop"):
        resolve_path(tree, "loop/x")


def test_a_name_the_file_system_cannot_encode_is_rejected(tree: Path) -> None:
    with pytest.raises(PathError):
        resolve_path(tree, "bad\ud800name")


def test_a_root_reached_through_a_symlink_is_compared_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    root = resolve_root(link)
    assert root == real.resolve()
    assert resolve_path(root, "a.txt") == real.resolve() / "a.txt"


# -- the property -------------------------------------------------------------

_SEGMENTS = st.sampled_from(
    [
        *("src", "main.py", "dir-out", "file-out", "dir-in", "file-in", "dangling-out", "loop"),
        *("..", ".", "", "~", "-", "\x00", "\\", "secret.txt", "outside", "a b", "é"),
    ]
)
_PATHS = st.one_of(
    st.lists(_SEGMENTS, max_size=6).map("/".join),
    st.lists(_SEGMENTS, max_size=6).map(lambda parts: "/" + "/".join(parts)),
    st.text(max_size=40),
    # Lone surrogates too: JSON from the model can carry them (`"\ud800"`).
    st.text(alphabet=st.characters(categories=["L", "N", "P", "S", "Z", "Cc", "Cs"])),
)


@pytest.fixture(scope="module")
def shared_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_tree(tmp_path_factory.mktemp("sandbox"))


@settings(max_examples=400)
@given(path=_PATHS)
def test_any_path_string_resolves_inside_the_root_or_is_rejected(
    shared_tree: Path, path: str
) -> None:
    resolved: Path | None = None
    try:
        resolved = resolve_path(shared_tree, path)
    except PathError as exc:
        rejection = str(exc)
    if resolved is None:
        assert rejection  # rejected, with a reason the model can act on
        return
    assert resolved == shared_tree or resolved.is_relative_to(shared_tree)
    # Nothing left to follow: the real path of what the tools will touch is itself.
    assert os.path.realpath(resolved) == str(resolved)
    assert ".." not in Path(path).parts
    assert not path.startswith("/")
