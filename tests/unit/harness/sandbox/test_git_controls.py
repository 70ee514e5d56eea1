"""Git control files a tool wrote are put out of the host's git's reach; real git is the
oracle: each way in is armed with hooks and an fsmonitor that leave a marker file,
the later host git commands run, and no marker may appear. Without `neutralise`
the same commands do leave markers (the oracle can fail)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from copilot_driver.harness.sandbox import git_controls
from copilot_driver.harness.sandbox.git_control_plan import WHY_REDIRECT, WHY_RUN
from copilot_driver.harness.sandbox.git_controls import neutralise, snapshot

GIT_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(where), *args], env=GIT_ENV, capture_output=True, text=True, check=False
    )


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "F").write_text("f\n")
    git(path, "add", "F")
    git(path, "commit", "-qm", "one")
    return path


def arm(git_dir: Path, marker: Path) -> None:
    """What a tool writes: hooks and an fsmonitor that would run on the host."""
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-checkout", "pre-commit", "post-commit"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}-{hook}\n")
        (hooks / hook).chmod(0o755)
    git(
        git_dir,
        "config",
        "--file",
        str(git_dir / "config"),
        "core.fsmonitor",
        f"touch {marker}-fsmonitor; false",
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return repository(tmp_path / "ws")


def markers(tmp_path: Path) -> list[str]:
    return sorted(path.name for path in tmp_path.glob("ran-*"))


# Each way in: what the tool does (in the workspace), and the host's later commands.
Way = Callable[[Path, Path], list[tuple[str, ...]]]


def nested_gitlink(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    nested = repository(ws / "nested")
    arm(nested / ".git", marker)
    git(ws, "add", "nested")
    git(ws, "commit", "-qm", "gitlink")
    return [
        ("status",),
        ("-C", "nested", "status"),
        ("-C", "nested", "commit", "-qm", "x", "--allow-empty"),
    ]


def new_module(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    repository(ws / "src-evil")
    (ws / ".git" / "modules").mkdir(exist_ok=True)
    git(
        ws,
        "clone",
        "-q",
        f"--separate-git-dir={ws / '.git' / 'modules' / 'evil'}",
        "src-evil",
        "evil",
    )
    arm(ws / ".git" / "modules" / "evil", marker)
    (ws / ".gitmodules").write_text('[submodule "evil"]\n\tpath = evil\n\turl = ./src-evil\n')
    git(ws, "add", ".gitmodules", "evil")
    git(ws, "commit", "-qm", "module")
    (ws / "evil" / ".git").unlink()  # only the modules folder and .gitmodules stay
    return [("-c", "protocol.file.allow=always", "submodule", "update", "--init"), ("status",)]


def git_file_elsewhere(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    (ws / "hidden").mkdir()
    git(ws, "init", "-q", f"--separate-git-dir={ws / 'hidden' / 'store'}", "sub")
    arm(ws / "hidden" / "store", marker)
    return [("-C", "sub", "status")]


def git_link(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    git(ws, "init", "-q", f"--separate-git-dir={ws / 'store'}", "tmp-checkout")
    arm(ws / "store", marker)
    (ws / "linked").mkdir()
    (ws / "linked" / ".git").symlink_to("../store")
    return [("-C", "linked", "status")]


def worktree_admin(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    git(ws, "worktree", "add", "-q", "wt")
    common = ws / "common"
    common.mkdir()
    for name in ("objects", "refs"):
        subprocess.run(["cp", "-r", str(ws / ".git" / name), str(common)], check=True)
    arm(common, marker)
    (ws / ".git" / "worktrees" / "wt" / "commondir").write_text(f"{common}\n")
    return [("-C", "wt", "status")]


def bare_folder(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    git(ws, "init", "-q", "--bare", "looks-bare")
    bare = ws / "looks-bare"
    git(bare, "config", "core.bare", "false")
    git(bare, "config", "core.worktree", "..")
    arm(bare, marker)
    return [("-C", "looks-bare", "status")]


def workspace_commondir(ws: Path, marker: Path) -> list[tuple[str, ...]]:
    common = ws / "common"
    common.mkdir()
    for name in ("objects", "refs", "config"):
        subprocess.run(["cp", "-r", str(ws / ".git" / name), str(common)], check=True)
    arm(common, marker)
    (ws / ".git" / "commondir").write_text(f"{common}\n")
    return [("status",)]


WAYS = {
    "nested-gitlink": nested_gitlink,
    "new-module": new_module,
    "git-file-elsewhere": git_file_elsewhere,
    "git-link": git_link,
    "worktree-admin": worktree_admin,
    "bare-folder": bare_folder,
    "workspace-commondir": workspace_commondir,
}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("neutralised", [True, False], ids=["neutralised", "oracle-can-fail"])
def test_no_later_host_git_command_runs_what_a_tool_wrote(
    workspace: Path, tmp_path: Path, way: str, neutralised: bool
) -> None:
    before = snapshot(workspace)
    later = WAYS[way](workspace, tmp_path / "ran")
    assert markers(tmp_path) == []  # nothing ran while the tool wrote it
    done = neutralise(before, workspace) if neutralised else []
    for command in later:
        git(workspace, *command)
    if neutralised:
        assert markers(tmp_path) == [], done
        assert done
        assert all(str(workspace) in sentence for sentence in done)
    else:
        assert markers(tmp_path) != []


def test_what_each_way_in_becomes(workspace: Path, tmp_path: Path) -> None:
    before = snapshot(workspace)
    for way in ("nested-gitlink", "new-module", "git-file-elsewhere", "worktree-admin"):
        WAYS[way](workspace, tmp_path / "ran")
    git(workspace, "init", "-q", "--bare", "looks-bare")
    done = neutralise(before, workspace)
    ws = workspace
    assert sorted(done) == sorted(
        [
            f"moved {ws / 'nested/.git'} to .git.sandboxed, written in the sandbox: {WHY_RUN}",
            f"moved {ws / 'src-evil/.git'} to .git.sandboxed, written in the sandbox: {WHY_RUN}",
            f"moved {ws / '.git/modules/evil'} to {ws / '.git/sandboxed/modules/evil'}, "
            f"written in the sandbox: {WHY_RUN}",
            f"moved {ws / 'sub/.git'} to .git.sandboxed, written in the sandbox: {WHY_RUN}",
            f"renamed {ws / 'hidden/store/HEAD'} to HEAD.sandboxed, so that git no longer "
            f"takes {ws / 'hidden/store'} for a repository, written in the sandbox: "
            f"{WHY_RUN}",
            f"moved {ws / 'wt/.git'} to .git.sandboxed, written in the sandbox: {WHY_RUN}",
            f"moved {ws / '.git/worktrees/wt'} to {ws / '.git/sandboxed/worktrees/wt'}, "
            f"written in the sandbox: {WHY_RUN}",
            f"renamed {ws / 'looks-bare/HEAD'} to HEAD.sandboxed, so that git no longer "
            f"takes {ws / 'looks-bare'} for a repository, written in the sandbox: "
            f"{WHY_RUN}",
        ]
    )
    assert (ws / "nested" / ".git.sandboxed" / "hooks" / "pre-commit").is_file()  # kept
    assert neutralise(snapshot(ws), ws) == []  # what was put away stays quiet


def test_what_was_there_and_unchanged_is_left_alone(workspace: Path, tmp_path: Path) -> None:
    upstream = repository(tmp_path / "upstream")
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "m")
    git(workspace, "commit", "-qm", "submodule")
    git(workspace, "worktree", "add", "-q", str(tmp_path / "wt"))
    repository(workspace / "vendored")
    (workspace / "linked").mkdir()
    (workspace / "linked" / ".git").symlink_to("../vendored/.git")
    before = snapshot(workspace)
    # Ordinary work in each: commits, a checkout, a branch.
    (workspace / "m" / "F").write_text("edited\n")
    git(workspace / "m", "commit", "-qam", "edit")
    git(tmp_path / "wt", "commit", "-q", "--allow-empty", "-m", "in the worktree")
    git(workspace / "vendored", "checkout", "-qb", "topic")
    git(workspace, "commit", "-qam", "bump")
    assert neutralise(before, workspace) == []
    assert git(workspace / "m", "status").returncode == 0


def test_a_changed_git_file_or_link_is_put_back(workspace: Path, tmp_path: Path) -> None:
    upstream = repository(tmp_path / "upstream")
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "m")
    repository(workspace / "vendored")
    (workspace / "linked").mkdir()
    (workspace / "linked" / ".git").symlink_to("../vendored/.git")
    original = (workspace / "m" / ".git").read_text()
    before = snapshot(workspace)
    git(workspace, "init", "-q", f"--separate-git-dir={workspace / 'hidden'}", "scratch")
    arm(workspace / "hidden", tmp_path / "ran")
    (workspace / "m" / ".git").write_text(f"gitdir: {workspace / 'hidden'}\n")
    (workspace / "linked" / ".git").unlink()
    (workspace / "linked" / ".git").symlink_to("../hidden")
    done = neutralise(before, workspace)
    assert (workspace / "m" / ".git").read_text() == original
    assert (workspace / "m" / ".git.sandboxed").read_text() == f"gitdir: {workspace / 'hidden'}\n"
    assert os.readlink(workspace / "linked" / ".git") == "../vendored/.git"
    assert sum("restored" in sentence for sentence in done) == 2, done
    git(workspace / "m", "status")
    git(workspace / "linked", "status")
    assert markers(tmp_path) == []


def test_a_changed_hook_of_a_nested_repository_puts_it_away(
    workspace: Path, tmp_path: Path
) -> None:
    nested = repository(workspace / "nested")
    before = snapshot(workspace)
    arm(nested / ".git", tmp_path / "ran")
    (done,) = neutralise(before, workspace)
    assert done.startswith(f"moved {nested / '.git'} to .git.sandboxed, changed in the sandbox")


def test_a_new_redirect_of_the_workspace_is_removed_a_changed_one_put_back(
    workspace: Path,
) -> None:
    git_dir = workspace / ".git"
    (git_dir / "config.worktree").write_text("[core]\n")
    before = snapshot(workspace)
    (git_dir / "commondir").mkdir()  # a folder or a link goes as a file does
    (git_dir / "commondir" / "inner").write_text("x")
    (git_dir / "config.worktree").write_text("[core]\n\thooksPath = /elsewhere\n")
    done = neutralise(before, workspace)
    assert not (git_dir / "commondir").exists()
    assert (git_dir / "config.worktree").read_text() == "[core]\n"
    assert (git_dir / "config.worktree.sandboxed").read_text().endswith("/elsewhere\n")
    assert done[0] == (f"removed {git_dir / 'commondir'}, written in the sandbox: {WHY_REDIRECT}")
    assert done[1].startswith(f"restored {git_dir / 'config.worktree'} as it was before the run")


def test_the_workspaces_own_git_folder_is_never_moved(workspace: Path, tmp_path: Path) -> None:
    before = snapshot(workspace)
    arm(workspace / ".git", tmp_path / "ran")  # what the sandbox's mounts forbid
    (done,) = neutralise(before, workspace)
    assert done.startswith(f"left {workspace / '.git'} in place although")
    assert (workspace / ".git" / "HEAD").is_file()


def test_a_folder_unreadable_after_the_run_is_opened_and_searched(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool can lock a folder (`chmod 111`) so that the search cannot list it while
    git can still enter it; the harness owns it, so it opens it. (As root nothing is
    unreadable, so the lock is simulated at the one listing call.)"""
    before = snapshot(workspace)
    locked = workspace / "locked"
    repository(locked / "inner")
    real_scan = git_controls._scan
    refused: list[Path] = []

    def scan(folder: Path) -> list[os.DirEntry[str]]:
        if folder == locked and not refused:
            refused.append(folder)
            raise PermissionError(13, "Permission denied")
        return real_scan(folder)

    monkeypatch.setattr(git_controls, "_scan", scan)
    done = neutralise(before, workspace)
    assert done[0] == (
        f"made {locked} readable to search it for git control files (it was unreadable "
        "after the run)"
    )
    assert done[1].startswith(f"moved {locked / 'inner/.git'} to .git.sandboxed")


def test_a_workspace_too_large_to_walk_is_said(workspace: Path) -> None:
    for number in range(20):
        (workspace / f"f{number}").write_text("")
    before = snapshot(workspace, limit=10)
    assert not before.complete
    (done,) = neutralise(before, workspace, limit=10)
    assert "more than 10 files and folders, so only part of it was searched" in done


def test_the_walk_skips_what_git_keeps_inside_a_repository(workspace: Path) -> None:
    """Objects and refs are never walked: only each git folder's code paths are read."""
    for number in range(50):
        (workspace / ".git" / "objects" / f"x{number}").mkdir()
    assert snapshot(workspace, limit=20).complete


def test_a_submodule_name_nested_too_deep_is_put_away_whole(workspace: Path) -> None:
    before = snapshot(workspace)
    deep = workspace / ".git" / "modules" / "/".join("abcdefghijk")
    deep.mkdir(parents=True)
    (deep / "config").write_text("[core]\n")
    (done,) = neutralise(before, workspace)
    assert "/.git/modules/a/b/c/d/e/f/g/h/i " in done
    assert not (
        workspace / ".git" / "modules" / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h" / "i"
    ).exists()
