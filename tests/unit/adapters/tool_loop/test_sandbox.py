"""Every path the model names is opened beneath the project root, one component
at a time, and never through a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.tool_loop.sandbox import (
    PathError,
    Target,
    check_regular,
    locate,
    resolve_root,
    split_path,
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
    (root / "src" / "up").symlink_to("..")
    (root / "loop").symlink_to("loop")
    return resolve_root(root)


def _opened(fd: int | None) -> str:
    """The real path of an open descriptor, as the kernel knows it."""
    assert fd is not None
    return os.readlink(f"/proc/self/fd/{fd}")


# -- the path as a string ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("src/main.py", ("src", "main.py")),
        ("./src//main.py", ("src", "main.py")),
        ("src/new/deeper/file.txt", ("src", "new", "deeper", "file.txt")),
        (".", ()),
        ("./", ()),
        (" a b ", (" a b ",)),
    ],
)
def test_a_relative_path_splits_into_its_components(path: str, parts: tuple[str, ...]) -> None:
    assert split_path(path) == parts


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
        ("bad\ud800name", "cannot be used"),  # a lone surrogate the file system cannot encode
    ],
)
def test_escapes_and_malformed_paths_are_rejected_with_a_reason(
    tree: Path, path: str, reason: str
) -> None:
    with pytest.raises(PathError, match=reason):
        split_path(path)
    with pytest.raises(PathError, match=reason), locate(tree, path):
        pass


@pytest.mark.parametrize("value", [None, 3, ["a"], {"path": "a"}])
def test_a_path_that_is_not_a_string_is_rejected(tree: Path, value: object) -> None:
    with pytest.raises(PathError, match="must be a string"):
        split_path(value)


# -- opening it beneath the root ----------------------------------------------------


def test_a_plain_path_holds_its_real_parent_directory_open(tree: Path) -> None:
    with locate(tree, "src/main.py") as target:
        assert target.shown == "src/main.py"
        assert target.name == "main.py"
        assert _opened(target.parent_fd) == str(tree / "src")
        status = target.lstat()
        assert status is not None
        assert stat.S_ISREG(status.st_mode)


def test_the_root_itself_is_dot_and_its_own_parent(tree: Path) -> None:
    with locate(tree, ".") as target:
        assert target.shown == "."
        assert target.name is None
        assert _opened(target.parent_fd) == str(tree)
        status = target.lstat()
        assert status is not None
        assert stat.S_ISDIR(status.st_mode)


def test_a_missing_directory_on_the_way_means_the_path_does_not_exist(tree: Path) -> None:
    with locate(tree, "no/such/file.txt") as target:
        assert target.parent_fd is None
        assert target.lstat() is None
        with pytest.raises(FileNotFoundError):
            target.open_file(os.O_RDONLY)
    assert not (tree / "no").exists()


def test_missing_directories_are_created_when_asked(tree: Path) -> None:
    with locate(tree, "src/new/deeper/file.txt", make_parents=True) as target:
        assert _opened(target.parent_fd) == str(tree / "src" / "new" / "deeper")
        assert target.lstat() is None
    assert (tree / "src" / "new" / "deeper").is_dir()


def test_a_file_where_a_directory_should_be_names_the_path_relative_to_the_root(
    tree: Path,
) -> None:
    with pytest.raises(NotADirectoryError) as caught, locate(tree, "src/main.py/x"):
        pass
    assert caught.value.filename == "src/main.py/x"


def test_descriptors_are_closed_when_the_block_ends(tree: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for path in ("src/main.py", ".", "no/such", "src/new/x"):
        with locate(tree, path, make_parents=True) as target:
            target.lstat()
    with pytest.raises(PathError), locate(tree, "dir-out/secret.txt"):
        pass
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize(
    ("path", "link"),
    [
        ("dir-out/secret.txt", "dir-out"),  # a directory symlink out, first component
        ("dir-out/new.txt", "dir-out"),  # through it, to a file that would be created
        ("relative-out/secret.txt", "relative-out"),  # a relative symlink target
        ("dir-in/main.py", "dir-in"),  # a symlink that stays inside is refused too
        ("src/up/src/main.py", "src/up"),  # a middle component
        ("loop/x", "loop"),  # a symlink loop
    ],
)
def test_a_symlink_on_the_way_is_refused_and_named(tree: Path, path: str, link: str) -> None:
    for make_parents in (False, True):
        with (
            pytest.raises(PathError, match=f"goes through the symlink '{link}'") as caught,
            locate(tree, path, make_parents=make_parents),
        ):
            pass
        assert "symlinks are not followed" in str(caught.value)
    assert sorted(p.name for p in (tree.parent / "outside").iterdir()) == ["secret.txt"]


@pytest.mark.parametrize("path", ["file-out", "dangling-out", "file-in", "dir-in", "loop"])
def test_a_symlink_as_the_last_component_is_refused_by_every_operation(
    tree: Path, path: str
) -> None:
    with locate(tree, path) as target:
        with pytest.raises(PathError, match="is a symlink"):
            target.lstat()
        with pytest.raises(PathError, match="is a symlink"):
            target.open_file(os.O_RDONLY)
        with pytest.raises(PathError, match="is a symlink"):
            target.open_directory()
        with pytest.raises(FileExistsError):
            target.create_file()
    assert not (tree.parent / "outside" / "not-yet.txt").exists()


def test_a_root_reached_through_a_symlink_is_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    root = resolve_root(link)
    assert root == real.resolve()
    with locate(root, "a.txt") as target:
        assert _opened(target.parent_fd) == str(root)


# -- what is opened ------------------------------------------------------------------


def test_a_hard_linked_file_is_refused_when_opened(tree: Path) -> None:
    (tree / "linked.txt").hardlink_to(tree.parent / "outside" / "secret.txt")
    with locate(tree, "linked.txt") as target:
        with pytest.raises(PathError, match="has 2 hard links"):
            target.open_file(os.O_RDONLY)
        with pytest.raises(PathError, match="neither read nor written"):
            target.open_file(os.O_WRONLY)


def test_only_a_regular_file_with_one_name_passes(tree: Path) -> None:
    check_regular(os.stat(tree / "src" / "main.py"), "src/main.py")
    with pytest.raises(PathError, match="not a regular file"):
        check_regular(os.stat(tree / "src"), "src")


def test_a_new_file_is_created_empty_and_only_where_nothing_is(tree: Path) -> None:
    with locate(tree, "src/fresh.txt") as target:
        fd, status = target.create_file()
        os.close(fd)
        assert status.st_size == 0
        assert status.st_nlink == 1
        with pytest.raises(FileExistsError):
            target.create_file()
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tree / "src" / "fresh.txt").st_mode) == 0o666 & ~umask


# -- the property ---------------------------------------------------------------------

_SEGMENTS = st.sampled_from(
    [
        *("src", "main.py", "dir-out", "file-out", "dir-in", "file-in", "dangling-out", "loop"),
        *("up", "..", ".", "", "~", "-", "\x00", "\\", "secret.txt", "outside", "a b", "é"),
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


def _use(target: Target) -> None:
    """Everything a tool may do with a target, errors included."""
    for operation in (target.lstat, lambda: target.open_file(os.O_RDONLY)):
        try:
            result = operation()
        except (PathError, OSError):
            continue
        if isinstance(result, tuple):
            os.close(result[0])


@settings(max_examples=400)
@given(path=_PATHS)
def test_any_path_string_opens_its_lexical_parent_beneath_the_root_or_is_rejected(
    shared_tree: Path, path: str
) -> None:
    rejection: PathError | OSError | None = None
    opened: str | None = None
    try:
        with locate(shared_tree, path) as target:
            opened = None if target.parent_fd is None else _opened(target.parent_fd)
            _use(target)
    except (PathError, OSError) as exc:  # OSError: e.g. a file where a directory should be
        rejection = exc
    if rejection is not None:
        assert str(rejection)  # rejected, with a reason the model can act on
        assert not str(getattr(rejection, "filename", None) or "").startswith("/")
        return
    assert ".." not in Path(path).parts
    assert not path.startswith("/")
    if opened is not None:
        # No symlink was followed: the directory held open is the one the path names.
        parts = split_path(path)
        assert opened == str(shared_tree.joinpath(*parts[:-1]))
