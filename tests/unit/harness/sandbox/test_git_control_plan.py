"""What `plan` does with two snapshots: properties over generated ones, and examples."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.sandbox.git_control_plan import (
    ADMIN,
    BARE,
    DISARM,
    GITFILE,
    KEEP,
    MOVE,
    QUARANTINE_MOVE,
    REDIRECT,
    REMOVE,
    REPOSITORY,
    RESTORE,
    Control,
    GitControls,
    Step,
    plan,
)

KINDS = {
    ".": BARE,
    ".git": REPOSITORY,
    ".git/commondir": REDIRECT,
    ".git/config.worktree": REDIRECT,
    ".git/modules/a": ADMIN,
    ".git/modules/a/commondir": REDIRECT,
    ".git/modules/a/modules/b": ADMIN,
    ".git/worktrees/w": ADMIN,
    ".git/worktrees/w/commondir": REDIRECT,
    "n/.git": REPOSITORY,
    "n/.git/modules/c": ADMIN,
    "n/.git/commondir": REDIRECT,
    "n/m/.git": GITFILE,
    "s/.git": GITFILE,
    "b": BARE,
    "b/modules/d": ADMIN,
    "b/commondir": REDIRECT,
}
"""A small workspace's possible control locations, each of its one kind."""
MOVING = (MOVE, QUARANTINE_MOVE, RESTORE)


def controls() -> st.SearchStrategy[dict[str, Control]]:
    def control(path: str) -> st.SearchStrategy[Control]:
        small = KINDS[path] in (GITFILE, REDIRECT)
        return st.builds(
            Control,
            kind=st.just(KINDS[path]),
            digest=st.sampled_from(["1", "2"]),
            original=st.sampled_from([None, b"x"]) if small else st.none(),
        )

    return st.lists(st.sampled_from(sorted(KINDS)), unique=True).flatmap(
        lambda paths: st.fixed_dictionaries({path: control(path) for path in with_holders(paths)})
    )


def with_holders(paths: list[str]) -> list[str]:
    """As a walk finds them: a location inside a git folder comes with that folder."""
    found = set(paths)
    for path in paths:
        found.update(str(up) for up in PurePosixPath(path).parents if str(up) in KINDS)
    return sorted(found - ({"."} - set(paths)))


def inside(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


@given(before=controls(), after=controls())
def test_every_change_gets_one_step_unless_it_went_with_an_outer_one(
    before: dict[str, Control], after: dict[str, Control]
) -> None:
    steps = plan(GitControls(before), GitControls(after))
    stepped = {step.path: step for step in steps}
    assert len(stepped) == len(steps)
    moved = [step.path for step in steps if step.action in MOVING]
    for path, control in after.items():
        if before.get(path) == control:
            assert path not in stepped
        elif path not in stepped:
            assert any(inside(path, away) and away != path for away in moved)
    for step in steps:
        assert not any(inside(step.path, away) and away != step.path for away in moved)
    depths = [0 if step.path == "." else len(PurePosixPath(step.path).parts) for step in steps]
    assert depths == sorted(depths)


@given(before=controls(), after=controls())
def test_each_kind_gets_its_own_way_out(
    before: dict[str, Control], after: dict[str, Control]
) -> None:
    for step in plan(GitControls(before), GitControls(after)):
        earlier = before.get(step.path)
        assert step.what == ("written" if earlier is None else "changed")
        if earlier is not None and earlier.original is not None:
            assert (step.action, step.target) == (RESTORE, step.path + ".sandboxed")
        elif step.kind == REDIRECT and earlier is None:
            assert step.action == REMOVE
        elif step.path == ".git" and earlier is not None:
            assert step.action == KEEP  # the workspace's own repository stays
        elif step.kind == BARE:
            head = str(PurePosixPath(step.path, "HEAD.sandboxed"))
            assert (step.action, step.target) == (DISARM, head)
        elif step.kind == ADMIN:
            assert step.action == QUARANTINE_MOVE
            parts = PurePosixPath(step.target).parts
            assert "sandboxed" in parts
            assert parts[parts.index("sandboxed") + 1] in ("modules", "worktrees")
        else:
            assert (step.action, step.target) == (MOVE, step.path + ".sandboxed")


@given(snapshot=controls())
def test_nothing_changed_means_nothing_to_do(snapshot: dict[str, Control]) -> None:
    assert plan(GitControls(snapshot), GitControls(dict(snapshot))) == []


def test_a_new_nested_repository_takes_its_modules_along() -> None:
    after = {
        ".git": Control(REPOSITORY, "r"),
        "n/.git": Control(REPOSITORY, "n"),
        "n/.git/modules/c": Control(ADMIN, "c"),
        "n/.git/commondir": Control(REDIRECT, "x", b"x"),
    }
    assert plan(GitControls({".git": Control(REPOSITORY, "r")}), GitControls(after)) == [
        Step(MOVE, "n/.git", REPOSITORY, "written", "n/.git.sandboxed")
    ]


def test_modules_go_to_their_own_git_folders_quarantine() -> None:
    after = {
        ".git": Control(REPOSITORY, "r"),
        ".git/modules/a": Control(ADMIN, "a"),
        ".git/modules/a/modules/b": Control(ADMIN, "b"),
        "b": Control(BARE, "b"),
        "b/modules/d": Control(ADMIN, "d"),
    }
    before = {name: after[name] for name in (".git", ".git/modules/a", "b")}
    assert plan(GitControls(before), GitControls(after)) == [
        Step(QUARANTINE_MOVE, "b/modules/d", ADMIN, "written", "b/sandboxed/modules/d"),
        Step(
            QUARANTINE_MOVE,
            ".git/modules/a/modules/b",
            ADMIN,
            "written",
            ".git/sandboxed/modules/a/modules/b",
        ),
    ]
